import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { awsName } from "./aws-names";
import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { SnsTopic } from "@cdktf/provider-aws/lib/sns-topic";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { AlarmTopic } from "./alarm-topic";

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
 * ({@link AlarmTopic}), which the stack's other alarms tell too. Each alarm costs $0.10 a month.
 */
export class HostAlarms extends Construct {
  /** The alarms, by metric. */
  public readonly alarms: Readonly<Record<StatusCheckAlarm["metric"], CloudwatchMetricAlarm>>;
  /** The topic of the notifications, when an e-mail address is given. */
  public readonly topic?: SnsTopic;
  /** The topic with its key and subscription, when an e-mail address is given. */
  public readonly alarmTopic?: AlarmTopic;

  constructor(scope: Construct, id: string, props: HostAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_host";
    const partition = new DataAwsPartition(this, "partition");
    nameElements(`${name}_alarms`, partition);
    const notify: string[] = [];
    if (props.email !== undefined) {
      this.alarmTopic = new AlarmTopic(this, "notifications", {
        email: props.email,
        nameTag: props.nameTag,
        partition: partition.partition,
        name: `${name}_alarms`,
      });
      this.topic = this.alarmTopic.topic;
      notify.push(this.topic.arn);
    }
    const alarms: Partial<Record<StatusCheckAlarm["metric"], CloudwatchMetricAlarm>> = {};
    for (const check of STATUS_CHECK_ALARMS) {
      const alarm = new CloudwatchMetricAlarm(this, check.suffix, {
        alarmName: awsName("alarmName", `${props.nameTag} ${check.metric}`),
        alarmDescription:
          `${check.action === "recover" ? "Recovers" : "Reboots"} ${props.nameTag} when its ` +
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
}
