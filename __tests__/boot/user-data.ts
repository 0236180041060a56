/**
 * The user data of a boot test's host, as the stack ships it: the stack's ProvisioningUserData,
 * evaluated by the Terraform engine (apply on a local state) with the test's secrets, gzip bytes
 * and all. Nothing is stubbed: the secrets reach the script only through Terraform.
 */
import { TerraformOutput } from "cdktf";
import { Construct } from "constructs";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { SecretVariables } from "../../constructs/secret-variables";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { synthesize } from "../support/synth";
import { EngineWorkspace, tfVars } from "../support/terraform-engine";

/**
 * The user data bytes for `settings`, with the data volume `dataVolumeId` and, if given, the Elastic IP `elasticIp`
 * and the log group `logGroupName` the host ships its logs to.
 */
export function engineUserData(engine: string, settings: ProvisioningSettings, secrets: Record<string, string>,
  dataVolumeId: string, elasticIp?: string, logGroupName?: string): Promise<Buffer> {
  return appliedUserData(engine, (scope) => {
    const variables = new SecretVariables(scope, "secrets");
    return new ProvisioningUserData(scope, "user_data", { settings, secrets: variables.scriptSecrets, dataVolumeId, elasticIp, logGroupName });
  }, secrets);
}

/** The user data bytes of the ProvisioningUserData that `make` builds, as `terraform apply` evaluates it with the variables `vars`. */
export async function appliedUserData(engine: string, make: (scope: Construct) => ProvisioningUserData, vars: Record<string, string> = {}): Promise<Buffer> {
  const { json } = synthesize((scope) => {
    new TerraformOutput(scope, "user_data_base64", { value: make(scope).base64, sensitive: true });
  });
  const workspace = new EngineWorkspace(engine, json);
  try {
    await workspace.init();
    const applied = await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"], tfVars(vars));
    if (applied.code !== 0) throw new Error(`terraform apply failed:\n${applied.stdout}\n${applied.stderr}`);
    return Buffer.from((await workspace.run(["output", "-raw", "user_data_base64"])).stdout, "base64");
  } finally {
    workspace.remove();
  }
}
