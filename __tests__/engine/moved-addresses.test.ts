/**
 * The moved blocks do what they say with a real engine: a state written before the readable names
 * (the terraform_data checks at their hashed addresses) plans as moves to the readable addresses, with
 * nothing created or destroyed. The AWS resources' moves are the same kind of block (checked
 * against the release's address list in __tests__/addresses.test.ts); planning them needs the provider.
 */
import { HASHED_ADDRESSES, moveFromEarlierAddresses } from "../../constructs/addresses";
import { SecretVariables } from "../../constructs/secret-variables";
import { TerraformStack } from "cdktf";
import { bootstrapCheck, synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";

describeWithEngine("moved blocks from the hashed addresses, planned by a real engine", (engine) => {
  const variables = {
    bootstrap_version: "6",
    db_root_password: "root-pw",
    app_db_password: "app-pw",
    source_host_token: "token",
  };

  it("moves the checks of a state written before the readable names to their readable addresses, adding and destroying nothing", async () => {
    const build = (moves: boolean) =>
      synthesize((scope) => {
        bootstrapCheck(scope, { readFromParameterStore: false });
        new SecretVariables(scope, "secrets");
        if (moves) moveFromEarlierAddresses(TerraformStack.of(scope), HASHED_ADDRESSES);
      }).json as Record<string, any>;
    // Before: the same resources at cdktf's hashed addresses.
    const before = build(false);
    const data = before.resource.terraform_data;
    before.resource.terraform_data = {
      bootstrap_check_181B6EDC: data.cdk_bootstrap_version,
      secrets_checks_check_2A7A9794: data.secrets,
    };
    const workspace = new EngineWorkspace(engine, before);
    try {
      await workspace.init();
      const applied = await workspace.run(
        ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
        Object.fromEntries(Object.entries(variables).map(([name, value]) => [`TF_VAR_${name}`, value])),
      );
      expect(applied.stdout).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");

      workspace.writeConfiguration(build(true));
      const plan = await workspace.plan(variables);
      expect(plan.stderr).toBe("");
      expect(plan.stdout).toContain(
        "terraform_data.bootstrap_check_181B6EDC has moved to terraform_data.cdk_bootstrap_version",
      );
      expect(plan.stdout).toContain("terraform_data.secrets_checks_check_2A7A9794 has moved to terraform_data.secrets");
      expect(plan.stdout).toMatch(/Plan: 0 to add, 0 to change, 0 to destroy/);
    } finally {
      workspace.remove();
    }
  }, 120_000);
});
