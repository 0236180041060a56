import { FrontHealthCheck, FrontHealthCheckProps } from "../../constructs/front-health-check";
import { only, synthesize } from "../support/synth";

const BASE: FrontHealthCheckProps = {
  address: { ipAddress: "${aws_eip.crm_host.public_ip}" },
  path: "/health",
  nameTag: "Stack/Web",
  region: "us-east-1",
};

const synth = (props: Partial<FrontHealthCheckProps>) =>
  synthesize((scope) => new FrontHealthCheck(scope, "front", { ...BASE, ...props })).json;

describe("FrontHealthCheck", () => {
  it("checks the Elastic IP over HTTP on port 80 at the path, from Route 53's default checkers", () => {
    const json = synth({});
    expect(json.resource?.aws_route53_health_check).toEqual({
      crm_front: {
        ip_address: "${aws_eip.crm_host.public_ip}",
        type: "HTTP",
        port: 80,
        resource_path: "/health",
        request_interval: 30,
        failure_threshold: 3,
        tags: { Name: "Stack/Web/front" },
      },
    });
  });

  it("checks the domain over HTTPS on port 443 with SNI, and a load balancer's name over HTTP", () => {
    const domain = only(synth({ domainName: "crm.example.com" }).resource, "aws_route53_health_check");
    expect(domain).toMatchObject({ fqdn: "crm.example.com", type: "HTTPS", port: 443, enable_sni: true });
    expect(domain.ip_address).toBeUndefined();
    const balancer = only(
      synth({ address: { dnsName: "${aws_lb.crm_hosts.dns_name}" } }).resource,
      "aws_route53_health_check",
    );
    expect(balancer).toMatchObject({ fqdn: "${aws_lb.crm_hosts.dns_name}", type: "HTTP", port: 80 });
    expect(balancer.enable_sni).toBeUndefined();
  });

  it("takes a list of at least 3 checker regions, and refuses fewer or unknown ones", () => {
    const regions = ["us-east-1", "eu-west-1", "ap-southeast-2"];
    expect(only(synth({ regions }).resource, "aws_route53_health_check").regions).toEqual(regions);
    expect(() => synth({ regions: ["us-east-1", "eu-west-1"] })).toThrow(/at least 3 different Route 53 checker/);
    expect(() => synth({ regions: ["us-east-1", "eu-west-1", "eu-central-1"] })).toThrow(/"eu-central-1"/);
  });

  it("alarms in us-east-1 (its own provider) on HealthCheckStatus < 1, telling the stack's topic there", () => {
    const json = synth({ topicArn: "${aws_sns_topic.crm_host_alarms.arn}" });
    expect(json.provider?.aws).toEqual([{ alias: "crm_front_us_east_1", region: "us-east-1" }]);
    const alarm = json.resource?.aws_cloudwatch_metric_alarm?.crm_front;
    expect(alarm).toMatchObject({
      provider: "aws.crm_front_us_east_1",
      alarm_name: "Stack/Web HealthCheckStatus front",
      namespace: "AWS/Route53",
      metric_name: "HealthCheckStatus",
      dimensions: { HealthCheckId: "${aws_route53_health_check.crm_front.id}" },
      statistic: "Minimum",
      period: 60,
      evaluation_periods: 3,
      threshold: 1,
      comparison_operator: "LessThanThreshold",
      alarm_actions: ["${aws_sns_topic.crm_host_alarms.arn}"],
      ok_actions: ["${aws_sns_topic.crm_host_alarms.arn}"],
    });
    expect(json.resource?.aws_sns_topic).toBeUndefined();
  });

  it("outside us-east-1, tells a topic of its own in us-east-1 (key, e-mail subscription), never the stack's", () => {
    const json = synth({
      region: "eu-west-1",
      topicArn: "${aws_sns_topic.crm_host_alarms.arn}",
      email: "ops@example.com",
      defaultTags: [{ tags: { team: "crm" } }],
    });
    expect(json.provider?.aws).toEqual([
      { alias: "crm_front_us_east_1", region: "us-east-1", default_tags: [{ tags: { team: "crm" } }] },
    ]);
    const inUsEast1 = { provider: "aws.crm_front_us_east_1" };
    expect(json.resource?.aws_sns_topic?.crm_front_alarms).toMatchObject({
      ...inUsEast1,
      name: "Stack-Web-front-alarms",
    });
    expect(json.resource?.aws_kms_key?.crm_front_alarms).toMatchObject(inUsEast1);
    expect(json.resource?.aws_sns_topic_subscription?.crm_front_alarms).toMatchObject({
      ...inUsEast1,
      protocol: "email",
      endpoint: "ops@example.com",
    });
    expect(json.data?.aws_caller_identity?.crm_front_alarms).toMatchObject(inUsEast1);
    expect(json.resource?.aws_cloudwatch_metric_alarm?.crm_front.alarm_actions).toEqual([
      "${aws_sns_topic.crm_front_alarms.arn}",
    ]);
    // Without an e-mail, nobody is told: the stack's topic in another region cannot be.
    const silent = synth({ region: "eu-west-1", topicArn: "${aws_sns_topic.crm_host_alarms.arn}" });
    expect(silent.resource?.aws_cloudwatch_metric_alarm?.crm_front.alarm_actions).toBeUndefined();
    expect(silent.resource?.aws_sns_topic).toBeUndefined();
  });
});
