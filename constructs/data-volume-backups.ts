import { DataAwsPartition } from "@cdktf/provider-aws/lib/data-aws-partition";
import { awsName } from "./aws-names";
import { DlmLifecyclePolicy } from "@cdktf/provider-aws/lib/dlm-lifecycle-policy";
import { IamRole } from "@cdktf/provider-aws/lib/iam-role";
import { IamRolePolicyAttachment } from "@cdktf/provider-aws/lib/iam-role-policy-attachment";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { POLICY_VERSION } from "./constants";
import { checkLiteral, wholeFrom } from "./variable-rules";

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
   * Snapshots kept: DataVolumeVariables' `snapshot_retention_count`, or a number from 1 to MAX_SNAPSHOT_RETENTION_COUNT.
   * @default DEFAULT_SNAPSHOT_RETENTION_COUNT (7)
   */
  readonly retentionCount?: number;
  /**
   * Hours between two snapshots: DataVolumeVariables' `snapshot_interval_hours`, or one of SNAPSHOT_INTERVALS_HOURS.
   * @default DEFAULT_SNAPSHOT_INTERVAL_HOURS (24)
   */
  readonly intervalHours?: number;
  /**
   * Second region that every snapshot is copied to (DLM's cross-Region copy rule), encrypted there with that
   * region's default EBS key and kept `copyRetentionDays`.
   * @default - no copy
   */
  readonly copyRegion?: string;
  /**
   * Days a copy is kept in `copyRegion`: DataVolumeVariables' `snapshot_copy_retention_days`, or a number of days.
   * @default DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS (7)
   */
  readonly copyRetentionDays?: number;
  /**
   * Terraform name of the policy, its role, the role's policy attachment and the partition data source: {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_data_snapshots"
   */
  readonly name?: string;
}

/**
 * EBS snapshots of the data volume by Amazon Data Lifecycle Manager, every `intervalHours` (24 by default,
 * down to hourly), the newest `retentionCount` kept; with a `copyRegion`, each also copied to that region,
 * encrypted, and kept there `copyRetentionDays` (in the stack: DataVolumeVariables' `snapshot_*` variables). DLM acts through its own service
 * role (trusted by dlm.amazonaws.com only, with the AWS managed policy AWSDataLifecycleManagerServiceRole,
 * which covers the copies); the instance's role gets no snapshot permission. Snapshots carry
 * the volume's tags (copy_tags) plus `Stack` and `Instance`. They are crash-consistent, which InnoDB recovers
 * from like from a power cut. Snapshots already taken outlive the policy: deleting it deletes none.
 */
export class DataVolumeBackups extends Construct {
  public readonly role: IamRole;
  public readonly policy: DlmLifecyclePolicy;

  constructor(scope: Construct, id: string, props: DataVolumeBackupsProps) {
    super(scope, id);
    const time = props.dailyAtUtc ?? "03:00";
    if (!/^([01][0-9]|2[0-3]):[0-5][0-9]$/.test(time)) {
      throw new Error(`DataVolumeBackups: dailyAtUtc must be hh:mm (24-hour, UTC), got "${time}"`);
    }
    const nameTag = `${props.stackName}/${props.instanceName}`;
    const retentionCount = props.retentionCount ?? DEFAULT_SNAPSHOT_RETENTION_COUNT;
    checkLiteral(
      retentionCount,
      wholeFrom(1, MAX_SNAPSHOT_RETENTION_COUNT),
      "DataVolumeBackups: retentionCount",
      `a whole number from 1 to ${MAX_SNAPSHOT_RETENTION_COUNT}`,
    );
    const intervalHours = props.intervalHours ?? DEFAULT_SNAPSHOT_INTERVAL_HOURS;
    checkLiteral(
      intervalHours,
      (value) => (SNAPSHOT_INTERVALS_HOURS as readonly number[]).includes(value),
      "DataVolumeBackups: intervalHours",
      `one of ${SNAPSHOT_INTERVALS_HOURS.join(", ")}`,
    );
    const copyRetentionDays = props.copyRetentionDays ?? DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS;
    checkLiteral(
      copyRetentionDays,
      wholeFrom(1, MAX_SNAPSHOT_COPY_RETENTION_DAYS),
      "DataVolumeBackups: copyRetentionDays",
      `a whole number of days from 1 to ${MAX_SNAPSHOT_COPY_RETENTION_DAYS}`,
    );

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
      description: awsName(
        "dlmDescription",
        `Snapshots of the data volume of ${props.stackName} ${props.instanceName}`,
      ),
      executionRoleArn: this.role.arn,
      state: "ENABLED",
      policyDetails: {
        policyType: "EBS_SNAPSHOT_MANAGEMENT",
        resourceTypes: ["VOLUME"],
        targetTags: props.targetTags,
        schedule: [
          {
            // Named "daily" whatever the interval: the name of the schedule that earlier versions created, kept so
            // that DLM's retention goes on counting the snapshots it took under it.
            name: "daily",
            createRule: { interval: intervalHours, intervalUnit: "HOURS", times: [time] },
            retainRule: { count: retentionCount },
            copyTags: true,
            tagsToAdd: snapshotTags(props),
            crossRegionCopyRule:
              props.copyRegion !== undefined
                ? [
                    {
                      // `target` (not 6.x's target_region): the name both provider majors take.
                      target: props.copyRegion,
                      // Encrypted there with the region's default EBS key: a KMS key does not cross regions.
                      encrypted: true,
                      copyTags: true,
                      retainRule: { interval: copyRetentionDays, intervalUnit: "DAYS" },
                    },
                  ]
                : undefined,
          },
        ],
      },
      tags: { Name: `${nameTag}/backups` },
      // The role must hold its permissions before DLM first assumes it.
      dependsOn: [attachment],
    });
    nameElements(name, this.policy);
  }
}
