import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { awsName } from "./aws-names";
import { DlmLifecyclePolicy } from "@cdktf/provider-aws/lib/dlm-lifecycle-policy";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { IamRolePolicyAttachment } from "@cdktf/provider-aws/lib/iam-role-policy-attachment";
import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { POLICY_VERSION } from "./constants";
import { conditionRule, stackVariable, wholeNumberBetween } from "./variable-rules";

/** A stack's names, as the snapshot tags and the data volume's name tag use them. */
export interface BackupNames {
  readonly stackName: string;
  readonly instanceName: string;
}

/** The tags the snapshot policy targets, which the data volume carries: `Backup` = `<stack>/<instance>/data`. */
export function backupTargetTags({ stackName, instanceName }: BackupNames): Record<string, string> {
  return { Backup: `${stackName}/${instanceName}/data` };
}

/** The tags the policy adds to every snapshot (besides the volume's own, copied): `Stack` and `Instance`. */
export function snapshotTags({ stackName, instanceName }: BackupNames): Record<string, string> {
  return { Stack: stackName, Instance: instanceName };
}

/** Trust policy that lets only Data Lifecycle Manager assume the role. */
export const DLM_ASSUME_ROLE_POLICY = {
  Version: POLICY_VERSION,
  Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Principal: { Service: "dlm.amazonaws.com" } }],
};

/** AWS managed policy for snapshot policies (the one AWSDataLifecycleManagerDefaultRole uses), without its partition. */
export const DLM_MANAGED_POLICY = "iam::aws:policy/service-role/AWSDataLifecycleManagerServiceRole";

/** Daily snapshots kept when `snapshot_retention_count` is not set: one week. */
export const DEFAULT_SNAPSHOT_RETENTION_COUNT = 7;

/** DLM keeps at most 1000 snapshots per schedule (RetainRule Count, 1 - 1000). */
export const MAX_SNAPSHOT_RETENTION_COUNT = 1000;

/** The intervals DLM's create rule takes, in hours (CreateRule Interval with IntervalUnit HOURS). */
export const SNAPSHOT_INTERVALS_HOURS = [1, 2, 3, 4, 6, 8, 12, 24] as const;

/** Hours between two snapshots when `snapshot_interval_hours` is not set: the daily snapshots of earlier versions. */
export const DEFAULT_SNAPSHOT_INTERVAL_HOURS = 24;

/** Days a copy in the second region is kept when `snapshot_copy_retention_days` is not set. */
export const DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS = 7;

/** Longest kept copy the variable accepts, in days: ten years, a guard against a typo (an extra 0). */
export const MAX_SNAPSHOT_COPY_RETENTION_DAYS = 3650;

/** Props of {@link DataVolumeBackups}. */
export interface DataVolumeBackupsProps {
  /** Tags that select the volumes to snapshot; the data volume must carry all of them. */
  readonly targetTags: Record<string, string>;
  /** `<stack_name>`: tagged on every snapshot as `Stack`. */
  readonly stackName: string;
  /** `<instance_name>`: tagged on every snapshot as `Instance`. */
  readonly instanceName: string;
  /**
   * Start of the daily snapshot window, `hh:mm` UTC (DLM starts within the following hour).
   * @default "03:00"
   */
  readonly dailyAtUtc?: string;
  /**
   * Snapshots kept when `snapshot_retention_count` is not set.
   * @default DEFAULT_SNAPSHOT_RETENTION_COUNT (7)
   */
  readonly defaultRetentionCount?: number;
  /**
   * Second region that every snapshot is copied to (DLM's cross-Region copy rule), encrypted there with that
   * region's default EBS key and kept `snapshot_copy_retention_days`.
   * @default - no copy
   */
  readonly copyRegion?: string;
  /**
   * Terraform name of the policy, its role, the role's policy attachment and the partition data source: {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_data_snapshots"
   */
  readonly name?: string;
}

/**
 * EBS snapshots of the data volume by Amazon Data Lifecycle Manager, every `snapshot_interval_hours` (24 by
 * default, down to hourly), the newest `snapshot_retention_count` kept; with a `copyRegion`, each also copied
 * to that region, encrypted, and kept there `snapshot_copy_retention_days`. DLM acts through its own service
 * role (trusted by dlm.amazonaws.com only, with the AWS managed policy AWSDataLifecycleManagerServiceRole,
 * which covers the copies); the instance's role gets no snapshot permission. Snapshots carry
 * the volume's tags (copy_tags) plus `Stack` and `Instance`. They are crash-consistent, which InnoDB recovers
 * from like from a power cut. Snapshots already taken outlive the policy: deleting it deletes none.
 */
