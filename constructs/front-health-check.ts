import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { AwsProvider, AwsProviderDefaultTags } from "@cdktf/provider-aws/lib/provider";
import { Route53HealthCheck } from "@cdktf/provider-aws/lib/route53-health-check";
import { Construct } from "constructs";
import { HTTP_PORT, HTTPS_PORT } from "../settings/ports";
import { nameElements } from "./addresses";
import { AlarmTopic } from "./alarm-topic";
import { awsName } from "./aws-names";

/**
 * The one region where Route 53 publishes its health checks' metrics (Route 53 Developer Guide, "Monitoring health
 * check status and getting notifications"): an alarm on them, and the topic it tells, must be there.
 */
export const ROUTE53_METRICS_REGION = "us-east-1";

/** The regions Route 53 has health checkers in: what a health check's `regions` may name. */
export const ROUTE53_CHECKER_REGIONS = [
  "us-east-1",
  "us-west-1",
  "us-west-2",
  "eu-west-1",
  "ap-southeast-1",
  "ap-southeast-2",
  "ap-northeast-1",
  "sa-east-1",
] as const;

/** Route 53 takes no fewer checker regions than this. */
export const MIN_CHECKER_REGIONS = 3;

/**
 * How often and how strictly the front is checked: every 30 s from each checker (the standard interval; 10 s costs
 * more), a checker calls the front down after 3 failures in a row; the alarm fires when the check has been unhealthy
 * (Route 53 calls it so when fewer than 18 % of its checkers see it healthy) every minute of 3 in a row.
 */
export const FRONT_CHECK = { requestIntervalSeconds: 30, failureThreshold: 3, unhealthyMinutes: 3 } as const;

/** Props of {@link FrontHealthCheck}. */
export interface FrontHealthCheckProps {
  /**
   * The front's public address, checked over HTTP on port 80 when no `domainName` is given: the Elastic IP
   * (`{ ipAddress }`) or the load balancer's DNS name (`{ dnsName }`).
   */
  readonly address: { readonly ipAddress: string } | { readonly dnsName: string };
  /**
   * The site's domain name: checked over HTTPS on port 443 instead (Route 53 resolves it as a user does, and sends it
   * as the TLS server name, so the certificate the front picks is the user's; Route 53 does not validate it).
   * @default - none: HTTP on port 80 to `address`
   */
  readonly domainName?: string;
  /** Path asked (the settings' healthCheckPath): the check passes on an HTTP status of 2xx or 3xx. */
  readonly path: string;
  /** `<stack_name>/<instance_name>`: the alarm's name and the check's Name tag start with it. */
  readonly nameTag: string;
  /** The stack's region: where its alarm topic is. */
  readonly region: string;
  /**
   * The stack's alarm topic in `region`: the alarm tells it when `region` is us-east-1.
   * @default - none: nobody is told (unless `email` makes a topic in us-east-1)
   */
  readonly topicArn?: string;
  /**
   * E-mail address the alarm tells when `region` is not us-east-1, through a topic of its own there
   * ({@link AlarmTopic}: its own key and subscription, whose confirmation link AWS mails too).
   * @default - none
   */
  readonly email?: string;
  /**
   * Regions whose Route 53 checkers ask, at least {@link MIN_CHECKER_REGIONS} of {@link ROUTE53_CHECKER_REGIONS}.
   * @default - Route 53's default: checkers in every one of them
   */
  readonly regions?: readonly string[];
  /**
   * The user's tags, as the stack's provider merges them, for the us-east-1 provider's resources too.
   * @default - none
   */
  readonly defaultTags?: AwsProviderDefaultTags[];
  /**
   * Terraform name (`aws_route53_health_check.<name>`, `aws_cloudwatch_metric_alarm.<name>`, the us-east-1 topic's
   * `<type>.<name>_alarms`) and the us-east-1 provider's alias (`aws.<name>_us_east_1`).
   * @default "crm_front"
   */
  readonly name?: string;
}

