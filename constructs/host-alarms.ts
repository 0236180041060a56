import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { awsName } from "./aws-names";
import { DataAwsCallerIdentity } from "@cdktf/provider-aws/lib/data-aws-caller-identity";
import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { KmsKey } from "@cdktf/provider-aws/lib/kms-key";
import { SnsTopic } from "@cdktf/provider-aws/lib/sns-topic";
import { SnsTopicSubscription } from "@cdktf/provider-aws/lib/sns-topic-subscription";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { POLICY_VERSION } from "./constants";

/** One status-check alarm: its metric, what EC2 does when it fires, and after how many failed minutes. */
export interface StatusCheckAlarm {
  readonly metric: "StatusCheckFailed_System" | "StatusCheckFailed_Instance";
  /** The EC2 alarm action (`arn:<partition>:automate:<region>:ec2:<action>`). */
  readonly action: "recover" | "reboot";
  readonly minutes: number;
  /** Terraform name suffix of the alarm. */
  readonly suffix: string;
}

/**
 * The host's two status-check alarms, as the EC2 user guide sets them up: a failed system check
 * (AWS's hardware or network) moves the instance to another host (`recover`: same id, addresses and
 * volumes) after 2 minutes; a failed instance check (the guest: kernel, memory, network set-up)
 * reboots it after 3. The checks are published every minute at no charge, whatever `monitoring` is.
 */
export const STATUS_CHECK_ALARMS: readonly StatusCheckAlarm[] = [
  { metric: "StatusCheckFailed_System", action: "recover", minutes: 2, suffix: "system_check" },
  { metric: "StatusCheckFailed_Instance", action: "reboot", minutes: 3, suffix: "instance_check" },
];

/**
 * The key policy statement that lets CloudWatch publish alarms to a topic encrypted with the key, in AWS's
 * documented form: "Enable compatibility between event sources from AWS services and encrypted topics",
 * Amazon SNS Developer Guide, https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 * (the service principal, `kms:GenerateDataKey*` and `kms:Decrypt`, `"Resource": "*"`, no condition; the same
 * statement in the AWS Knowledge Center's https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns).
 * No condition: AWS documents none for this statement, and one that the request from CloudWatch does not
 * carry (an earlier `aws:SourceAccount` here) would deny it, and every notification would be dropped
 * silently. Who may publish is the topic's policy's to say (SNS's default one: this account's sources only);
 * the key encrypts this topic and nothing else.
 */
export const CLOUDWATCH_TOPIC_KEY_STATEMENT = {
  Effect: "Allow",
  Principal: { Service: "cloudwatch.amazonaws.com" },
  Action: ["kms:GenerateDataKey*", "kms:Decrypt"],
  Resource: "*",
} as const;

/** Props of {@link HostAlarms}. */
export interface HostAlarmsProps {
  /** Id of the instance the alarms watch and act on. */
  readonly instanceId: string;
  /** AWS region of the instance (for the alarm actions' ARNs). */
  readonly region: string;
  /** `<stack_name>/<instance_name>`: the alarms' names start with it. */
  readonly nameTag: string;
  /**
   * E-mail address told through an SNS topic when an alarm fires and when it clears.
   * @default - no topic: the alarms act, and nobody is told
   */
  readonly email?: string;
  /**
   * Terraform name prefix (`aws_cloudwatch_metric_alarm.<name>_system_check`, `aws_sns_topic.<name>_alarms`, …).
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * Tells someone when the host is down, and repairs what AWS can: the {@link STATUS_CHECK_ALARMS}
 * with their EC2 actions, and an SNS topic with an e-mail subscription when an address is given
 * (AWS mails a confirmation link first; until it is followed, nothing is delivered). Each alarm
 * costs $0.10 a month; e-mail notifications are within SNS's free 1,000 a month.
 */
export class HostAlarms extends Construct {
  /** The alarms, by metric. */
  public readonly alarms: Readonly<Record<StatusCheckAlarm["metric"], CloudwatchMetricAlarm>>;
  /** The topic of the notifications, when an e-mail address is given. */
  public readonly topic?: SnsTopic;

  constructor(scope: Construct, id: string, props: HostAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_host";
    const partition = new DataAwsPartition(this, "partition");
    nameElements(`${name}_alarms`, partition);
    const notify: string[] = [];
    if (props.email !== undefined) {
      this.topic = new SnsTopic(this, "topic", {
        name: awsName("snsTopicName", `${props.nameTag.replace(/[^A-Za-z0-9_-]/g, "-")}-alarms`),
        kmsMasterKeyId: this.topicKey(`${name}_alarms`, partition.partition).arn,
      });
      nameElements(`${name}_alarms`, this.topic);
      const subscription = new SnsTopicSubscription(this, "email", { topicArn: this.topic.arn, protocol: "email", endpoint: props.email });
      nameElements(`${name}_alarms`, subscription);
      notify.push(this.topic.arn);
    }
    const alarms: Partial<Record<StatusCheckAlarm["metric"], CloudwatchMetricAlarm>> = {};
    for (const check of STATUS_CHECK_ALARMS) {
      const alarm = new CloudwatchMetricAlarm(this, check.suffix, {
        alarmName: awsName("alarmName", `${props.nameTag} ${check.metric}`),
        alarmDescription: `${check.action === "recover" ? "Recovers" : "Reboots"} ${props.nameTag} when its ` +
          `${check.metric === "StatusCheckFailed_System" ? "system" : "instance"} status check fails ${check.minutes} minutes in a row`,
        namespace: "AWS/EC2",
        metricName: check.metric,
        dimensions: { InstanceId: props.instanceId },
        statistic: "Maximum",
        period: 60,
        evaluationPeriods: check.minutes,
        threshold: 1,
        comparisonOperator: "GreaterThanOrEqualToThreshold",
        alarmActions: [`arn:${partition.partition}:automate:${props.region}:ec2:${check.action}`, ...notify],
        okActions: notify.length > 0 ? notify : undefined,
      });
      nameElements(`${name}_${check.suffix}`, alarm);
      alarms[check.metric] = alarm;
    }
    this.alarms = alarms as Record<StatusCheckAlarm["metric"], CloudwatchMetricAlarm>;
  }

  /**
   * The key that encrypts the topic: a key of the account's own, as CloudWatch cannot publish to a
   * topic under the AWS managed key (whose policy cannot grant it). The account administers it;
   * CloudWatch may use it to publish ({@link CLOUDWATCH_TOPIC_KEY_STATEMENT}). $1 a month, rotated yearly.
   */
  private topicKey(name: string, partition: string): KmsKey {
    const account = new DataAwsCallerIdentity(this, "account");
    nameElements(name, account);
    const key = new KmsKey(this, "key", {
      description: "Encrypts the alarm notifications of the CRM host (SNS)",
      enableKeyRotation: true,
      deletionWindowInDays: 7,
      policy: JSON.stringify({
        Version: POLICY_VERSION,
        Statement: [
          {
            Sid: "AccountAdministers",
            Effect: "Allow",
            Principal: { AWS: `arn:${partition}:iam::${account.accountId}:root` },
            Action: "kms:*",
            Resource: "*",
          },
          { Sid: "CloudWatchPublishesAlarms", ...CLOUDWATCH_TOPIC_KEY_STATEMENT },
        ],
      }),
    });
    nameElements(name, key);
    return key;
  }
}
