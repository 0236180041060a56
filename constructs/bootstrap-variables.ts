import { TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { CDK_BOOTSTRAP_VERSION_PARAMETER } from "./bootstrap-version-check";
import { matchesPattern, stackVariable, UNPRINTABLE_CLASS, UNPRINTABLE_WORDS } from "./variable-rules";

/** Props of {@link BootstrapVariables}. */
export interface BootstrapVariablesProps {
  /**
   * Whether the version may be read from Parameter Store (needs the AWS provider): declares
   * `bootstrap_version_parameter` and gives `bootstrap_version` the default "". When false,
   * `bootstrap_version` is required instead; the provider-free engine tests use this.
   * @default true
   */
  readonly readFromParameterStore?: boolean;
}

/**
 * The variables of BootstrapVersionCheck, which both topologies take: `bootstrap_version` (the version
 * given directly) and `bootstrap_version_parameter` (where it is read from otherwise), each with a
 * `validation` block whose message names the variable and the expected form.
 */
export class BootstrapVariables extends Construct {
  /** `bootstrap_version`: the version given directly, or "" to read it from Parameter Store. */
  public readonly version: TerraformVariable;
  /** `bootstrap_version_parameter`: where the version is read from (absent when reading is disabled). */
  public readonly parameterName?: TerraformVariable;

  constructor(scope: Construct, id: string, props: BootstrapVariablesProps = {}) {
    super(scope, id);
    const readFromParameterStore = props.readFromParameterStore ?? true;
    this.version = stackVariable(this, "bootstrap_version", {
      type: "string",
      nullable: false,
      ...(readFromParameterStore ? { default: "" } : {}),
      description: readFromParameterStore
        ? "Bootstrap version to check instead of reading it from Parameter Store (for a deployer without " +
          "ssm:GetParametersByPath). Empty: read it from bootstrap_version_parameter; an absent parameter passes."
        : "Bootstrap version to check.",
    });
    this.version.addValidation(
      matchesPattern(
        this.version,
        `^[^${UNPRINTABLE_CLASS}]{0,64}$`,
        `at most 64 characters, with ${UNPRINTABLE_WORDS}`,
      ),
    );

    if (readFromParameterStore) {
      this.parameterName = stackVariable(this, "bootstrap_version_parameter", {
        type: "string",
        nullable: false,
        default: CDK_BOOTSTRAP_VERSION_PARAMETER,
        description:
          "Version of the CDK Bootstrap resources in this environment, automatically retrieved from SSM Parameter Store.",
      });
      // Two levels at least: the directory of the parameter is what the check reads.
      this.parameterName.addValidation(
        matchesPattern(
          this.parameterName,
          "^(/[A-Za-z0-9_.-]+){2,}$",
          "a Parameter Store path of two or more levels, such as /cdk-bootstrap/hnb659fds/version (letters, digits, _ . - /)",
        ),
      );
    }
  }
}
