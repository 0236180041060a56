import { Fn } from "cdktf";
import { PlanCheck } from "../../constructs/plan-check";
import { only, synthesize } from "../support/synth";

describe("PlanCheck", () => {
  const precondition = { condition: Fn.contains(["a"], "a"), errorMessage: "a must be listed" };

  it("emits a provider-free terraform_data resource carrying the preconditions and the input", () => {
    const { json } = synthesize(
      (scope) => new PlanCheck(scope, "check", { preconditions: [precondition], input: { marker: true } }),
    );
    expect(only(json.resource, "terraform_data")).toEqual({
      input: { marker: true },
      lifecycle: { precondition: [{ condition: '${contains(["a"], "a")}', error_message: "a must be listed" }] },
    });
    expect(json.provider).toBeUndefined();
  });

  it("omits input when none is given", () => {
    const { json } = synthesize((scope) => new PlanCheck(scope, "check", { preconditions: [precondition] }));
    expect(only(json.resource, "terraform_data").input).toBeUndefined();
  });

  it("synthesizes with validations on a machine without Terraform, where cdktf's DataResource fails", () => {
    const saved = process.env.TERRAFORM_BINARY_NAME;
    // cdktf reads the binary's name when it loads: load a fresh copy that sees a missing one.
    process.env.TERRAFORM_BINARY_NAME = "/nonexistent/terraform";
    try {
      jest.isolateModules(() => {
        // A second copy of the modules (isolateModules), which only require() loads.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const cdktf = require("cdktf");
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { PlanCheck: IsolatedPlanCheck } = require("../../constructs/plan-check");
        const ours = new cdktf.TerraformStack(cdktf.Testing.app(), "ours");
        new IsolatedPlanCheck(ours, "check", { preconditions: [{ condition: "${true}", errorMessage: "m" }] });
        expect(() => cdktf.Testing.synth(ours, true)).not.toThrow();
        const theirs = new cdktf.TerraformStack(cdktf.Testing.app(), "theirs");
        new cdktf.DataResource(theirs, "check", {});
        expect(() => cdktf.Testing.synth(theirs, true)).toThrow(
          /Could not determine version of \/nonexistent\/terraform/,
        );
      });
    } finally {
      if (saved === undefined) delete process.env.TERRAFORM_BINARY_NAME;
      else process.env.TERRAFORM_BINARY_NAME = saved;
    }
  });
});
