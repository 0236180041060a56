/**
 * The user data of a boot test's host as AWS stores it: the stack's ProvisioningUserData, evaluated by
 * Terraform with the test's secrets (TF_VAR_ environment, never argv), given as `user_data_base64` to a
 * real `aws_instance` that hashicorp/aws (the project's CLI configuration: the machine's mirror, or the
 * registry) creates in moto's EC2, then read back with the AWS CLI's `ec2 describe-instance-attribute
 * --attribute userData` and decoded. Those bytes are what the VM boots. The same apply outputs the
 * expression's value as Terraform rendered it, so a caller can show the two are the same bytes.
 * Nothing is stubbed: the secrets reach the script only through Terraform. One init and one apply per
 * host, each bounded; the working directory (its state holds the secrets) is removed afterwards.
 */
import { DataAwsSsmParameter } from "@cdktf/provider-aws/lib/data-aws-ssm-parameter";
import { Instance } from "@cdktf/provider-aws/lib/instance";
import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { createHash } from "crypto";
import { TerraformOutput } from "cdktf";
import { Construct } from "constructs";
import { INSTANCE_TYPE } from "../../constructs/constants";
import { HostModules } from "../../constructs/host-modules";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { SecretVariables } from "../../constructs/secret-variables";
import { AL2023_KERNEL_6_1_X86_64_PARAMETER } from "../../constructs/ssm-image-parameter";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { MotoServer } from "../support/moto-server";
import { awsJson, findProviderSetup, motoEnvironment, providerCopy } from "../support/real-provider";
import { synthesize } from "../support/synth";
import { EngineWorkspace, tfVars } from "../support/terraform-engine";
import { BOOT_REGION } from "./vm";

/** Bounds of the engine's steps: init (the provider from the mirror), and the apply that creates the instance. */
const INIT_LIMIT_MS = 2 * 60_000;
const APPLY_LIMIT_MS = 5 * 60_000;

/** Where the user data goes: the Terraform engine that applies, and the moto server whose EC2 keeps it. */
export interface UserDataTarget {
  readonly engine: string;
  readonly moto: MotoServer;
}

/** User data read back from EC2. */
export interface ReadBackUserData {
  /** What EC2 returned for the instance's userData attribute, base64-decoded: what the VM boots. */
  readonly bytes: Buffer;
  /** The user-data expression's value as Terraform rendered it in the same apply (an output), decoded. */
  readonly rendered: Buffer;
  /** The instance that hashicorp/aws created in moto's EC2 with it. */
  readonly instanceId: string;
  /** The provider's version (the mirror's), or "(registry)". */
  readonly provider: string;
  /** How long init, apply and the read-back took. */
  readonly seconds: number;
}

/** The project's Terraform CLI configuration (TF_CLI_CONFIG_FILE); the boot test lists it as a tool it needs. */
export function userDataToolsMissing(): string[] {
  return findProviderSetup() ? [] : ["the project's Terraform CLI configuration ($TF_CLI_CONFIG_FILE, npm run tools)"];
}

/** Where a boot test's host keeps its modules: each its own, as each stack has, since the hosts share one moto. */
export function bootModulePath(host: string): string {
  return `/crm-boot/${host}/modules`;
}

/**
 * The user data for `settings` in user-data mode (the three secrets as TF_VAR_s), with the data volume `dataVolumeId` and,
 * if given, the Elastic IP `elasticIp` and the log group `logGroupName` the host ships its logs to; its modules under
 * `modulePath` (bootModulePath).
 */
export function engineUserData(
  target: UserDataTarget,
  settings: ProvisioningSettings,
  secrets: Record<string, string>,
  dataVolumeId: string,
  elasticIp: string | undefined,
  logGroupName: string | undefined,
  modulePath: string,
): Promise<ReadBackUserData> {
  return appliedUserData(
    target,
    (scope) => {
      const variables = new SecretVariables(scope, "secrets");
      return new ProvisioningUserData(scope, "user_data", {
        settings,
        secrets: variables.scriptSecrets,
        dataVolumeId,
        elasticIp,
        logGroupName,
        modulePath,
      });
    },
    secrets,
  );
}

