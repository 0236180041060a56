import { Fn, TerraformVariable } from "cdktf";
import { Construct } from "constructs";
import { ScriptSecrets } from "../settings/provisioning-settings";
import { MAX_SECRET_LENGTH } from "./constants";
import { PlanCheck } from "./plan-check";
import { dotenvValue, printableText, stackVariable, variableReference } from "./variable-rules";

/** Props of {@link SecretVariables}. */
export interface SecretVariablesProps {
  /**
   * Longest value accepted for each secret.
   * @default MAX_SECRET_LENGTH (256)
   */
  readonly maxLength?: number;
  /**
   * Terraform name of the resource that checks the secrets (`terraform_data.<name>`).
   * @default "secrets"
   */
  readonly name?: string;
}

/**
 * The three secrets of the provisioning script as sensitive Terraform variables with no
 * default, so they are given at plan time (`TF_VAR_db_root_password=…`) and never written
 * into the repository or into `cdk.tf.json`. Terraform redacts sensitive values in plans and logs.
 *
 * Their checks are preconditions of a `terraform_data` resource rather than `validation`
 * blocks: Terraform (1.8 and 1.11 measured) prints the rejected value of a variable in a
 * failed validation's diagnostic even when the variable is sensitive, whereas a failed
 * precondition prints only its message. The plan still stops before anything reaches AWS.
 */
export class SecretVariables extends Construct {
  /** `db_root_password`: `<DB_ROOT_PASSWORD>`, the MariaDB root password. */
  public readonly dbRootPassword: TerraformVariable;
  /** `app_db_password`: `<APP_DB_PASSWORD>`, the password of the application's database account. */
  public readonly appDbPassword: TerraformVariable;
  /** `source_host_token`: `<SOURCE_HOST_TOKEN>`, the personal access token used to clone the repository. */
  public readonly sourceHostToken: TerraformVariable;
  /** The `terraform_data` resource whose preconditions check the three secrets. */
  public readonly checks: PlanCheck;

  constructor(scope: Construct, id: string, props: SecretVariablesProps = {}) {
    super(scope, id);
    const maxLength = props.maxLength ?? MAX_SECRET_LENGTH;
    // The rules themselves are in the preconditions' messages (the rule column of docs/settings.md).
    const secret = (name: string, description: string): TerraformVariable =>
      stackVariable(this, name, {
        type: "string",
        sensitive: true,
        nullable: false,
        description: `${description} Give it as TF_VAR_${name}: Terraform prints a malformed *.tfvars line back, secret included.`,
      });
    this.dbRootPassword = secret("db_root_password", "MariaDB root password set at first boot.");
    this.appDbPassword = secret(
      "app_db_password",
      "Password of the application's database account, also written to the app's .env file (read with dotenv).",
    );
    this.sourceHostToken = secret(
      "source_host_token",
      "Personal access token that lets the instance clone the private repository.",
    );
    this.checks = new PlanCheck(this, "checks", {
      name: props.name ?? "secrets",
      preconditions: [
        ...this.all.map((variable) => printableText(variable, maxLength)),
        dotenvValue(this.appDbPassword),
      ],
    });
  }

  /** The three secrets' variables, in the order of their preconditions. */
  private get all(): TerraformVariable[] {
    return [this.dbRootPassword, this.appDbPassword, this.sourceHostToken];
  }

  /**
   * Holds the three secrets' base64 texts, together, within `bytes`: the room the provisioning script
   * leaves them in EC2's user data (`ProvisioningUserData.secretBudgetBytes`). Checked at plan,
   * where their lengths are known, so that a long secret in multi-byte characters fails there, not at RunInstances.
   */
  public limitEncodedLength(bytes: number): void {
    const lengths = this.all.map((variable) => `length(base64encode(${variableReference(variable)}))`).join(" + ");
    this.checks.addPrecondition({
      condition: `\${${lengths} <= ${bytes}}`,
      errorMessage:
        `db_root_password, app_db_password and source_host_token take more than ${bytes} bytes together in base64, ` +
        "the room the provisioning script leaves them in EC2's 16 KiB of user data: shorten them (a character outside ASCII " +
        'takes 2 to 4 bytes), or keep them in Parameter Store ("secrets": "parameter-store").',
    });
  }

  /**
   * The secrets as Terraform expressions that evaluate to their base64 text: the form the
   * provisioning script takes them in, whose alphabet needs no quoting in shell or JSON.
   */
  public get scriptSecrets(): ScriptSecrets {
    return {
      dbRootPasswordBase64: Fn.base64encode(this.dbRootPassword.stringValue),
      appDbPasswordBase64: Fn.base64encode(this.appDbPassword.stringValue),
      sourceHostTokenBase64: Fn.base64encode(this.sourceHostToken.stringValue),
    };
  }
}
