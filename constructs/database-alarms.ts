import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";

/** Thresholds of {@link DatabaseAlarms}. */
export interface DatabaseThresholds {
  /** Free storage, in GiB, under which the storage alarm fires (storage autoscaling grows it, up to its maximum). */
  readonly freeStorageGib: number;
  /** Average CPU, in percent, over 15 minutes, at which the CPU alarm fires (a burstable class then spends its credits). */
  readonly cpuPercent: number;
  /** Connections at which the connections alarm fires (db.t4g.micro's max_connections is about 80). */
  readonly connections: number;
}

/** Defaults: 2 GiB free (a tenth of the 20 GiB default), 80 % CPU, 60 connections. */
export const DATABASE_THRESHOLDS: DatabaseThresholds = { freeStorageGib: 2, cpuPercent: 80, connections: 60 };

/** Props of {@link DatabaseAlarms}. */
export interface DatabaseAlarmsProps {
  /** The RDS instance's identifier (CloudWatch's DBInstanceIdentifier dimension). */
  readonly dbInstanceIdentifier: string;
  /** `<stack_name>/<instance_name>`: the alarms' names start with it. */
  readonly nameTag: string;
  /**
   * SNS topic told when an alarm fires and when it clears.
   * @default - none: the alarms show in the console
   */
  readonly topicArn?: string;
  /** @default DATABASE_THRESHOLDS */
  readonly thresholds?: Partial<DatabaseThresholds>;
  /**
   * Terraform name prefix (`aws_cloudwatch_metric_alarm.<name>_free_storage`, `_cpu`, `_connections`).
   * @default "crm_database"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's alarms on its RDS for MariaDB instance (AWS/RDS, published every minute at no
 * charge): storage running out, the CPU busy for a quarter of an hour, connections nearing the class's
 * limit. A missing datapoint means RDS is not reporting, which is breaching for none of them but the
 * storage's. Each alarm costs $0.10 a month.
 */
export class DatabaseAlarms extends Construct {
  public readonly freeStorage: CloudwatchMetricAlarm;
  public readonly cpu: CloudwatchMetricAlarm;
  public readonly connections: CloudwatchMetricAlarm;

  constructor(scope: Construct, id: string, props: DatabaseAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_database";
    const limits = { ...DATABASE_THRESHOLDS, ...props.thresholds };
    const notify = props.topicArn !== undefined ? [props.topicArn] : undefined;
    const common = {
      namespace: "AWS/RDS", dimensions: { DBInstanceIdentifier: props.dbInstanceIdentifier }, alarmActions: notify, okActions: notify,
    };
    this.freeStorage = new CloudwatchMetricAlarm(this, "free_storage", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database FreeStorageSpace`),
      alarmDescription: `${props.nameTag}'s database has less than ${limits.freeStorageGib} GiB of free storage`,
      metricName: "FreeStorageSpace", statistic: "Minimum", period: 300, evaluationPeriods: 1,
      threshold: limits.freeStorageGib * 1024 ** 3, comparisonOperator: "LessThanThreshold", treatMissingData: "breaching",
    });
    this.cpu = new CloudwatchMetricAlarm(this, "cpu", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database CPUUtilization`),
      alarmDescription: `${props.nameTag}'s database has used ${limits.cpuPercent}% or more of its CPU for 15 minutes`,
      metricName: "CPUUtilization", statistic: "Average", period: 300, evaluationPeriods: 3,
      threshold: limits.cpuPercent, comparisonOperator: "GreaterThanOrEqualToThreshold", treatMissingData: "missing",
    });
    this.connections = new CloudwatchMetricAlarm(this, "connections", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database DatabaseConnections`),
      alarmDescription: `${props.nameTag}'s database has had ${limits.connections} or more connections for 5 minutes`,
      metricName: "DatabaseConnections", statistic: "Minimum", period: 60, evaluationPeriods: 5,
      threshold: limits.connections, comparisonOperator: "GreaterThanOrEqualToThreshold", treatMissingData: "missing",
    });
    nameElements(`${name}_free_storage`, this.freeStorage);
    nameElements(`${name}_cpu`, this.cpu);
    nameElements(`${name}_connections`, this.connections);
  }
}
