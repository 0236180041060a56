import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { MAX_GP3_SIZE_GIB } from "./constants";
import { DEFAULT_DATA_VOLUME_SIZE_GIB } from "./data-volume";
import {
  DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS,
  DEFAULT_SNAPSHOT_INTERVAL_HOURS,
  DEFAULT_SNAPSHOT_RETENTION_COUNT,
  MAX_SNAPSHOT_COPY_RETENTION_DAYS,
  MAX_SNAPSHOT_RETENTION_COUNT,
  SNAPSHOT_INTERVALS_HOURS,
} from "./data-volume-backups";
import { SNAPSHOT_ID_EXPECTED, SNAPSHOT_ID_SHAPE } from "../settings/snapshot-id";
import {
  checkLiteral,
  conditionRule,
  matchesPattern,
  stackVariable,
  wholeFrom,
  wholeNumberBetween,
} from "./variable-rules";

/** Props of {@link DataVolumeVariables}. */
export interface DataVolumeVariablesProps {
  /**
   * Default of `data_volume_size_gib`.
   * @default DEFAULT_DATA_VOLUME_SIZE_GIB (10)
   */
  readonly defaultSizeGiB?: number;
  /**
   * Default of `snapshot_retention_count`.
   * @default DEFAULT_SNAPSHOT_RETENTION_COUNT (7)
   */
  readonly defaultRetentionCount?: number;
  /**
   * The second region DataVolumeBackups copies every snapshot to: declares `snapshot_copy_retention_days`, whose description names it.
   * @default - no copy, no such variable
   */
  readonly copyRegion?: string;
}

/**
 * The single host's data volume (DataVolume) and its snapshots (DataVolumeBackups) as Terraform variables,
 * each with a `validation` block whose message names the variable and the expected form: the volume's size
 * (`data_volume_size_gib`) and the snapshot it is restored from (`data_volume_snapshot_id`); how often it is
 * snapshotted (`snapshot_interval_hours`), how many snapshots are kept (`snapshot_retention_count`) and, with
 * a second region, how long the copies there are kept (`snapshot_copy_retention_days`).
 */
export class DataVolumeVariables extends Construct {
  /** `data_volume_size_gib`: size of the volume in GiB. */
  public readonly sizeGiB: TerraformVariable;
  /** `data_volume_snapshot_id`: snapshot the volume is created from, or "" for an empty volume. */
  public readonly snapshotId: TerraformVariable;
  /** `snapshot_retention_count`: number of snapshots kept. */
  public readonly retentionCount: TerraformVariable;
  /** `snapshot_interval_hours`: hours between two snapshots. */
  public readonly intervalHours: TerraformVariable;
  /** `snapshot_copy_retention_days`: days a copy is kept in the second region, when there is one. */
  public readonly copyRetentionDays?: TerraformVariable;

  constructor(scope: Construct, id: string, props: DataVolumeVariablesProps = {}) {
    super(scope, id);
    const size = props.defaultSizeGiB ?? DEFAULT_DATA_VOLUME_SIZE_GIB;
    checkLiteral(
      size,
      wholeFrom(1, MAX_GP3_SIZE_GIB),
      "DataVolumeVariables: defaultSizeGiB",
      `a whole number of GiB from 1 to ${MAX_GP3_SIZE_GIB}`,
    );
    const retention = props.defaultRetentionCount ?? DEFAULT_SNAPSHOT_RETENTION_COUNT;
    checkLiteral(
      retention,
      wholeFrom(1, MAX_SNAPSHOT_RETENTION_COUNT),
      "DataVolumeVariables: defaultRetentionCount",
      `a whole number from 1 to ${MAX_SNAPSHOT_RETENTION_COUNT}`,
    );
    this.sizeGiB = stackVariable(this, "data_volume_size_gib", {
      type: "number",
      nullable: false,
      default: size,
      description:
        "Size in GiB of the encrypted gp3 volume that holds the database. It can grow in place, never shrink.",
    });
    this.sizeGiB.addValidation(wholeNumberBetween(this.sizeGiB, 1, MAX_GP3_SIZE_GIB, "GiB"));

    this.snapshotId = stackVariable(this, "data_volume_snapshot_id", {
      type: "string",
      nullable: false,
      default: "",
      description:
        "Snapshot to create the data volume from (restore, see docs/operations.md), e.g. snap-0123456789abcdef0; " +
        "empty for a new, empty volume. Changing it replaces the volume: follow the restore procedure of docs/operations.md.",
    });
    this.snapshotId.addValidation(
      matchesPattern(this.snapshotId, `^(${SNAPSHOT_ID_SHAPE})?$`, `empty, or ${SNAPSHOT_ID_EXPECTED}`),
    );

    this.retentionCount = stackVariable(this, "snapshot_retention_count", {
      type: "number",
      nullable: false,
      default: retention,
      description:
        "Number of snapshots of the data volume kept by Data Lifecycle Manager (7: one week of daily snapshots); " +
        "they reach back snapshot_retention_count × snapshot_interval_hours hours.",
    });
    this.retentionCount.addValidation(
      wholeNumberBetween(this.retentionCount, 1, MAX_SNAPSHOT_RETENTION_COUNT, "snapshots"),
    );

    this.intervalHours = stackVariable(this, "snapshot_interval_hours", {
      type: "number",
      nullable: false,
      default: DEFAULT_SNAPSHOT_INTERVAL_HOURS,
      description:
        `Hours between two snapshots of the data volume, one of ${SNAPSHOT_INTERVALS_HOURS.join(", ")} (DLM's intervals): ` +
        "the most data a lost volume can take with it (the recovery point), plus up to an hour (DLM starts within the hour).",
    });
    this.intervalHours.addValidation(
      conditionRule(
        this.intervalHours,
        `contains([${SNAPSHOT_INTERVALS_HOURS.join(", ")}], var.snapshot_interval_hours)`,
        `one of ${SNAPSHOT_INTERVALS_HOURS.join(", ")} hours (the intervals Data Lifecycle Manager takes)`,
      ),
    );

    if (props.copyRegion !== undefined) {
      this.copyRetentionDays = stackVariable(this, "snapshot_copy_retention_days", {
        type: "number",
        nullable: false,
        default: DEFAULT_SNAPSHOT_COPY_RETENTION_DAYS,
        description: `Days each copy of a snapshot is kept in ${props.copyRegion}, the second region (settings: snapshotCopyRegion).`,
      });
      this.copyRetentionDays.addValidation(
        wholeNumberBetween(this.copyRetentionDays, 1, MAX_SNAPSHOT_COPY_RETENTION_DAYS, "days"),
      );
    }
  }
}
