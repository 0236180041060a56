/**
 * The cross-Region copy's retention, a variable only a stack with `snapshotCopyRegion` has: its validation
 * block, as the stack synthesizes it, planned by a real engine (the variable alone, no provider).
 */
import { Testing } from "cdktf";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

describeWithEngine("snapshot_copy_retention_days, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    const { variable } = JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), exampleStackSettings({ snapshotCopyRegion: "eu-west-1" }))),
    );
    workspace = new EngineWorkspace(engine, {
      variable: { snapshot_copy_retention_days: variable.snapshot_copy_retention_days },
    });
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it.each([["1"], ["7"], ["3650"]])(
    "plans with %s days",
    async (days) => {
      const result = await workspace.plan({ snapshot_copy_retention_days: days });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    },
    60_000,
  );

  it.each([["0"], ["3651"], ["1.5"]])(
    "refuses %s days, naming the variable",
    async (days) => {
      const result = await workspace.plan({ snapshot_copy_retention_days: days });
      expect(result.code).not.toBe(0);
      expect(flatten(result.stderr)).toContain(
        'Invalid value for variable "snapshot_copy_retention_days": expected a whole number of days from 1 to 3650.',
      );
    },
    60_000,
  );
});
