import { TerraformVariable } from "cdktf";
import { BOOTSTRAP_VERSION_MESSAGE, CDK_BOOTSTRAP_VERSION_PARAMETER } from "../../constructs/bootstrap-version-check";
import { bootstrapCheck, synthesize } from "../support/synth";
import { describeWithEngine, EngineWorkspace, flatten } from "../support/terraform-engine";

describeWithEngine("bootstrap-version precondition, planned by a real engine", (engine) => {
  describe("the version given in bootstrap_version", () => {
    let workspace: EngineWorkspace;

    beforeAll(async () => {
      // The same construct as the stack's, reading the version from the variable instead of SSM.
      const { json } = synthesize((scope) => bootstrapCheck(scope, { readFromParameterStore: false }));
      workspace = new EngineWorkspace(engine, json);
      await workspace.init();
    }, 60_000);
    afterAll(() => workspace?.remove());

    it.each(["1", "2", "3", "4", "5"])(
      "fails the plan for version %s with the CDK message",
      async (version) => {
        const result = await workspace.plan({ bootstrap_version: version });
        expect(result.code).not.toBe(0);
        expect(flatten(result.stderr)).toContain("Resource precondition failed");
        expect(flatten(result.stderr)).toContain(BOOTSTRAP_VERSION_MESSAGE);
      },
      60_000,
    );

    it.each(["6", "7", "21", "not-a-number", "5.0", " 5"])(
      "plans for version %j",
      async (version) => {
        const result = await workspace.plan({ bootstrap_version: version });
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
        expect(result.stdout).toMatch(/Plan: 1 to add, 0 to change, 0 to destroy/);
      },
      60_000,
    );
  });

  describe("the version read from Parameter Store (aws_ssm_parameters_by_path's lists, as sensitive variables)", () => {
    let workspace: EngineWorkspace;

    beforeAll(async () => {
      // The stack's construct and expressions, with the data source's two lists given as variables:
      // the names of the parameters under the path, and their values (sensitive, as the provider marks them).
      const { json } = synthesize((scope) =>
        bootstrapCheck(
          scope,
          {},
          {
            storedParameters: (construct) => {
              for (const [name, sensitive] of [
                ["stored_names", false],
                ["stored_values", true],
              ] as const) {
                new TerraformVariable(construct, name, { type: "list(string)", sensitive }).overrideLogicalId(name);
              }
              return { names: "var.stored_names", values: "var.stored_values" };
            },
          },
        ),
      );
      workspace = new EngineWorkspace(engine, json);
      await workspace.init();
    }, 60_000);
    afterAll(() => workspace?.remove());

    const stored = (version: string) => ({ stored_names: [CDK_BOOTSTRAP_VERSION_PARAMETER], stored_values: [version] });

    it("plans in an account that never ran cdk bootstrap: the parameter is absent", async () => {
      const result = await workspace.plan({ stored_names: [], stored_values: [] });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toMatch(/Plan: 1 to add, 0 to change, 0 to destroy/);
    }, 60_000);

    it.each(["1", "2", "3", "4", "5"])(
      "fails the plan for a stored version %s with the CDK message",
      async (version) => {
        const result = await workspace.plan(stored(version));
        expect(result.code).not.toBe(0);
        expect(flatten(result.stderr)).toContain("Resource precondition failed");
        expect(flatten(result.stderr)).toContain(BOOTSTRAP_VERSION_MESSAGE);
      },
      60_000,
    );

    it.each(["6", "21", "not-a-number"])(
      "plans for a stored version %j",
      async (version) => {
        const result = await workspace.plan(stored(version));
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      },
      60_000,
    );

    it("judges only the parameter named in bootstrap_version_parameter, not its neighbours under the path", async () => {
      const neighbour = await workspace.plan({
        stored_names: ["/cdk-bootstrap/hnb659fds/other"],
        stored_values: ["5"],
      });
      expect(neighbour.code).toBe(0);
      const among = await workspace.plan({
        stored_names: ["/cdk-bootstrap/hnb659fds/other", CDK_BOOTSTRAP_VERSION_PARAMETER],
        stored_values: ["21", "3"],
      });
      expect(flatten(among.stderr)).toContain(BOOTSTRAP_VERSION_MESSAGE);
    }, 60_000);

    it("reads the directory of bootstrap_version_parameter: the data source's own path expression, evaluated", async () => {
      const { json } = synthesize((scope) => bootstrapCheck(scope));
      const source = json.data!.aws_ssm_parameters_by_path.cdk_bootstrap_version;
      const paths = new EngineWorkspace(engine, { variable: json.variable, output: { path: { value: source.path } } });
      try {
        await paths.init();
        for (const [parameter, directory] of [
          [CDK_BOOTSTRAP_VERSION_PARAMETER, "/cdk-bootstrap/hnb659fds"],
          ["/a/b", "/a"],
        ]) {
          const applied = await paths.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"], {
            TF_VAR_bootstrap_version_parameter: parameter,
          });
          expect(applied.code).toBe(0);
          expect((await paths.run(["output", "-raw", "path"])).stdout).toBe(directory);
        }
        // One level has no directory to read: the variable's validation refuses it.
        const refused = await paths.plan({ bootstrap_version_parameter: "/version" });
        expect(flatten(refused.stderr)).toContain('Invalid value for variable "bootstrap_version_parameter"');
      } finally {
        paths.remove();
      }
    }, 60_000);

    it("lets bootstrap_version override what is stored", async () => {
      const result = await workspace.plan({ ...stored("3"), bootstrap_version: "6" });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    }, 60_000);
  });
});
