import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";
import { conditionRule, stackVariable } from "./variable-rules";

/** The retention periods CloudWatch Logs takes, in days (PutRetentionPolicy). */
export const LOG_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653] as const;

/**
 * Days the hosts' logs are kept when `log_retention_days` is not set: a year, to look back at an incident or
 * an audit line long after; a small host's logs stored a year cost cents (storage, not ingestion, grows with it).
 */
export const DEFAULT_LOG_RETENTION_DAYS = 365;

/** Props of {@link HostLogGroup}. */
export interface HostLogGroupProps {
  /** The log group's name (settings/host-metrics.ts, hostLogGroupName). */
  readonly logGroupName: string;
  /** `<stack_name>/<instance_name>`: the group's Name tag. */
  readonly nameTag: string;
  /**
   * Days kept when `log_retention_days` is not set.
   * @default DEFAULT_LOG_RETENTION_DAYS (365)
   */
  readonly defaultRetentionDays?: number;
  /**
   * Terraform name of the log group (`aws_cloudwatch_log_group.<name>`).
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * The CloudWatch Logs log group the hosts write their logs to (one stream per instance and log), made by
 * the stack rather than by the first host, so that it has a retention (`log_retention_days`) and its tags,
 * and so that the hosts' role may write to this group only and create no other. Encrypted at rest by
 * CloudWatch Logs itself. Deleting the stack deletes it with its logs.
 */
export class HostLogGroup extends Construct {
  /** `log_retention_days`: days the logs are kept. */
  public readonly retentionDays: TerraformVariable;
  public readonly logGroup: CloudwatchLogGroup;

  constructor(scope: Construct, id: string, props: HostLogGroupProps) {
    super(scope, id);
    const fallback = props.defaultRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    if (!(LOG_RETENTION_DAYS as readonly number[]).includes(fallback)) {
      throw new Error(`HostLogGroup: defaultRetentionDays must be one of ${LOG_RETENTION_DAYS.join(", ")}, got ${fallback}`);
    }
    this.retentionDays = stackVariable(this, "log_retention_days", {
      type: "number",
      nullable: false,
      default: fallback,
      description: `Days CloudWatch Logs keeps the hosts' logs (${fallback} by default), one of the periods it takes: `
        + `${LOG_RETENTION_DAYS.join(", ")}.`,
    });
    this.retentionDays.addValidation(conditionRule(this.retentionDays,
      `contains([${LOG_RETENTION_DAYS.join(", ")}], var.log_retention_days)`,
      `one of ${LOG_RETENTION_DAYS.join(", ")} days (the retention periods CloudWatch Logs takes)`));
    this.logGroup = new CloudwatchLogGroup(this, "log_group", {
      name: awsName("logGroupName", props.logGroupName),
      retentionInDays: this.retentionDays.numberValue,
      tags: { Name: `${props.nameTag}/logs` },
    });
    nameElements(props.name ?? "crm_host", this.logGroup);
  }
}
