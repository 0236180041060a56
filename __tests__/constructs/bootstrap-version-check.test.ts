import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import {
  BOOTSTRAP_VERSION_MESSAGE, BootstrapVersionCheck, CDK_BOOTSTRAP_VERSION_PARAMETER,
} from "../../constructs/bootstrap-version-check";
import { only, synthesize } from "../support/synth";

describe("BootstrapVersionCheck", () => {
  it("reads the version from CDK's bootstrap parameter unless bootstrap_version is given", () => {
    const { text, json } = synthesize((scope) => new BootstrapVersionCheck(scope, "bootstrap"));
    expect(CDK_BOOTSTRAP_VERSION_PARAMETER).toBe("/cdk-bootstrap/hnb659fds/version");
    expect(json.variable?.bootstrap_version_parameter).toMatchObject({
      type: "string",
      default: CDK_BOOTSTRAP_VERSION_PARAMETER,
      description: expect.stringContaining("automatically retrieved from SSM Parameter Store"),
    });
    expect(json.variable?.bootstrap_version).toMatchObject({ type: "string", default: "" });
    expect(text).toHaveDataSourceWithProperties(DataAwsSsmParameter, {
      name: "${var.bootstrap_version_parameter}",
      count: "${(length(var.bootstrap_version) >= 1) ? 0 : 1}",
    });
    const [local] = Object.values(json.locals ?? {});
    expect(local).toMatch(/^\$\{\(length\(var\.bootstrap_version\) >= 1\) \? var\.bootstrap_version : one\(data\.aws_ssm_parameter\.\w+\.\*\.value\)\}$/);
  });

  it("fails the plan for versions 1 to 5 with the CDK rule's message", () => {
    const { json } = synthesize((scope) => new BootstrapVersionCheck(scope, "bootstrap"));
    const check = only(json.resource, "terraform_data");
    const localName = Object.keys(json.locals ?? {})[0];
    expect(check.lifecycle.precondition).toEqual([{
      condition: `\${!contains(["1", "2", "3", "4", "5"], local.${localName})}`,
      error_message: BOOTSTRAP_VERSION_MESSAGE,
    }]);
    expect(BOOTSTRAP_VERSION_MESSAGE).toMatch(/bootstrap stack version 6 required/);
    expect(BOOTSTRAP_VERSION_MESSAGE).toMatch(/run 'cdk bootstrap' with a recent version of the CDK CLI/);
  });

  it("needs no provider when told not to read Parameter Store: the version variable is then required", () => {
    const { json } = synthesize((scope) => new BootstrapVersionCheck(scope, "bootstrap", { readFromParameterStore: false }));
    expect(json.data).toBeUndefined();
    expect(json.variable?.bootstrap_version_parameter).toBeUndefined();
    expect(json.variable?.bootstrap_version.default).toBeUndefined();
    expect(only(json.resource, "terraform_data").lifecycle.precondition[0].condition)
      .toBe('${!contains(["1", "2", "3", "4", "5"], var.bootstrap_version)}');
  });
});
