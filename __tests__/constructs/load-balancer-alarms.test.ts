import { LoadBalancerAlarms } from "../../constructs/load-balancer-alarms";
import { synthesize } from "../support/synth";

describe("LoadBalancerAlarms", () => {
  const build = (topicArn?: string) =>
    synthesize(
      (scope) =>
        new LoadBalancerAlarms(scope, "alarms", {
          loadBalancerArnSuffix: "app/crm/1",
          targetGroupArnSuffix: "targetgroup/crm/2",
          nameTag: "S/W",
          topicArn,
        }),
    ).json.resource!.aws_cloudwatch_metric_alarm;
  const alarms = build();

  it("sums the hosts' and the load balancer's 5xx over 5 minutes, no traffic being no error", () => {
    expect(alarms.crm_load_balancer_5xx).toMatchObject({
      alarm_name: "S/W HTTP 5xx",
      threshold: 10,
      evaluation_periods: 1,
      treat_missing_data: "notBreaching",
      metric_query: [
        {
          id: "target",
          return_data: false,
          metric: {
            namespace: "AWS/ApplicationELB",
            metric_name: "HTTPCode_Target_5XX_Count",
            dimensions: { LoadBalancer: "app/crm/1" },
            period: 300,
            stat: "Sum",
          },
        },
        { id: "elb", return_data: false, metric: { metric_name: "HTTPCode_ELB_5XX_Count" } },
        { id: "errors", expression: "FILL(target, 0) + FILL(elb, 0)", return_data: true },
      ],
    });
  });

  it("fires on a host unhealthy in the target group for 10 minutes, and on 2 seconds of average response time", () => {
    expect(alarms.crm_load_balancer_unhealthy_hosts).toMatchObject({
      metric_name: "UnHealthyHostCount",
      dimensions: { LoadBalancer: "app/crm/1", TargetGroup: "targetgroup/crm/2" },
      statistic: "Maximum",
      period: 60,
      evaluation_periods: 10,
      threshold: 1,
    });
    expect(alarms.crm_load_balancer_response_time).toMatchObject({
      metric_name: "TargetResponseTime",
      statistic: "Average",
      period: 300,
      threshold: 2,
      comparison_operator: "GreaterThanOrEqualToThreshold",
    });
  });

  it("fires when the target group has had no healthy host for 5 minutes, a count nobody reports (no host registered) counting as none", () => {
    expect(alarms.crm_load_balancer_healthy_hosts).toMatchObject({
      alarm_name: "S/W HealthyHostCount",
      namespace: "AWS/ApplicationELB",
      metric_name: "HealthyHostCount",
      dimensions: { LoadBalancer: "app/crm/1", TargetGroup: "targetgroup/crm/2" },
      statistic: "Maximum",
      period: 60,
      evaluation_periods: 5,
      threshold: 1,
      comparison_operator: "LessThanThreshold",
      treat_missing_data: "breaching",
    });
    // The only alarm of the four that no traffic and no host set off: the others read missing data as not breaching.
    expect(
      Object.entries(alarms)
        .filter(([, alarm]) => alarm.treat_missing_data === "breaching")
        .map(([name]) => name),
    ).toEqual(["crm_load_balancer_healthy_hosts"]);
  });

  it("tells the topic when given one", () => {
    for (const alarm of Object.values(alarms)) expect(alarm.alarm_actions).toBeUndefined();
    for (const alarm of Object.values(build("arn:t")))
      expect([alarm.alarm_actions, alarm.ok_actions]).toEqual([["arn:t"], ["arn:t"]]);
  });
});
