import { DataVolumeVariables } from "../../constructs/data-volume-variables";
import { DEFAULT_DATA_VOLUME_SIZE_GIB } from "../../constructs/data-volume";
import { synthesize } from "../support/synth";

describe("DataVolumeVariables", () => {
  const variables = synthesize((scope) => new DataVolumeVariables(scope, "data_volume_inputs")).json.variable ?? {};

  it("takes the data volume's size in data_volume_size_gib, 10 GiB by default, whole numbers within gp3's limits", () => {
    expect(DEFAULT_DATA_VOLUME_SIZE_GIB).toBe(10);
    expect(variables.data_volume_size_gib).toMatchObject({ type: "number", nullable: false, default: 10 });
    expect(variables.data_volume_size_gib.validation).toEqual([
      {
        condition:
          "${var.data_volume_size_gib == floor(var.data_volume_size_gib) && var.data_volume_size_gib >= 1 && var.data_volume_size_gib <= 65536}",
        error_message:
          'Invalid value for variable "data_volume_size_gib": expected a whole number of GiB from 1 to 65536.',
      },
    ]);
  });

  it("names the snapshot to restore from in data_volume_snapshot_id, empty by default", () => {
    expect(variables.data_volume_snapshot_id).toMatchObject({ type: "string", nullable: false, default: "" });
    expect(variables.data_volume_snapshot_id.validation).toEqual([
      {
        condition: '${can(regex("^(snap-([0-9a-f]{8}|[0-9a-f]{17}))?$", var.data_volume_snapshot_id))}',
        error_message: expect.stringMatching(
          /^Invalid value for variable "data_volume_snapshot_id": expected empty, or a snapshot id/,
        ),
      },
    ]);
  });

  it("takes snapshot_interval_hours among DLM's intervals only, 24 by default", () => {
    expect(variables.snapshot_interval_hours).toMatchObject({ type: "number", nullable: false, default: 24 });
    expect(variables.snapshot_interval_hours.validation).toEqual([
      {
        condition: "${contains([1, 2, 3, 4, 6, 8, 12, 24], var.snapshot_interval_hours)}",
        error_message:
          'Invalid value for variable "snapshot_interval_hours": expected one of 1, 2, 3, 4, 6, 8, 12, 24 hours (the intervals Data Lifecycle Manager takes).',
      },
    ]);
  });

  it("keeps snapshot_retention_count snapshots, 7 by default, validated as 1 to 1000", () => {
    expect(variables.snapshot_retention_count).toMatchObject({ type: "number", nullable: false, default: 7 });
    expect(variables.snapshot_retention_count.validation).toEqual([
      {
        condition: expect.stringContaining("var.snapshot_retention_count >= 1 && var.snapshot_retention_count <= 1000"),
        error_message:
          'Invalid value for variable "snapshot_retention_count": expected a whole number of snapshots from 1 to 1000.',
      },
    ]);
  });

  it("declares snapshot_copy_retention_days only with a second region, which its description names", () => {
    expect(variables).not.toHaveProperty("snapshot_copy_retention_days");
    const copied =
      synthesize((scope) => new DataVolumeVariables(scope, "data_volume_inputs", { copyRegion: "eu-central-1" })).json
        .variable ?? {};
    expect(copied.snapshot_copy_retention_days).toMatchObject({ type: "number", nullable: false, default: 7 });
    expect(copied.snapshot_copy_retention_days.description).toContain("kept in eu-central-1, the second region");
    expect(copied.snapshot_copy_retention_days.validation).toEqual([
      {
        condition: expect.stringContaining(
          "var.snapshot_copy_retention_days >= 1 && var.snapshot_copy_retention_days <= 3650",
        ),
        error_message:
          'Invalid value for variable "snapshot_copy_retention_days": expected a whole number of days from 1 to 3650.',
      },
    ]);
  });

  it("takes other defaults for the size and the retention", () => {
    const other =
      synthesize(
        (scope) =>
          new DataVolumeVariables(scope, "data_volume_inputs", { defaultSizeGiB: 50, defaultRetentionCount: 14 }),
      ).json.variable ?? {};
    expect(other.data_volume_size_gib.default).toBe(50);
    expect(other.snapshot_retention_count.default).toBe(14);
    expect(() =>
      synthesize((scope) => new DataVolumeVariables(scope, "data_volume_inputs", { defaultSizeGiB: 0 })),
    ).toThrow("DataVolumeVariables: defaultSizeGiB must be a whole number of GiB from 1 to 65536, got 0");
    expect(() =>
      synthesize((scope) => new DataVolumeVariables(scope, "data_volume_inputs", { defaultRetentionCount: 1001 })),
    ).toThrow("DataVolumeVariables: defaultRetentionCount must be a whole number from 1 to 1000, got 1001");
  });
});
