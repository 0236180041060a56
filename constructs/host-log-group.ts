import { CloudwatchLogGroup } from "@cdktf/provider-aws/lib/cloudwatch-log-group";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { awsName } from "./aws-names";
import { checkLiteral } from "./variable-rules";

/** The retention periods CloudWatch Logs takes, in days (PutRetentionPolicy). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/**
 * Days the hosts' logs are kept when `log_retention_days` is not set: a year, to look back at an incident or
 * an audit line long after; a small host's logs stored a year cost cents (storage, not ingestion, grows with it).
 */
export const DEFAULT_LOG_RETENTION_DAYS = 365;

/** Throws when `days`, unless a token (a variable's value, checked at plan), is not a period CloudWatch Logs takes; `what` names it. */
export function checkLogRetentionDays(days: number, what: string): void {
  checkLiteral(
    days,
    (value) => (LOG_RETENTION_DAYS as readonly number[]).includes(value),
    what,
    `one of ${LOG_RETENTION_DAYS.join(", ")}`,
  );
}

/** Props of {@link HostLogGroup}. */
export interface HostLogGroupProps {
  /** The log group's name (settings/host-metrics.ts, hostLogGroupName). */
  readonly logGroupName: string;
  /** `<stack_name>/<instance_name>`: the group's Name tag. */
  readonly nameTag: string;
  /**
   * Days the logs are kept: DeploymentVariables' `log_retention_days`, or one of {@link LOG_RETENTION_DAYS}.
   * @default DEFAULT_LOG_RETENTION_DAYS (365)
   */
  readonly retentionDays?: number;
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
  public readonly logGroup: CloudwatchLogGroup;

  constructor(scope: Construct, id: string, props: HostLogGroupProps) {
    super(scope, id);
    const retentionDays = props.retentionDays ?? DEFAULT_LOG_RETENTION_DAYS;
    checkLogRetentionDays(retentionDays, "HostLogGroup: retentionDays");
    this.logGroup = new CloudwatchLogGroup(this, "log_group", {
      name: awsName("logGroupName", props.logGroupName),
      retentionInDays: retentionDays,
      tags: { Name: `${props.nameTag}/logs` },
    });
    nameElements(props.name ?? "crm_host", this.logGroup);
  }
}
