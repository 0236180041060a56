import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";

/** Thresholds of {@link LoadBalancerAlarms}. */
export interface LoadBalancerThresholds {
  /** 5xx answers (of the hosts and of the load balancer itself) in 5 minutes at which the 5xx alarm fires. */
  readonly errorsPerFiveMinutes: number;
  /** Average time to the hosts' first byte, in seconds, over 5 minutes, at which the response-time alarm fires. */
  readonly responseTimeSeconds: number;
  /** Minutes in a row with an unhealthy host before the unhealthy-hosts alarm fires (a host being replaced is one for a while). */
  readonly unhealthyMinutes: number;
  /**
   * Minutes in a row without a healthy host before the no-healthy-host alarm fires: the site is down. A new
   * stack's first host answers the health check within about 3 minutes of its launch.
   */
  readonly noHealthyHostMinutes: number;
}

/** Defaults: 10 server errors in 5 minutes, 2 seconds on average, an unhealthy host for 10 minutes, no healthy host for 5. */
export const LOAD_BALANCER_THRESHOLDS: LoadBalancerThresholds = {
  errorsPerFiveMinutes: 10,
  responseTimeSeconds: 2,
  unhealthyMinutes: 10,
  noHealthyHostMinutes: 5,
};

/** Props of {@link LoadBalancerAlarms}. */
export interface LoadBalancerAlarmsProps {
  /** The load balancer's `arn_suffix` (CloudWatch's LoadBalancer dimension). */
  readonly loadBalancerArnSuffix: string;
  /** The target group's `arn_suffix` (CloudWatch's TargetGroup dimension). */
  readonly targetGroupArnSuffix: string;
  /** `<stack_name>/<instance_name>`: the alarms' names start with it. */
  readonly nameTag: string;
  /**
   * SNS topic told when an alarm fires and when it clears.
   * @default - none: the alarms show in the console
   */
  readonly topicArn?: string;
  /** @default LOAD_BALANCER_THRESHOLDS */
  readonly thresholds?: Partial<LoadBalancerThresholds>;
  /**
   * Terraform name prefix (`aws_cloudwatch_metric_alarm.<name>_5xx`, `_unhealthy_hosts`, `_healthy_hosts`, `_response_time`).
   * @default "crm_load_balancer"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's alarms on its Application Load Balancer (AWS/ApplicationELB): server errors
 * (the hosts' 5xx and the load balancer's own, such as 502 and 503 when no host answers, summed by metric
 * math), unhealthy hosts in the target group, no healthy host in it, and a slow app. No traffic is no error:
 * missing data is "not breaching", but for the healthy-host count, where it is "breaching": with no host
 * registered (a group scaled to zero, hosts that never came up) nothing may report a count at all, and a site
 * with no host known to be healthy is down. Each alarm costs $0.10 a month (the 5xx alarm, of two metrics, $0.20).
 */
export class LoadBalancerAlarms extends Construct {
  public readonly serverErrors: CloudwatchMetricAlarm;
  public readonly unhealthyHosts: CloudwatchMetricAlarm;
  public readonly healthyHosts: CloudwatchMetricAlarm;
  public readonly responseTime: CloudwatchMetricAlarm;

  constructor(scope: Construct, id: string, props: LoadBalancerAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_load_balancer";
    const limits = { ...LOAD_BALANCER_THRESHOLDS, ...props.thresholds };
    const notify = props.topicArn !== undefined ? [props.topicArn] : undefined;
    const actions = { alarmActions: notify, okActions: notify };
    const balancer = { LoadBalancer: props.loadBalancerArnSuffix };
    const target = { ...balancer, TargetGroup: props.targetGroupArnSuffix };
    const count = (id: string, metric: string) => ({
      id,
      returnData: false,
      metric: { namespace: "AWS/ApplicationELB", metricName: metric, dimensions: balancer, period: 300, stat: "Sum" },
    });

    this.serverErrors = new CloudwatchMetricAlarm(this, "5xx", {
      alarmName: awsName("alarmName", `${props.nameTag} HTTP 5xx`),
      alarmDescription: `${props.nameTag} answered ${limits.errorsPerFiveMinutes} or more server errors (5xx, of the hosts or of the load balancer) in 5 minutes`,
      metricQuery: [
        count("target", "HTTPCode_Target_5XX_Count"),
        count("elb", "HTTPCode_ELB_5XX_Count"),
        { id: "errors", expression: "FILL(target, 0) + FILL(elb, 0)", label: "5xx answers", returnData: true },
      ],
      evaluationPeriods: 1,
      threshold: limits.errorsPerFiveMinutes,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "notBreaching",
      ...actions,
    });
    this.unhealthyHosts = new CloudwatchMetricAlarm(this, "unhealthy_hosts", {
      alarmName: awsName("alarmName", `${props.nameTag} UnHealthyHostCount`),
      alarmDescription: `A host of ${props.nameTag} has failed the load balancer's health check for ${limits.unhealthyMinutes} minutes`,
      namespace: "AWS/ApplicationELB",
      metricName: "UnHealthyHostCount",
      dimensions: target,
      statistic: "Maximum",
      period: 60,
      evaluationPeriods: limits.unhealthyMinutes,
      threshold: 1,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "notBreaching",
      ...actions,
    });
    this.healthyHosts = new CloudwatchMetricAlarm(this, "healthy_hosts", {
      alarmName: awsName("alarmName", `${props.nameTag} HealthyHostCount`),
      alarmDescription: `${props.nameTag} has had no healthy host in the load balancer's target group for ${limits.noHealthyHostMinutes} minutes`,
      namespace: "AWS/ApplicationELB",
      metricName: "HealthyHostCount",
      dimensions: target,
      statistic: "Maximum",
      period: 60,
      evaluationPeriods: limits.noHealthyHostMinutes,
      threshold: 1,
      comparisonOperator: "LessThanThreshold",
      treatMissingData: "breaching",
      ...actions,
    });
    this.responseTime = new CloudwatchMetricAlarm(this, "response_time", {
      alarmName: awsName("alarmName", `${props.nameTag} TargetResponseTime`),
      alarmDescription: `${props.nameTag}'s hosts took ${limits.responseTimeSeconds} seconds or more on average to answer, over 5 minutes`,
      namespace: "AWS/ApplicationELB",
      metricName: "TargetResponseTime",
      dimensions: balancer,
      statistic: "Average",
      period: 300,
      evaluationPeriods: 1,
      threshold: limits.responseTimeSeconds,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "notBreaching",
      ...actions,
    });
    nameElements(`${name}_5xx`, this.serverErrors);
    nameElements(`${name}_unhealthy_hosts`, this.unhealthyHosts);
    nameElements(`${name}_healthy_hosts`, this.healthyHosts);
    nameElements(`${name}_response_time`, this.responseTime);
  }
}
