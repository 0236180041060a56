import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { Construct } from "constructs";
import {
  HOST_METRIC_DIMENSIONS,
  HOST_METRIC_NAMESPACE,
  HOST_METRIC_PERIOD_SECONDS,
  HOST_METRICS,
  HOST_VOLUMES,
} from "../settings/host-metrics";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";

/** Thresholds of {@link HostHealthAlarms}. */
export interface HostHealthThresholds {
  /** Minutes in a row without a healthy answer (or without any report) before the app-health alarm fires. */
  readonly unhealthyMinutes: number;
  /** Percent of a file system in use at which its disk alarm fires. */
  readonly diskUsedPercent: number;
  /** Percent of memory in use at which the memory alarm fires. */
  readonly memoryUsedPercent: number;
  /** Minutes in a row above a disk or memory threshold before the alarm fires (a short peak is no alarm). */
  readonly usageMinutes: number;
}

/** Defaults: the app down 3 minutes (a restart takes less); a disk 90 % full; memory 90 % used for 5 minutes (swap is next). */
export const HOST_HEALTH_THRESHOLDS: HostHealthThresholds = {
  unhealthyMinutes: 3,
  diskUsedPercent: 90,
  memoryUsedPercent: 90,
  usageMinutes: 5,
};

/** Props of {@link HostHealthAlarms}. */
export interface HostHealthAlarmsProps {
  /** Id of the instance whose metrics the alarms watch. */
  readonly instanceId: string;
  /** `<stack_name>/<instance_name>`: the alarms' names start with it. */
  readonly nameTag: string;
  /**
   * SNS topic told when an alarm fires and when it clears (HostAlarms' topic).
   * @default - none: the alarms show in the console, and nobody is told
   */
  readonly topicArn?: string;
  /**
   * Whether the host has the data volume (a disk alarm for it too).
   * @default true
   */
  readonly dataVolume?: boolean;
  /**
   * @default HOST_HEALTH_THRESHOLDS
   */
  readonly thresholds?: Partial<HostHealthThresholds>;
  /**
   * Terraform name prefix (`aws_cloudwatch_metric_alarm.<name>_app_health`, `_root_disk`, `_data_disk`, `_memory`).
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * Alarms on what the host reports about itself every minute (settings/host-metrics.ts), which EC2's
 * status checks cannot see: the app not answering its health check (a missing report counts as unhealthy:
 * a host too sick to report is not well), the root and data file systems filling up, memory running out.
 * The disk and memory alarms treat a missing report as missing (the app-health alarm already tells of a
 * silent host). Each alarm costs $0.10 a month.
 */
export class HostHealthAlarms extends Construct {
  public readonly appHealth: CloudwatchMetricAlarm;
  public readonly rootDisk: CloudwatchMetricAlarm;
  public readonly dataDisk?: CloudwatchMetricAlarm;
  public readonly memory: CloudwatchMetricAlarm;

  constructor(scope: Construct, id: string, props: HostHealthAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_host";
    const limits = { ...HOST_HEALTH_THRESHOLDS, ...props.thresholds };
    const notify = props.topicArn !== undefined ? [props.topicArn] : undefined;
    const instance = { [HOST_METRIC_DIMENSIONS.instance]: props.instanceId };
    const alarm = (
      suffix: string,
      title: string,
      config: {
        description: string;
        metric: string;
        dimensions: Record<string, string>;
        statistic: string;
        minutes: number;
        threshold: number;
        comparison: string;
        missing: string;
      },
    ) => {
      const made = new CloudwatchMetricAlarm(this, suffix, {
        alarmName: awsName("alarmName", `${props.nameTag} ${title}`),
        alarmDescription: config.description,
        namespace: HOST_METRIC_NAMESPACE,
        metricName: config.metric,
        dimensions: config.dimensions,
        statistic: config.statistic,
        period: HOST_METRIC_PERIOD_SECONDS,
        evaluationPeriods: config.minutes,
        threshold: config.threshold,
        comparisonOperator: config.comparison,
        treatMissingData: config.missing,
        alarmActions: notify,
        okActions: notify,
      });
      nameElements(`${name}_${suffix}`, made);
      return made;
    };
    this.appHealth = alarm("app_health", "AppHealthy", {
      description: `${props.nameTag}'s app has not answered its health check (or the host has not reported) for ${limits.unhealthyMinutes} minutes`,
      metric: HOST_METRICS.appHealthy,
      dimensions: instance,
      statistic: "Minimum",
      minutes: limits.unhealthyMinutes,
      threshold: 1,
      comparison: "LessThanThreshold",
      missing: "breaching",
    });
    const disk = (volume: string, where: string) =>
      alarm(`${volume}_disk`, `DiskUsedPercent ${volume}`, {
        description: `${props.nameTag}'s ${where} is over ${limits.diskUsedPercent}% full`,
        metric: HOST_METRICS.diskUsedPercent,
        dimensions: { ...instance, [HOST_METRIC_DIMENSIONS.volume]: volume },
        statistic: "Maximum",
        minutes: limits.usageMinutes,
        threshold: limits.diskUsedPercent,
        comparison: "GreaterThanOrEqualToThreshold",
        missing: "missing",
      });
    this.rootDisk = disk(HOST_VOLUMES.root, "root file system");
    if (props.dataVolume ?? true) this.dataDisk = disk(HOST_VOLUMES.data, "data volume (the database)");
    this.memory = alarm("memory", "MemoryUsedPercent", {
      description: `${props.nameTag} has used over ${limits.memoryUsedPercent}% of its memory for ${limits.usageMinutes} minutes`,
      metric: HOST_METRICS.memoryUsedPercent,
      dimensions: instance,
      statistic: "Minimum",
      minutes: limits.usageMinutes,
      threshold: limits.memoryUsedPercent,
      comparison: "GreaterThanOrEqualToThreshold",
      missing: "missing",
    });
  }
}