export class DataVolumeBackups extends Construct {
  /** `snapshot_retention_count`: number of snapshots kept. */
  public readonly retentionCount: TerraformVariable;
  /** `snapshot_interval_hours`: hours between two snapshots. */
  public readonly intervalHours: TerraformVariable;
  /** `snapshot_copy_retention_days`: days a copy is kept in the second region, when there is one. */
  public readonly copyRetentionDays?: TerraformVariable;
  public readonly role: IamRole;
  public readonly policy: DlmLifecyclePolicy;

  constructor(scope: Construct, id: string, props: DataVolumeBackupsProps) {
    super(scope, id);
    const time = props.dailyAtUtc ?? "03:00";
    if (!/^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(time)) {
      throw new Error(`DataVolumeBackups: dailyAtUtc must be hh:mm (24-hour, UTC), got "${time}"`);
    }
    const nameTag = `${props.stackName}/${props.instanceName}`;

    this.retentionCount = stackVariable(this, "snapshot_retention_count", {
      type: "number",
      nullable: false,
      default: props.defaultRetentionCount ?? DEFAULT_SNAPSHOT_RETENTION_COUNT,
      description: "Number of snapshots of the data volume kept by Data Lifecycle Manager (7: one week of daily snapshots); "
        + "they reach back snapshot_retention_count × snapshot_interval_hours hours.",
    });
    this.retentionCount.addValidation(
      wholeNumberBetween(this.retentionCount, 1, MAX_SNAPSHOT_RETENTION_COUNT, "snapshots"));

    this.intervalHours = stackVariable(this, "snapshot_interval_hours", {
      type: "number",
      nullable: false,
      default: DEFAULT_SNAPSHOT_INTERVAL_HOURS,
      description: `Hours between two snapshots of the data volume, one of ${SNAPSHOT_INTERVALS_HOURS.join(", ")} (DLM's intervals): `
        + "the most data a lost volume can take with it (the recovery point), plus up to an hour (DLM starts within the hour).",
    });
    this.intervalHours.addValidation(conditionRule(this.intervalHours,
      `contains([${SNAPSHOT_INTERVALS_HOURS.join(", ")}], var.snapshot_interval_hours)`,
      `one of ${SNAPSHOT_INTERVALS_HOURS.join(", ")} hours (the intervals Data Lifecycle Manager takes)`));

    if (props.copyRegion !== undefined) {
      this.copyRetentionDays = stackVariable(this, "snapshot_copy_retention_days", {
        type: "number",
        nullable: false,
        default: DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS,
        description: `Days each copy of a snapshot is kept in ${props.copyRegion}, the second region (settings: snapshotCopyRegion).`,
      });
      this.copyRetentionDays.addValidation(
        wholeNumberBetween(this.copyRetentionDays, 1, MAX_SNAPSHOT_COPY_RETENTION_DAYS, "days"));
    }

    this.role = new IamRole(this, "role", {
      assumeRolePolicy: JSON.stringify(DLM_ASSUME_ROLE_POLICY),
      description: `Lets Data Lifecycle Manager snapshot the data volume of ${nameTag}`,
      tags: { Name: `${nameTag}/backups` },
    });
    const name = props.name ?? "crm_data_snapshots";
    const partition = new DataAwsPartition(this, "partition");
    nameElements(name, this.role, partition);
    const attachment = new IamRolePolicyAttachment(this, "managed_policy", {
      role: this.role.name,
      policyArn: `arn:${partition.partition}:${DLM_MANAGED_POLICY}`,
    });
    nameElements(name, attachment);

    this.policy = new DlmLifecyclePolicy(this, "policy", {
      // DLM accepts only letters, digits, spaces, _ and - here.
      description: awsName("dlmDescription", `Snapshots of the data volume of ${props.stackName} ${props.instanceName}`),
      executionRoleArn: this.role.arn,
      state: "ENABLED",
      policyDetails: {
        policyType: "EBS_SNAPSHOT_MANAGEMENT",
        resourceTypes: ["VOLUME"],
        targetTags: props.targetTags,
        schedule: [{
          // Named "daily" whatever the interval: the name of the schedule that earlier versions created, kept so
          // that DLM's retention goes on counting the snapshots it took under it.
          name: "daily",
          createRule: { interval: this.intervalHours.numberValue, intervalUnit: "HOURS", times: [time] },
          retainRule: { count: this.retentionCount.numberValue },
          copyTags: true,
          tagsToAdd: snapshotTags(props),
          crossRegionCopyRule: this.copyRetentionDays && props.copyRegion !== undefined ? [{
            // `target` (not 6.x's target_region): the name both provider majors take.
            target: props.copyRegion,
            // Encrypted there with the region's default EBS key: a KMS key does not cross regions.
            encrypted: true,
            copyTags: true,
            retainRule: { interval: this.copyRetentionDays.numberValue, intervalUnit: "DAYS" },
          }] : undefined,
        }],
      },
      tags: { Name: `${nameTag}/backups` },
      // The role must hold its permissions before DLM first assumes it.
      dependsOn: [attachment],
    });
    nameElements(name, this.policy);
  }
}