/**
 * Checks the front end from outside as a user reaches it: a Route 53 health check asks the path from checkers in
 * several regions (HTTPS to the domain with one, else HTTP to the Elastic IP or the load balancer's name), and a
 * CloudWatch alarm on its `HealthCheckStatus` tells the alarm topic when it fails. What the host's own alarms cannot
 * see is seen here: a security group, Elastic IP, front, DNS record or certificate that keeps users out.
 *
 * Route 53's metrics are in us-east-1 only: the alarm is made there by a provider of its own (alias
 * `<name>_us_east_1`), and, when the stack is elsewhere and an e-mail is given, a topic with its key and
 * subscription there too. Cost: the check $0.50 a month (an AWS endpoint; HTTPS adds $1.00), the alarm $0.10, a
 * us-east-1 topic's key $1.00.
 */
export class FrontHealthCheck extends Construct {
  public readonly healthCheck: Route53HealthCheck;
  public readonly alarm: CloudwatchMetricAlarm;
  /** The provider of us-east-1, where the alarm (and its own topic) is. */
  public readonly metricsProvider: AwsProvider;
  /** The topic in us-east-1, when the stack is elsewhere and an e-mail is given. */
  public readonly alarmTopic?: AlarmTopic;

  constructor(scope: Construct, id: string, props: FrontHealthCheckProps) {
    super(scope, id);
    const name = props.name ?? "crm_front";
    const regions = props.regions === undefined ? undefined : [...props.regions];
    if (regions !== undefined) {
      const unknown = regions.filter((region) => !(ROUTE53_CHECKER_REGIONS as readonly string[]).includes(region));
      if (unknown.length > 0 || new Set(regions).size < MIN_CHECKER_REGIONS)
        throw new Error(
          `FrontHealthCheck regions ${JSON.stringify(regions)}: expected at least ${MIN_CHECKER_REGIONS} different ` +
            `Route 53 checker regions of ${ROUTE53_CHECKER_REGIONS.join(", ")}`,
        );
    }
    const https = props.domainName !== undefined;
    const target =
      props.domainName !== undefined
        ? { fqdn: props.domainName }
        : "ipAddress" in props.address
          ? { ipAddress: props.address.ipAddress }
          : { fqdn: props.address.dnsName };
    this.healthCheck = new Route53HealthCheck(this, "check", {
      ...target,
      type: https ? "HTTPS" : "HTTP",
      port: https ? HTTPS_PORT : HTTP_PORT,
      enableSni: https ? true : undefined,
      resourcePath: props.path,
      requestInterval: FRONT_CHECK.requestIntervalSeconds,
      failureThreshold: FRONT_CHECK.failureThreshold,
      regions,
      tags: { Name: `${props.nameTag}/front` },
    });
    nameElements(name, this.healthCheck);

    this.metricsProvider = new AwsProvider(this, "us_east_1", {
      alias: `${name}_us_east_1`,
      region: ROUTE53_METRICS_REGION,
      defaultTags: props.defaultTags,
    });
    let topicArn = props.region === ROUTE53_METRICS_REGION ? props.topicArn : undefined;
    if (props.region !== ROUTE53_METRICS_REGION && props.email !== undefined) {
      this.alarmTopic = new AlarmTopic(this, "notifications", {
        email: props.email,
        nameTag: `${props.nameTag}/front`,
        name: `${name}_alarms`,
        provider: this.metricsProvider,
      });
      topicArn = this.alarmTopic.arn;
    }
    const notify = topicArn !== undefined ? [topicArn] : undefined;
    const where = https ? `https://${props.domainName}${props.path}` : `the front's port ${HTTP_PORT}, ${props.path}`;
    this.alarm = new CloudwatchMetricAlarm(this, "alarm", {
      provider: this.metricsProvider,
      alarmName: awsName("alarmName", `${props.nameTag} HealthCheckStatus front`),
      alarmDescription:
        `${props.nameTag}: Route 53's checkers have not reached ${where} (HTTP 2xx or 3xx) ` +
        `for ${FRONT_CHECK.unhealthyMinutes} minutes`,
      namespace: "AWS/Route53",
      metricName: "HealthCheckStatus",
      dimensions: { HealthCheckId: this.healthCheck.id },
      statistic: "Minimum",
      period: 60,
      evaluationPeriods: FRONT_CHECK.unhealthyMinutes,
      threshold: 1,
      comparisonOperator: "LessThanThreshold",
      treatMissingData: "missing",
      alarmActions: notify,
      okActions: notify,
    });
    nameElements(name, this.alarm);
  }
}
