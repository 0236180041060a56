import { DataAwsSsmParametersByPath } from "@cdktf/provider-aws/lib/data-aws-ssm-parameters-by-path";
import { BOOTSTRAP_VERSION_MESSAGE } from "../../constructs/bootstrap-version-check";
import { bootstrapCheck, only, synthesize } from "../support/synth";

describe("BootstrapVersionCheck", () => {
  it('reads the parameters of the bootstrap parameter\'s directory unless bootstrap_version is given, an absent one as ""', () => {
    const { text, json } = synthesize((scope) => bootstrapCheck(scope));
    // By path: an absent parameter gives empty lists, where aws_ssm_parameter fails the plan.
    expect(text).toHaveDataSourceWithProperties(DataAwsSsmParametersByPath, {
      path: '${replace(var.bootstrap_version_parameter, "/[/][^/]+$/", "")}',
      count: "${length(var.bootstrap_version) >= 1 ? 0 : 1}",
    });
    expect(json.data?.aws_ssm_parameters_by_path?.cdk_bootstrap_version).toBeDefined();
    expect(json.locals).toEqual({
      cdk_bootstrap_version:
        "${length(var.bootstrap_version) >= 1 ? var.bootstrap_version : lookup(zipmap(" +
        "one(data.aws_ssm_parameters_by_path.cdk_bootstrap_version[*].names), one(data.aws_ssm_parameters_by_path.cdk_bootstrap_version[*].values)), " +
        'var.bootstrap_version_parameter, "")}',
    });
  });

  it("judges stand-in parameters, when given, with the same expressions", () => {
    const { json } = synthesize((scope) =>
      bootstrapCheck(
        scope,
        {},
        {
          storedParameters: () => ({ names: "var.names", values: "var.values" }),
        },
      ),
    );
    expect(json.data).toBeUndefined();
    expect(Object.values(json.locals ?? {})).toEqual([
      '${length(var.bootstrap_version) >= 1 ? var.bootstrap_version : lookup(zipmap(var.names, var.values), var.bootstrap_version_parameter, "")}',
    ]);
  });

  it("fails the plan for versions 1 to 5 with the CDK rule's message", () => {
    const { json } = synthesize((scope) => bootstrapCheck(scope));
    const check = only(json.resource, "terraform_data");
    const localName = Object.keys(json.locals ?? {})[0];
    expect(check.lifecycle.precondition).toEqual([
      {
        condition: `\${!contains(["1", "2", "3", "4", "5"], local.${localName})}`,
        error_message: BOOTSTRAP_VERSION_MESSAGE,
      },
    ]);
    expect(BOOTSTRAP_VERSION_MESSAGE).toMatch(/bootstrap stack version 6 required/);
    expect(BOOTSTRAP_VERSION_MESSAGE).toMatch(/run 'cdk bootstrap' with a recent version of the CDK CLI/);
  });

  it("needs no provider without a parameter to read: it judges the version variable itself", () => {
    const { json } = synthesize((scope) => bootstrapCheck(scope, { readFromParameterStore: false }));
    expect(json.data).toBeUndefined();
    expect(json.locals).toBeUndefined();
    expect(only(json.resource, "terraform_data").lifecycle.precondition[0].condition).toBe(
      '${!contains(["1", "2", "3", "4", "5"], var.bootstrap_version)}',
    );
  });
});
