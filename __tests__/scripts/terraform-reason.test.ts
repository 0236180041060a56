/**
 * scripts/terraform-reason.ts: the one line the ops command gives of a failed Terraform command, read from the real
 * engine's output, with a CLI configuration file that cannot be opened (as TF_CLI_CONFIG_FILE names on some machines)
 * and without.
 */
import { writeFileSync } from "fs";
import { join } from "path";
import { terraformReason } from "../../scripts/terraform-reason";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";

describe("terraformReason", () => {
  test("the first error, framed or not; else the first line outside the warnings; else nothing", () => {
    expect(terraformReason("╷\n│ Warning: W\n│\n│ details\n╵\n╷\n│ Error: E\n│\n│ details\n╵\n")).toBe("Error: E");
    expect(terraformReason("Error: first\n\nError: second\n")).toBe("Error: first");
    expect(
      terraformReason(
        "There are some problems with the CLI configuration:\n╷\n│ Warning: W\n╵\n\nNo state file was found!\n\nmore\n",
      ),
    ).toBe("No state file was found!");
    expect(terraformReason("╷\n│ Warning: W\n╵\n")).toBeUndefined();
    expect(terraformReason("")).toBeUndefined();
  });
});

describeWithEngine("terraformReason on the engine's own output", (engine) => {
  const output = { CrmServerPublicIP: { value: "203.0.113.25" } };
  const workspaces: EngineWorkspace[] = [];
  const workspace = (configuration: object) => {
    workspaces.push(new EngineWorkspace(engine, configuration));
    return workspaces[workspaces.length - 1];
  };
  afterAll(() => workspaces.forEach((w) => w.remove()));

  test.each([
    ["a CLI configuration file that cannot be opened", { TF_CLI_CONFIG_FILE: "/nonexistent/crm-cli.tfrc" }],
    ["its own (empty) one", {}],
  ])(
    "with %s: no state, a state that is not one, a backend not initialized",
    async (_, env: Record<string, string>) => {
      const local = workspace({ output });
      const listed = await local.run(["state", "list", "-no-color"], env);
      expect(listed.code).toBe(1);
      expect(terraformReason(listed.stderr)).toBe("No state file was found!");
      // The missing file is reported first, which a reader of the first line would have taken for the reason.
      if (env.TF_CLI_CONFIG_FILE)
        expect(listed.stderr.trimStart().startsWith("There are some problems with the CLI configuration:")).toBe(true);
      writeFileSync(join(local.dir, "terraform.tfstate"), "{ not a state");
      const corrupt = await local.run(["output", "-json", "-no-color"], env);
      expect(corrupt.code).toBe(1);
      expect(terraformReason(corrupt.stderr)).toBe("Error: Unsupported state file format");
      const remote = workspace({
        terraform: { backend: { s3: { bucket: "crm-reason", key: "k", region: "us-east-1" } } },
        output,
      });
      const uninitialized = await remote.run(["output", "-json", "-no-color"], env);
      expect(uninitialized.code).toBe(1);
      expect(terraformReason(uninitialized.stderr)).toBe(
        'Error: Backend initialization required, please run "terraform init"',
      );
    },
  );
});
