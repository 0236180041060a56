import { DataAwsSsmParametersByPath } from "@cdktf/provider-aws/lib/data-aws-ssm-parameters-by-path";
import { Fn, Op, TerraformCount, TerraformLocal, TerraformVariable, Token } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { PlanCheck } from "./plan-check";
import { variableReference } from "./variable-rules";

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
  /** `bootstrap_version` (BootstrapVariables'): the version given directly, or "" to read it from Parameter Store. */
  readonly version: TerraformVariable;
  /**
   * `bootstrap_version_parameter` (BootstrapVariables'): the Parameter Store path the version is read from
   * when `version` is empty (needs the AWS provider).
   * @default - nothing is read: the version is `version`'s value (the provider-free engine tests)
   */
  readonly parameterName?: TerraformVariable;
  /**
   * Reads the parameters under a path (the directory of `parameterName`) in place of
   * the `aws_ssm_parameters_by_path` data source: the provider-free engine tests give variables here,
   * and the check's own expressions then judge them as they would judge what Parameter Store holds.
   * @default - the data source, read only when `version` is empty
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
 * The version comes from `bootstrap_version` when it is set, otherwise from the Parameter Store
 * path in `bootstrap_version_parameter` (both declared by BootstrapVariables). It is read with `aws_ssm_parameters_by_path`
 * on the path's directory, which yields empty lists where `aws_ssm_parameter` would fail: in an
 * account that never ran `cdk bootstrap` the parameter is absent, and the check passes, as the
 * CloudFormation rule did with no BootstrapVersion to compare.
 */
export class BootstrapVersionCheck extends Construct {
  /** The version the precondition judges. */
  public readonly version: string;
  /** The `terraform_data` resource that carries the precondition. */
  public readonly check: PlanCheck;

  constructor(scope: Construct, id: string, props: BootstrapVersionCheckProps) {
    super(scope, id);
    const name = props.name ?? "cdk_bootstrap_version";
    if (props.parameterName) {
      const given = variableReference(props.version);
      const path = variableReference(props.parameterName);
      // HCL text, not cdktf's Fn: its lookup() drops the default, and it does not escape arguments.
      const overridden = `length(${given}) >= 1`;
      const stored = props.storedParameters?.(this) ?? this.readParameters(name, overridden, path);
      // "" when the parameter is absent: not one of the rejected versions.
      const version = new TerraformLocal(
        this,
        "version",
        `\${${overridden} ? ${given} : ` + `lookup(zipmap(${stored.names}, ${stored.values}), ${path}, "")}`,
      );
      nameElements(name, version);
      this.version = version.asString;
    } else {
      this.version = props.version.stringValue;
    }

    this.check = new PlanCheck(this, "check", {
      name,
      input: { bootstrap_version_checked: true },
      preconditions: [
        {
          condition: Op.not(Fn.contains(REJECTED_BOOTSTRAP_VERSIONS, this.version)),
          errorMessage: BOOTSTRAP_VERSION_MESSAGE,
        },
      ],
    });
  }

  /** The data source of the parameters in the directory of `path` (an HCL reference), read only when no version is given. */
  private readParameters(name: string, overridden: string, path: string): StoredParameters {
    const parameters = new DataAwsSsmParametersByPath(this, "parameters", {
      path: `\${replace(${path}, "/[/][^/]+$/", "")}`,
      count: TerraformCount.of(Token.asNumber(`\${${overridden} ? 0 : 1}`)),
    });
    nameElements(name, parameters);
    const address = `data.${parameters.terraformResourceType}.${name}`;
    return { names: `one(${address}[*].names)`, values: `one(${address}[*].values)` };
  }
}
