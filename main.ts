import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { App, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import { HASHED_ADDRESSES, moveFromEarlierAddresses } from "./constructs/addresses";
import { BootstrapVersionCheck } from "./constructs/bootstrap-version-check";
import { CrmInstance, INSTANCE_TYPE } from "./constructs/crm-instance";
import { CrmSecurityGroup } from "./constructs/crm-security-group";
import { DataVolume } from "./constructs/data-volume";
import { DataVolumeBackups } from "./constructs/data-volume-backups";
import { DeploymentVariables } from "./constructs/deployment-variables";
import { ElasticIp } from "./constructs/elastic-ip";
import { HostAlarms } from "./constructs/host-alarms";
import { HostOutputs } from "./constructs/host-outputs";
import { ImageArchitectureCheck } from "./constructs/image-architecture-check";
import { InstanceRole } from "./constructs/instance-role";
import { ProvisioningUserData, UserDataTooLarge } from "./constructs/provisioning-user-data";
import { SecretParameters } from "./constructs/secret-parameters";
import { SecretVariables } from "./constructs/secret-variables";
import { SecretsReadPolicy } from "./constructs/secrets-read-policy";
import { SiteDomain } from "./constructs/site-domain";
import { SshKeyPair } from "./constructs/ssh-key-pair";
import { SsmImageParameter } from "./constructs/ssm-image-parameter";
import { StateBackend } from "./constructs/state-backend";
import { SubnetPlacement } from "./constructs/subnet-placement";
import { loadEnvironments } from "./settings/environments";
import { SettingsProblem } from "./settings/errors";
import { StackSettings } from "./settings/stack-settings";
import { usesIpv6Metadata } from "./userdata/host";

/** The oldest Terraform that can run the stack: 1.10 brought S3-native state locking (`use_lockfile`). */
export const MINIMUM_TERRAFORM_VERSION = ">= 1.10.0";

/** The CRM host of the spec: one EC2 instance with its firewall, identity, key pair and first-boot script. */
export class CrmHostStack extends TerraformStack {
  constructor(scope: Construct, settings: StackSettings) {
    super(scope, settings.stackName);
    // No typed binding for required_version on a stack: an override of the terraform block.
    this.addOverride("terraform.required_version", MINIMUM_TERRAFORM_VERSION);
    new StateBackend(this, "state", { settings: settings.backend, defaultRegion: settings.region });
    const nameTag = `${settings.stackName}/${settings.instanceName}`;

    new AwsProvider(this, "aws", { region: settings.region });
    const inputs = new DeploymentVariables(this, "inputs", { region: settings.region });
    // The three secrets: sensitive variables written into the user data (the spec), or parameters the host reads at boot.
    const secrets = settings.provisioning.secrets === "parameter-store"
      ? new SecretParameters(this, "secret_parameters", { stackName: settings.stackName, region: settings.region })
      : new SecretVariables(this, "secrets");
    new BootstrapVersionCheck(this, "bootstrap");
    const image = new SsmImageParameter(this, "image");
    new ImageArchitectureCheck(this, "image_architecture", {
      imageId: image.imageId, instanceType: INSTANCE_TYPE, imageParameter: image.parameterName,
    });
    const placement = new SubnetPlacement(this, "placement", {
      subnetId: "var.subnet_id", givenVpcId: "var.vpc_id", givenAvailabilityZone: "var.availability_zone",
    });
    const { domain } = settings.provisioning;

    const securityGroup = new CrmSecurityGroup(this, "security_group", {
      vpcId: placement.vpcId,
      sshIngressCidrs: inputs.sshIngressCidrs.listValue,
      appIngressCidrs: inputs.appIngressCidrs.listValue,
      inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
      inboundRuleNames: { cidrs: 'variable "ssh_ingress_cidrs" or "app_ingress_cidrs"', quota: "variable inbound_rule_quota" },
      https: domain !== undefined,
    });
    const keyPair = new SshKeyPair(this, "key_pair", {
      keyName: inputs.keyPairName.stringValue,
      publicKey: inputs.sshPublicKey.stringValue,
    });
    const identity = new InstanceRole(this, "instance_role", { nameTag });
    // The role's one policy, in parameter-store mode only: the instance reads its secrets with it at first boot.
    const secretsPolicy = secrets instanceof SecretParameters ? new SecretsReadPolicy(this, "secrets_policy", {
      roleName: identity.role.name, parameterArns: secrets.arns, kmsKeyId: settings.secretsKmsKeyId, region: settings.region,
    }) : undefined;
    // Created before the instance, whose user data names it; attached after.
    const backupTag = { Backup: `${nameTag}/data` };
    const dataVolume = new DataVolume(this, "data_volume", {
      availabilityZone: placement.availabilityZone,
      nameTag: `${nameTag}/data`,
      tags: backupTag,
      preventDestroy: !settings.deleteDataVolumeOnDestroy,
    });
    // Allocated before the instance, whose user data names it; associated after.
    const address = new ElasticIp(this, "address", { nameTag });
    const userData = new ProvisioningUserData(this, "user_data", {
      settings: settings.provisioning,
      secrets: secrets instanceof SecretParameters ? secrets.names : secrets.scriptSecrets,
      dataVolumeId: dataVolume.volumeId,
      elasticIp: address.publicIp,
    });
    const host = new CrmInstance(this, "instance", {
      imageId: image.imageId,
      subnetId: inputs.subnetId.stringValue,
      availabilityZone: placement.availabilityZone,
      securityGroupIds: [securityGroup.id],
      keyName: keyPair.keyName,
      instanceProfileName: identity.instanceProfile.name,
      userDataBase64: userData.base64,
      nameTag,
      detailedMonitoring: inputs.detailedMonitoring.booleanValue,
      metadataIpv6: usesIpv6Metadata(settings.provisioning.metadataEndpoint),
      dependsOn: secretsPolicy ? [identity.role, secretsPolicy.policy] : [identity.role],
    });
    dataVolume.attachTo(host.instanceId);
    address.associateWith(host.instanceId);
    if (domain) new SiteDomain(this, "domain", { hostedZone: domain.hostedZone, recordName: domain.name, address: address.publicIp });
    new HostAlarms(this, "alarms", { instanceId: host.instanceId, region: settings.region, nameTag, email: settings.alarmEmail });
    new DataVolumeBackups(this, "backups", {
      targetTags: backupTag,
      stackName: settings.stackName,
      instanceName: settings.instanceName,
    });

    new HostOutputs(this, "outputs", {
      instanceName: settings.instanceName,
      nameTag,
      instanceId: host.instance.id,
      publicIp: address.publicIp,
      publicDns: address.publicDns,
      domainName: domain?.name,
      loginUser: settings.provisioning.loginUser,
      provisioningLog: settings.provisioning.logFile,
      dataVolumeId: dataVolume.volumeId,
    });
    // Deployments made before the readable names keep every resource: the hashed addresses move to them.
    moveFromEarlierAddresses(this, HASHED_ADDRESSES);
  }
}

/**
 * Synthesizes one stack per settings file: `$CRM_SETTINGS` (files or directories, comma-separated;
 * see settings/environments.ts), else the example set.
 */
export function synthesize(app: App = new App(), environments: StackSettings[] = loadEnvironments()): App {
  for (const settings of environments) new CrmHostStack(app, settings);
  app.synth();
  return app;
}

/** The app's entry point: `cdktf synth|diff|deploy|destroy` runs it (cdktf.json: `node --import tsx main.ts`). */
export function main(): void {
  try {
    synthesize();
  } catch (error) {
    // A bad setting or settings file is the user's to fix: show the message, not a stack trace.
    if (!(error instanceof SettingsProblem || error instanceof UserDataTooLarge)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

if (require.main === module) main();