/**
 * The user data of the ProvisioningUserData that `make` builds, with the variables `vars`: given to an `aws_instance`
 * that `terraform apply` creates in moto's EC2, and read back from there.
 */
export async function appliedUserData(
  target: UserDataTarget,
  make: (scope: Construct) => ProvisioningUserData,
  vars: Record<string, string> = {},
): Promise<ReadBackUserData> {
  const setup = findProviderSetup();
  if (!setup)
    throw new Error(`no Terraform CLI configuration for the AWS provider: ${userDataToolsMissing().join("")}`);
  const started = Date.now();
  const { json } = synthesize((scope) => {
    new AwsProvider(scope, "aws", { region: BOOT_REGION });
    const userData = make(scope);
    // Its modules, in the same moto's Parameter Store, which the VM's first boot reads (no role: moto asks no one).
    const modules = new HostModules(scope, "modules", { settings: userData.settings, path: userData.modulePath });
    // The stack's default image, as moto's copy of the public parameter names it.
    const image = new DataAwsSsmParameter(scope, "image", { name: AL2023_KERNEL_6_1_X86_64_PARAMETER });
    const instance = new Instance(scope, "host", {
      ami: image.value,
      instanceType: INSTANCE_TYPE,
      userDataBase64: userData.base64,
      dependsOn: modules.dependables,
    });
    new TerraformOutput(scope, "user_data_base64", { value: userData.base64, sensitive: true });
    new TerraformOutput(scope, "instance_id", { value: instance.id });
  });
  const workspace = new EngineWorkspace(target.engine, providerCopy(json, setup.version));
  const env = { ...motoEnvironment(target.moto.endpoint, BOOT_REGION), TF_CLI_CONFIG_FILE: setup.cliConfig };
  try {
    const init = await workspace.run(["init", "-input=false", "-no-color"], env, {}, INIT_LIMIT_MS);
    if (init.code !== 0) throw new Error(`terraform init failed:\n${init.stdout}\n${init.stderr}`);
    // Only the engine's errors in a failure's message: its plan output lists the instance's arguments.
    const applied = await workspace.run(
      ["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"],
      { ...env, ...tfVars(vars) },
      {},
      APPLY_LIMIT_MS,
    );
    if (applied.code !== 0)
      throw new Error(
        `terraform apply (hashicorp/aws against moto) failed with exit ${applied.code}:\n${applied.stderr}`,
      );
    const output = await workspace.run(["output", "-json"], env, {}, INIT_LIMIT_MS);
    if (output.code !== 0) throw new Error(`terraform output failed:\n${output.stderr}`);
    const outputs = JSON.parse(output.stdout) as Record<string, { value: string }>;
    const instanceId = outputs.instance_id.value;
    // The real AWS CLI, as an operator reads an instance's user data back: the instance id is its only argument.
    const attribute = (await awsJson(
      ["ec2", "describe-instance-attribute", "--instance-id", instanceId, "--attribute", "userData"],
      env,
    )) as { UserData?: { Value?: string } };
    const stored = attribute.UserData?.Value;
    if (!stored) throw new Error(`EC2 (moto) returned no userData for ${instanceId}`);
    return {
      bytes: Buffer.from(stored, "base64"),
      rendered: Buffer.from(outputs.user_data_base64.value, "base64"),
      instanceId,
      provider: setup.version ?? "(registry)",
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    workspace.remove();
  }
}

/** The boot row of a host's user data: read back from EC2, byte-identical to Terraform's rendering. */
export function readBackRow(host: string, readBack: ReadBackUserData): [string, string, boolean] {
  const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex").slice(0, 12);
  const same = readBack.bytes.equals(readBack.rendered);
  return [
    `${host}user data booted = read back from EC2 = engine's rendering`,
    `${readBack.instanceId} (hashicorp/aws ${readBack.provider}, moto), ${readBack.bytes.length} bytes, sha256 ${sha(readBack.bytes)}` +
      `${same ? "" : ` but the engine rendered ${readBack.rendered.length} bytes, sha256 ${sha(readBack.rendered)}`}, ${readBack.seconds.toFixed(1)} s`,
    same && readBack.bytes.length > 0,
  ];
}
