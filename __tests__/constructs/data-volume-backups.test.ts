import { DataVolumeBackups, DataVolumeBackupsProps } from "../../constructs/data-volume-backups";
import { DataVolumeVariables } from "../../constructs/data-volume-variables";
import { only, synthesize } from "../support/synth";

const props: DataVolumeBackupsProps = {
  targetTags: { Backup: "CrmHostStack/CrmServer/data" },
  stackName: "CrmHostStack",
  instanceName: "CrmServer",
};

describe("DataVolumeBackups", () => {
  // As the single host builds it: its schedule and retention from DataVolumeVariables.
  const { json } = synthesize((scope) => {
    const inputs = new DataVolumeVariables(scope, "data_volume_inputs");
    new DataVolumeBackups(scope, "backups", {
      ...props,
      retentionCount: inputs.retentionCount.numberValue,
      intervalHours: inputs.intervalHours.numberValue,
    });
  });
  const policy = only(json.resource, "aws_dlm_lifecycle_policy");
  const role = only(json.resource, "aws_iam_role");
  const roleName = Object.keys(json.resource!.aws_iam_role)[0];

  it("snapshots the volumes with the target tags every snapshot_interval_hours (24 by default) from 03:00 UTC", () => {
    expect(policy).toMatchObject({
      state: "ENABLED",
      description: "Snapshots of the data volume of CrmHostStack CrmServer",
      policy_details: {
        policy_type: "EBS_SNAPSHOT_MANAGEMENT",
        resource_types: ["VOLUME"],
        target_tags: { Backup: "CrmHostStack/CrmServer/data" },
      },
    });
    // DLM refuses descriptions with characters other than these.
    expect(policy.description).toMatch(/^[0-9A-Za-z _-]+$/);
    expect(policy.policy_details.schedule).toHaveLength(1);
    expect(policy.policy_details.schedule[0]).toMatchObject({
      name: "daily",
      create_rule: { interval: "${var.snapshot_interval_hours}", interval_unit: "HOURS", times: ["03:00"] },
    });
  });

  it("copies no snapshot to another region unless a copyRegion is given, then keeps the copies copyRetentionDays", () => {
    expect(policy.policy_details.schedule[0].cross_region_copy_rule).toBeUndefined();
    const copied = synthesize((scope) => {
      const inputs = new DataVolumeVariables(scope, "data_volume_inputs", { copyRegion: "eu-central-1" });
      new DataVolumeBackups(scope, "backups", {
        ...props,
        copyRegion: "eu-central-1",
        copyRetentionDays: inputs.copyRetentionDays?.numberValue,
      });
    }).json;
    const rule = only(copied.resource, "aws_dlm_lifecycle_policy").policy_details.schedule[0].cross_region_copy_rule;
    expect(rule).toEqual([
      {
        target: "eu-central-1",
        encrypted: true,
        copy_tags: true,
        retain_rule: { interval: "${var.snapshot_copy_retention_days}", interval_unit: "DAYS" },
      },
    ]);
    const fixed = synthesize(
      (scope) => new DataVolumeBackups(scope, "backups", { ...props, copyRegion: "eu-central-1" }),
    ).json;
    expect(
      only(fixed.resource, "aws_dlm_lifecycle_policy").policy_details.schedule[0].cross_region_copy_rule[0].retain_rule,
    ).toEqual({ interval: 7, interval_unit: "DAYS" });
  });

  it("keeps the retention count it is given (snapshot_retention_count in the stack)", () => {
    expect(policy.policy_details.schedule[0].retain_rule).toEqual({ count: "${var.snapshot_retention_count}" });
  });

  it("tags every snapshot with the stack and instance names, and copies the volume's tags", () => {
    expect(policy.policy_details.schedule[0]).toMatchObject({
      copy_tags: true,
      tags_to_add: { Stack: "CrmHostStack", Instance: "CrmServer" },
    });
  });

  it("acts through its own role, which only DLM may assume and which holds only the AWS managed DLM policy", () => {
    expect(JSON.parse(role.assume_role_policy)).toEqual({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Principal: { Service: "dlm.amazonaws.com" } }],
    });
    expect(policy.execution_role_arn).toBe(`\${aws_iam_role.${roleName}.arn}`);
    const attachment = only(json.resource, "aws_iam_role_policy_attachment");
    const attachmentName = Object.keys(json.resource!.aws_iam_role_policy_attachment)[0];
    const partition = Object.keys(json.data!.aws_partition)[0];
    expect(attachment).toMatchObject({
      role: `\${aws_iam_role.${roleName}.name}`,
      policy_arn: `arn:\${data.aws_partition.${partition}.partition}:iam::aws:policy/service-role/AWSDataLifecycleManagerServiceRole`,
    });
    expect(policy.depends_on).toEqual([`aws_iam_role_policy_attachment.${attachmentName}`]);
    expect(json.resource?.aws_iam_role_policy).toBeUndefined();
    expect(role.inline_policy).toBeUndefined();
  });

  it("honours another daily time, and without values daily snapshots kept a week; refuses a time that is not hh:mm", () => {
    const other = synthesize((scope) => new DataVolumeBackups(scope, "b", { ...props, dailyAtUtc: "23:30" })).json;
    const schedule = only(other.resource, "aws_dlm_lifecycle_policy").policy_details.schedule[0];
    expect(schedule.create_rule).toEqual({ interval: 24, interval_unit: "HOURS", times: ["23:30"] });
    expect(schedule.retain_rule).toEqual({ count: 7 });
    expect(() => synthesize((scope) => new DataVolumeBackups(scope, "b", { ...props, dailyAtUtc: "3:00" }))).toThrow(
      'dailyAtUtc must be hh:mm (24-hour, UTC), got "3:00"',
    );
  });

  it("gives literal values the variables' rules at synthesis", () => {
    const refusal = (changes: Partial<DataVolumeBackupsProps>) => {
      try {
        synthesize((scope) => new DataVolumeBackups(scope, "b", { ...props, ...changes }));
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    expect(
      refusal({ intervalHours: 12, retentionCount: 1000, copyRegion: "eu-central-1", copyRetentionDays: 3650 }),
    ).toBe("accepted");
    expect(refusal({ intervalHours: 5 })).toBe(
      "DataVolumeBackups: intervalHours must be one of 1, 2, 3, 4, 6, 8, 12, 24, got 5",
    );
    expect(refusal({ retentionCount: 0 })).toBe(
      "DataVolumeBackups: retentionCount must be a whole number from 1 to 1000, got 0",
    );
    expect(refusal({ copyRegion: "eu-central-1", copyRetentionDays: 3651 })).toBe(
      "DataVolumeBackups: copyRetentionDays must be a whole number of days from 1 to 3650, got 3651",
    );
  });
});
