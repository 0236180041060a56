import { BootstrapVariables } from "../../constructs/bootstrap-variables";
import { CDK_BOOTSTRAP_VERSION_PARAMETER } from "../../constructs/bootstrap-version-check";
import { synthesize } from "../support/synth";

describe("BootstrapVariables", () => {
  it("declares bootstrap_version, empty by default (read Parameter Store), and the parameter's path, CDK's default one", () => {
    const variables = synthesize((scope) => new BootstrapVariables(scope, "bootstrap_inputs")).json.variable ?? {};
    expect(CDK_BOOTSTRAP_VERSION_PARAMETER).toBe("/cdk-bootstrap/hnb659fds/version");
    expect(variables.bootstrap_version_parameter).toMatchObject({
      type: "string",
      nullable: false,
      default: CDK_BOOTSTRAP_VERSION_PARAMETER,
      description: expect.stringContaining("automatically retrieved from SSM Parameter Store"),
    });
    expect(variables.bootstrap_version).toMatchObject({ type: "string", nullable: false, default: "" });
    // The directory is what is read: the path must have one.
    expect(variables.bootstrap_version_parameter.validation?.[0].condition).toBe(
      '${can(regex("^(/[A-Za-z0-9_.-]+){2,}$", var.bootstrap_version_parameter))}',
    );
    expect(variables.bootstrap_version.validation).toEqual([
      {
        condition: expect.stringContaining('{0,64}$", var.bootstrap_version))}'),
        error_message: expect.stringMatching(
          /^Invalid value for variable "bootstrap_version": expected at most 64 characters, with /,
        ),
      },
    ]);
  });

  it("requires bootstrap_version and declares no parameter when told not to read Parameter Store", () => {
    const variables =
      synthesize((scope) => new BootstrapVariables(scope, "bootstrap_inputs", { readFromParameterStore: false })).json
        .variable ?? {};
    expect(variables.bootstrap_version_parameter).toBeUndefined();
    expect(variables.bootstrap_version.default).toBeUndefined();
    expect(variables.bootstrap_version.description).toBe("Bootstrap version to check.");
  });
});
