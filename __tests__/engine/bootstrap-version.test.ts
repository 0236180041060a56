import { BOOTSTRAP_VERSION_MESSAGE, BootstrapVersionCheck } from "../../constructs/bootstrap-version-check";
import { synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

describeWithEngine("bootstrap-version precondition, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;

  beforeAll(async () => {
    // The same construct as the stack's, reading the version from the variable instead of SSM.
    const { json } = synthesize((scope) => new BootstrapVersionCheck(scope, "bootstrap", { readFromParameterStore: false }));
    workspace = new EngineWorkspace(engine, json);
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it.each(["1", "2", "3", "4", "5"])("fails the plan for version %s with the CDK message", async (version) => {
    const result = await workspace.plan({ bootstrap_version: version });
    expect(result.code).not.toBe(0);
    expect(flatten(result.stderr)).toContain("Resource precondition failed");
    expect(flatten(result.stderr)).toContain(BOOTSTRAP_VERSION_MESSAGE);
  }, 60_000);

  it.each(["6", "7", "21", "not-a-number", "5.0", " 5"])("plans for version %j", async (version) => {
    const result = await workspace.plan({ bootstrap_version: version });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/Plan: 1 to add, 0 to change, 0 to destroy/);
  }, 60_000);
});
