import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import { Fn, Op, TerraformCount, TerraformLocal, TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { PlanCheck } from "./plan-check";
import { matchesPattern, stackVariable, UNPRINTABLE_CLASS, UNPRINTABLE_WORDS } from "./variable-rules";

/** Where the CDK's default bootstrap (qualifier hnb659fds) records its version. */
export const CDK_BOOTSTRAP_VERSION_PARAMETER = "/cdk-bootstrap/hnb659fds/version";

/** Bootstrap versions the CDK rule CheckBootstrapVersion rejects. */
export const REJECTED_BOOTSTRAP_VERSIONS = ["1", "2", "3", "4", "5"];

/** The CDK rule's message, word for word. */
export const BOOTSTRAP_VERSION_MESSAGE =
  "Cdk bootstrap stack version 6 required. Please run 'cdk bootstrap' with a recent version of the CDK CLI.";

/** Props of {@link BootstrapVersionCheck}. */
export interface BootstrapVersionCheckProps {
  /**
   * Whether the version may be read from Parameter Store (needs the AWS provider). When false,
   * the `bootstrap_version` variable is required instead; the provider-free engine tests use this.
   * @default true
   */
  readonly readFromParameterStore?: boolean;
  /**
   * Terraform name of the check, the data source and the local value (`terraform_data.<name>`, `data.aws_ssm_parameter.<name>`, `local.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "cdk_bootstrap_version"
   */
  readonly name?: string;
}

/**
 * The CDK deployment rule CheckBootstrapVersion as a Terraform precondition: planning fails
 * when the bootstrap version is one of 1 to 5, and passes for 6, anything newer and anything
 * that is not one of those five strings, exactly as `Fn::Not [Fn::Contains [[1..5], Ref BootstrapVersion]]`.
 *
 * The version comes from the `bootstrap_version` variable when it is set (for accounts that
 * never ran `cdk bootstrap`), otherwise from the Parameter Store path in `bootstrap_version_parameter`.
 */
export class BootstrapVersionCheck extends Construct {
  /** `bootstrap_version`: the version given directly, or "" to read it from Parameter Store. */
  public readonly versionOverride: TerraformVariable;
  /** `bootstrap_version_parameter`: where the version is read from (absent when reading is disabled). */
  public readonly parameterName?: TerraformVariable;
  /** The version the precondition judges. */
  public readonly version: string;
  /** The `terraform_data` resource that carries the precondition. */
  public readonly check: PlanCheck;

  constructor(scope: Construct, id: string, props: BootstrapVersionCheckProps = {}) {
    super(scope, id);
    const readFromParameterStore = props.readFromParameterStore ?? true;
    const name = props.name ?? "cdk_bootstrap_version";

    this.versionOverride = stackVariable(this, "bootstrap_version", {
      type: "string",
      nullable: false,
      ...(readFromParameterStore ? { default: "" } : {}),
      description: readFromParameterStore
        ? 'Bootstrap version to check instead of reading it from Parameter Store: set it (e.g. "6") in accounts ' +
          'that never ran "cdk bootstrap". Empty: read it from bootstrap_version_parameter.'
        : "Bootstrap version to check.",
    });
    this.versionOverride.addValidation(matchesPattern(this.versionOverride, `^[^${UNPRINTABLE_CLASS}]{0,64}$`,
      `at most 64 characters, with ${UNPRINTABLE_WORDS}`));

    if (readFromParameterStore) {
      this.parameterName = stackVariable(this, "bootstrap_version_parameter", {
        type: "string",
        nullable: false,
        default: CDK_BOOTSTRAP_VERSION_PARAMETER,
        description:
          "Version of the CDK Bootstrap resources in this environment, automatically retrieved from SSM Parameter Store. [cdk:skip]",
      });
      this.parameterName.addValidation(matchesPattern(this.parameterName, "^/[A-Za-z0-9_./-]+$",
        "a Parameter Store path starting with / (letters, digits, _ . - /)"));
      // cdktf 0.21's Op renders a falsy operand ("" or 0) as `undefined`: compare the length with 1.
      const overridden = Op.gte(Fn.lengthOf(this.versionOverride.stringValue), 1);
      const parameter = new DataAwsSsmParameter(this, "parameter", {
        name: this.parameterName.stringValue,
        // Read only when no version is given, so accounts without the parameter can still plan.
        count: TerraformCount.of(Fn.conditional(overridden, 0, 1)),
      });
      nameElements(name, parameter);
      const stored = Fn.one(parameter.getListAttribute("*.value"));
      const version = new TerraformLocal(this, "version", Fn.conditional(overridden, this.versionOverride.stringValue, stored));
      nameElements(name, version);
      this.version = version.asString;
    } else {
      this.version = this.versionOverride.stringValue;
    }

    this.check = new PlanCheck(this, "check", {
      name,
      input: { bootstrap_version_checked: true },
      preconditions: [{
        condition: Op.not(Fn.contains(REJECTED_BOOTSTRAP_VERSIONS, this.version)),
        errorMessage: BOOTSTRAP_VERSION_MESSAGE,
      }],
    });
  }
}
