import { CloudwatchMetricAlarm } from "@cdktf/provider-aws/lib/cloudwatch-metric-alarm";
import { DataAwsEc2InstanceType } from "@cdktf/provider-aws/lib/data-aws-ec2-instance-type";
import { Fn, Op, Token } from "cdktf";
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
  /**
   * Freeable memory, in percent of the instance class's memory, under which (on average for 15 minutes) the
   * memory alarm fires. RDS for MariaDB's default parameter group gives three quarters of the class's memory
   * to the InnoDB buffer pool, so a healthy instance runs with well under a quarter free; a tenth (about
   * 100 MiB on db.t4g.micro) is where connections' buffers start to push it into swap.
   */
  readonly freeMemoryPercent: number;
}

/** Defaults: 2 GiB free (a tenth of the 20 GiB default), 80 % CPU, 60 connections, a tenth of the memory free. */
export const DATABASE_THRESHOLDS: DatabaseThresholds = {
  freeStorageGib: 2,
  cpuPercent: 80,
  connections: 60,
  freeMemoryPercent: 10,
};

/** Props of {@link DatabaseAlarms}. */
export interface DatabaseAlarmsProps {
  /** The RDS instance's identifier (CloudWatch's DBInstanceIdentifier dimension). */
  readonly dbInstanceIdentifier: string;
  /**
   * The instance's class, such as db.t4g.micro (a string or an expression): the memory alarm's threshold is
   * a share of its memory, read from EC2's instance type of the same name (t4g.micro: RDS's classes are
   * EC2's types, with the same memory).
   */
  readonly instanceClass: string;
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
   * Terraform name prefix (`aws_cloudwatch_metric_alarm.<name>_free_storage`, `_cpu`, `_connections`, `_free_memory`;
   * `data.aws_ec2_instance_type.<name>_class`).
   * @default "crm_database"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's alarms on its RDS for MariaDB instance (AWS/RDS, published every minute at no
 * charge): storage running out, the CPU busy for a quarter of an hour, connections nearing the class's
 * limit, freeable memory running low for a quarter of an hour. A missing datapoint means RDS is not
 * reporting, which is breaching for none of them but the storage's. Each alarm costs $0.10 a month.
 */
export class DatabaseAlarms extends Construct {
  public readonly freeStorage: CloudwatchMetricAlarm;
  public readonly cpu: CloudwatchMetricAlarm;
  public readonly connections: CloudwatchMetricAlarm;
  public readonly freeMemory: CloudwatchMetricAlarm;
  /** EC2's instance type of the class's name, whose `memory_size` (MiB) the memory alarm's threshold is a share of. */
  public readonly instanceType: DataAwsEc2InstanceType;

  constructor(scope: Construct, id: string, props: DatabaseAlarmsProps) {
    super(scope, id);
    const name = props.name ?? "crm_database";
    const limits = { ...DATABASE_THRESHOLDS, ...props.thresholds };
    const notify = props.topicArn !== undefined ? [props.topicArn] : undefined;
    const common = {
      namespace: "AWS/RDS",
      dimensions: { DBInstanceIdentifier: props.dbInstanceIdentifier },
      alarmActions: notify,
      okActions: notify,
    };
    this.freeStorage = new CloudwatchMetricAlarm(this, "free_storage", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database FreeStorageSpace`),
      alarmDescription: `${props.nameTag}'s database has less than ${limits.freeStorageGib} GiB of free storage`,
      metricName: "FreeStorageSpace",
      statistic: "Minimum",
      period: 300,
      evaluationPeriods: 1,
      threshold: limits.freeStorageGib * 1024 ** 3,
      comparisonOperator: "LessThanThreshold",
      treatMissingData: "breaching",
    });
    this.cpu = new CloudwatchMetricAlarm(this, "cpu", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database CPUUtilization`),
      alarmDescription: `${props.nameTag}'s database has used ${limits.cpuPercent}% or more of its CPU for 15 minutes`,
      metricName: "CPUUtilization",
      statistic: "Average",
      period: 300,
      evaluationPeriods: 3,
      threshold: limits.cpuPercent,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "missing",
    });
    this.connections = new CloudwatchMetricAlarm(this, "connections", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database DatabaseConnections`),
      alarmDescription: `${props.nameTag}'s database has had ${limits.connections} or more connections for 5 minutes`,
      metricName: "DatabaseConnections",
      statistic: "Minimum",
      period: 60,
      evaluationPeriods: 5,
      threshold: limits.connections,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      treatMissingData: "missing",
    });
    this.instanceType = new DataAwsEc2InstanceType(this, "class", {
      instanceType: Fn.trimprefix(props.instanceClass, "db."),
    });
    nameElements(`${name}_class`, this.instanceType);
    this.freeMemory = new CloudwatchMetricAlarm(this, "free_memory", {
      ...common,
      alarmName: awsName("alarmName", `${props.nameTag} database FreeableMemory`),
      alarmDescription: `${props.nameTag}'s database has had less than ${limits.freeMemoryPercent}% of its memory freeable for 15 minutes`,
      metricName: "FreeableMemory",
      statistic: "Average",
      period: 300,
      evaluationPeriods: 3,
      // Whole bytes: a fraction could come back from CloudWatch rounded otherwise than Terraform computed it.
      threshold: Fn.floor(
        Token.asNumber(Op.mul(this.instanceType.memorySize, (1024 * 1024 * limits.freeMemoryPercent) / 100)),
      ),
      comparisonOperator: "LessThanThreshold",
      treatMissingData: "missing",
    });
    nameElements(`${name}_free_storage`, this.freeStorage);
    nameElements(`${name}_cpu`, this.cpu);
    nameElements(`${name}_connections`, this.connections);
    nameElements(`${name}_free_memory`, this.freeMemory);
  }
}
