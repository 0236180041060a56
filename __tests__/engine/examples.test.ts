/**
 * examples/terraform.tfvars.example holds a value for every required variable that is not a
 * secret, and nothing else the stack does not declare: a real engine plans the stack's own
 * variable blocks with it, the secrets given as TF_VAR_ environment variables.
 */
import { Testing } from "cdktf";
import { copyFileSync, readFileSync } from "fs";
import { join, resolve } from "path";
import { CrmHostStack } from "../../main";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace, tfVars } from "../support/terraform-engine";

const EXAMPLE = resolve(__dirname, "../../examples/terraform.tfvars.example");
const SECRETS = ["db_root_password", "app_db_password", "source_host_token"];

describeWithEngine("examples/terraform.tfvars.example, planned by a real engine", (engine) => {
  let workspace: EngineWorkspace;
  let variables: Record<string, { default?: unknown; sensitive?: boolean }>;

  beforeAll(async () => {
    const { variable, resource } = JSON.parse(Testing.synth(new CrmHostStack(Testing.app(), exampleStackSettings())));
    variables = variable;
    // The SSH key's checks are preconditions of a resource of their own.
    workspace = new EngineWorkspace(engine, {
      variable,
      resource: { terraform_data: { ssh_public_key: resource.terraform_data.ssh_public_key } },
    });
    copyFileSync(EXAMPLE, join(workspace.dir, "example.tfvars"));
    await workspace.init();
  }, 60_000);
  afterAll(() => workspace?.remove());

  it("sets every required variable but the secrets, and no secret", () => {
    const assigned = readFileSync(EXAMPLE, "utf8")
      .split("\n")
      .map((line) => /^([a-z_]+)\s*=/.exec(line)?.[1])
      .filter(Boolean);
    const required = Object.entries(variables)
      .filter(([name, v]) => v.default === undefined && !SECRETS.includes(name))
      .map(([name]) => name);
    expect([...assigned].sort()).toEqual([...required].sort());
    for (const secret of SECRETS) expect(readFileSync(EXAMPLE, "utf8")).not.toMatch(new RegExp(`^${secret}\\s*=`, "m"));
  });

  it("passes every variable's validation and the SSH key's checks", async () => {
    const result = await workspace.run(
      ["plan", "-input=false", "-no-color", "-lock=false", "-var-file=example.tfvars"],
      tfVars({ db_root_password: "example-root", app_db_password: "example-app", source_host_token: "example-token" }),
    );
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  }, 60_000);
});
