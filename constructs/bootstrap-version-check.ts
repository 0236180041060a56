import { DataAwsSsmParametersByPath } from "@cdktf/provider-aws/lib/data-aws-ssm-parameters-by-path";
import { Fn, Op, TerraformCount, TerraformLocal, TerraformVariable, Token } from "cdktf";
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

/** The parameters found under a Parameter Store path: HCL expressions (without `${}`) of two lists of strings, in the same order. */
export interface StoredParameters {
  readonly names: string;
  readonly values: string;
}

/** Props of {@link BootstrapVersionCheck}. */
export interface BootstrapVersionCheckProps {
  /**
   * Whether the version may be read from Parameter Store (needs the AWS provider). When false,
   * the `bootstrap_version` variable is required instead; the provider-free engine tests use this.
   * @default true
   */
  readonly readFromParameterStore?: boolean;
  /**
   * Reads the parameters under a path (the directory of `bootstrap_version_parameter`) in place of
   * the `aws_ssm_parameters_by_path` data source: the provider-free engine tests give variables here,
   * and the check's own expressions then judge them as they would judge what Parameter Store holds.
   * @default - the data source, read only when `bootstrap_version` is empty
   */
  readonly storedParameters?: (scope: Construct) => StoredParameters;
  /**
   * Terraform name of the check, the data source and the local value (`terraform_data.<name>`, `data.aws_ssm_parameters_by_path.<name>`, `local.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "cdk_bootstrap_version"
   */
  readonly name?: string;
}

/**
 * The CDK deployment rule CheckBootstrapVersion as a Terraform precondition: planning fails
 * when the bootstrap version is one of 1 to 5, and passes for 6, anything newer and anything
 * that is not one of those five strings, exactly as `Fn::Not [Fn::Contains [[1..5], Ref BootstrapVersion]]`.
 *
 * The version comes from the `bootstrap_version` variable when it is set, otherwise from the
 * Parameter Store path in `bootstrap_version_parameter`. It is read with `aws_ssm_parameters_by_path`
 * on the path's directory, which yields empty lists where `aws_ssm_parameter` would fail: in an
 * account that never ran `cdk bootstrap` the parameter is absent, and the check passes, as the
 * CloudFormation rule did with no BootstrapVersion to compare.
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
        ? "Bootstrap version to check instead of reading it from Parameter Store (for a deployer without " +
          "ssm:GetParametersByPath). Empty: read it from bootstrap_version_parameter; an absent parameter passes."
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
          "Version of the CDK Bootstrap resources in this environment, automatically retrieved from SSM Parameter Store.",
      });
      // Two levels at least: the directory of the parameter is what the data source reads.
      this.parameterName.addValidation(matchesPattern(this.parameterName, "^(/[A-Za-z0-9_.-]+){2,}$",
        "a Parameter Store path of two or more levels, such as /cdk-bootstrap/hnb659fds/version (letters, digits, _ . - /)"));
      // HCL text, not cdktf's Fn: its lookup() drops the default, and it does not escape arguments.
      const overridden = "length(var.bootstrap_version) >= 1";
      const stored = props.storedParameters?.(this) ?? this.readParameters(name, overridden);
      // "" when the parameter is absent: not one of the rejected versions.
      const version = new TerraformLocal(this, "version", `\${${overridden} ? var.bootstrap_version : ` +
        `lookup(zipmap(${stored.names}, ${stored.values}), var.bootstrap_version_parameter, "")}`);
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

  /** The data source of the parameters in the directory of `bootstrap_version_parameter`, read only when no version is given. */
  private readParameters(name: string, overridden: string): StoredParameters {
    const parameters = new DataAwsSsmParametersByPath(this, "parameters", {
      path: '${replace(var.bootstrap_version_parameter, "/[/][^/]+$/", "")}',
      count: TerraformCount.of(Token.asNumber(`\${${overridden} ? 0 : 1}`)),
    });
    nameElements(name, parameters);
    const address = `data.${parameters.terraformResourceType}.${name}`;
    return { names: `one(${address}[*].names)`, values: `one(${address}[*].values)` };
  }
}
