import { DataAwsCallerIdentity } from "@cdktf/provider-aws/lib/data-aws-caller-identity";
import { awsName } from "./aws-names";
import { DataAwsResourcegroupstaggingapiResources } from "@cdktf/provider-aws/lib/data-aws-resourcegroupstaggingapi-resources";
import { partition } from "@aws-sdk/util-endpoints";
import { TerraformLocal } from "cdktf";
import { Construct } from "constructs";
import { SecretParameterNames } from "../settings/provisioning-settings";
import { nameElements } from "./addresses";
import { PlanCheck } from "./plan-check";

/** The three secrets' parameters, by the key the script's settings use, and the last part of their names. */
export const SECRET_PARAMETER_LEAVES = {
  dbRootPassword: "db-root-password",
  appDbPassword: "app-db-password",
  sourceHostToken: "source-host-token",
} as const;

/** Tag that `npm run secrets -- <stack> set` puts on each parameter: the tagging API, which the plan-time check reads, lists only tagged resources. */
export const SECRET_PARAMETER_TAG = "crm-host:stack";

/** The names of a stack's three parameters: `/<stackName>/crm/db-root-password`, `…/app-db-password`, `…/source-host-token`. */
export function secretParameterNames(stackName: string): Record<keyof typeof SECRET_PARAMETER_LEAVES, string> {
  const names = Object.entries(SECRET_PARAMETER_LEAVES).map(([key, leaf]) => [
    key,
    awsName("ssmParameterName", `/${stackName}/crm/${leaf}`, "stackName"),
  ]);
  return Object.fromEntries(names) as Record<keyof typeof SECRET_PARAMETER_LEAVES, string>;
}

/** The ARN of a parameter (`name` starts with /): `arn:<partition>:ssm:<region>:<account>:parameter/<name without its first />`. */
export function parameterArn(region: string, accountId: string, name: string): string {
  return `arn:${partition(region).name}:ssm:${region}:${accountId}:parameter${name}`;
}

/** Props of {@link SecretParameters}. */
export interface SecretParametersProps {
  /** `<stack_name>`: the parameters are `/<stackName>/crm/…`. */
  readonly stackName: string;
  /**
   * Whether the database root password is one of them: the single host's. The scale-out topology's hosts
   * read the database's master password from the secret RDS keeps (constructs/managed-database.ts).
   * @default true
   */
  readonly rootPassword?: boolean;
  /** Region of the parameters: the stack's. */
  readonly region: string;
  /**
   * The AWS account of the parameters (a Terraform expression).
   * @default - the deploying account, read by `data.aws_caller_identity.<name>`
   */
  readonly accountId?: string;
  /**
   * ARNs found among the parameters' ARNs (a Terraform list expression); the provider-free engine tests give a variable.
   * @default - those the Resource Groups Tagging API lists, read by `data.aws_resourcegroupstaggingapi_resources.<name>`
   */
  readonly listedArns?: string[];
  /**
   * Terraform name of the data sources (`data.<type>.<name>`), and stem of the locals' names (`local.<name>_…`).
   * @default "crm_secrets"
   */
  readonly name?: string;
  /**
   * Terraform name of the check (`terraform_data.<checkName>`): the user-data mode's secret checks have the same.
   * @default "secrets"
   */
  readonly checkName?: string;
}

/**
 * The secrets as SecureString parameters that the operator puts (`npm run secrets`), in `parameter-store`
 * mode: their names and ARNs, and a plan-time check that they exist, naming the missing ones.
 *
 * The check reads names only. The AWS provider's SSM data sources (`aws_ssm_parameter`,
 * `aws_ssm_parameters_by_path`, hashicorp/aws 6.25) store the value in the state, a SecureString's
 * ciphertext even with `with_decryption = false`; the Resource Groups Tagging API lists ARNs and tags,
 * and only of tagged resources, so `npm run secrets -- <stack> set` tags each parameter.
 */
export class SecretParameters extends Construct {
  /** The parameters' names, and their region: what the provisioning script reads. */
  public readonly names: SecretParameterNames;
  /** The parameters' ARNs (Terraform expressions), in the order db root password (when read), app password, token. */
  public readonly arns: string[];
  /** The `terraform_data` resource whose precondition fails naming the missing parameters. */
  public readonly check: PlanCheck;

  constructor(scope: Construct, id: string, props: SecretParametersProps) {
    super(scope, id);
    const name = props.name ?? "crm_secrets";
    let accountId = props.accountId;
    if (accountId === undefined) {
      const caller = new DataAwsCallerIdentity(this, "caller");
      nameElements(name, caller);
      accountId = caller.accountId;
    }
    const { dbRootPassword, ...others } = secretParameterNames(props.stackName);
    const names = (props.rootPassword ?? true) ? { dbRootPassword, ...others } : others;
    this.names = { region: props.region, ...names };
    this.arns = Object.values(names).map((parameter) => parameterArn(props.region, accountId, parameter));
    let listedArns = props.listedArns;
    if (listedArns === undefined) {
      const tagged = new DataAwsResourcegroupstaggingapiResources(this, "tagged", { resourceArnList: this.arns });
      nameElements(name, tagged);
      listedArns = tagged.getListAttribute("resource_tag_mapping_list[*].resource_arn");
    }
    const byName = new TerraformLocal(
      this,
      "parameters",
      Object.fromEntries(Object.values(names).map((parameter, i) => [parameter, this.arns[i]])),
    );
    nameElements(`${name}_parameters`, byName);
    const listed = new TerraformLocal(this, "listed", listedArns);
    nameElements(`${name}_listed`, listed);
    const missing = new TerraformLocal(
      this,
      "missing",
      `\${[for parameter, arn in local.${name}_parameters : parameter if !contains(local.${name}_listed, arn)]}`,
    );
    nameElements(`${name}_missing`, missing);
    this.check = new PlanCheck(this, "check", {
      name: props.checkName ?? "secrets",
      preconditions: [
        {
          condition: `\${length(local.${name}_missing) == 0}`,
          errorMessage:
            `Parameter Store (${props.region}) has no \${join(", ", local.${name}_missing)}: put the secrets with ` +
            `"npm run secrets -- ${props.stackName} set", which also tags them ${SECRET_PARAMETER_TAG} (the check sees tagged parameters only); see docs/secrets.md.`,
        },
      ],
    });
  }
}
