import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { App, TerraformOutput, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import { BootstrapVersionCheck } from "./constructs/bootstrap-version-check";
import { CrmInstance } from "./constructs/crm-instance";
import { CrmSecurityGroup } from "./constructs/crm-security-group";
import { DataVolume } from "./constructs/data-volume";
import { DataVolumeBackups } from "./constructs/data-volume-backups";
import { DeploymentVariables } from "./constructs/deployment-variables";
import { InstanceRole } from "./constructs/instance-role";
import { ProvisioningUserData } from "./constructs/provisioning-user-data";
import { SecretVariables } from "./constructs/secret-variables";
import { SshKeyPair } from "./constructs/ssh-key-pair";
import { SsmImageParameter } from "./constructs/ssm-image-parameter";
import { SettingsError } from "./settings/errors";
import { loadStackSettings, StackSettings } from "./settings/stack-settings";

/** The CRM host of the spec: one EC2 instance with its firewall, identity, key pair and first-boot script. */
export class CrmHostStack extends TerraformStack {
  constructor(scope: Construct, settings: StackSettings) {
    super(scope, settings.stackName);
    const nameTag = `${settings.stackName}/${settings.instanceName}`;

    new AwsProvider(this, "aws", { region: settings.region });
    const inputs = new DeploymentVariables(this, "inputs");
    const secrets = new SecretVariables(this, "secrets");
    new BootstrapVersionCheck(this, "bootstrap");
    const image = new SsmImageParameter(this, "image");

    const securityGroup = new CrmSecurityGroup(this, "security_group", {
      vpcId: inputs.vpcId.stringValue,
      sshIngressCidrs: inputs.sshIngressCidrs.listValue,
      appIngressCidrs: inputs.appIngressCidrs.listValue,
    });
    const keyPair = new SshKeyPair(this, "key_pair", {
      keyName: inputs.keyPairName.stringValue,
      publicKey: inputs.sshPublicKey.stringValue,
    });
    const identity = new InstanceRole(this, "instance_role", { nameTag });
    // Created before the instance, whose user data names it; attached after.
    const backupTag = { Backup: `${nameTag}/data` };
    const dataVolume = new DataVolume(this, "data_volume", {
      availabilityZone: inputs.availabilityZone.stringValue,
      nameTag: `${nameTag}/data`,
      tags: backupTag,
      preventDestroy: !settings.deleteDataVolumeOnDestroy,
    });
    const userData = new ProvisioningUserData(this, "user_data", {
      settings: settings.provisioning,
      secrets: secrets.scriptSecrets,
      dataVolumeId: dataVolume.volumeId,
    });
    const host = new CrmInstance(this, "instance", {
      imageId: image.imageId,
      subnetId: inputs.subnetId.stringValue,
      availabilityZone: inputs.availabilityZone.stringValue,
      securityGroupIds: [securityGroup.id],
      keyName: keyPair.keyName,
      instanceProfileName: identity.instanceProfile.name,
      userDataBase64: userData.base64,
      nameTag,
      detailedMonitoring: inputs.detailedMonitoring.booleanValue,
      dependsOn: [identity.role],
    });
    dataVolume.attachTo(host.instanceId);
    new DataVolumeBackups(this, "backups", {
      targetTags: backupTag,
      stackName: settings.stackName,
      instanceName: settings.instanceName,
    });

    new TerraformOutput(this, `${settings.instanceName}PublicIP`, {
      value: host.publicIp,
      description: `Public IP address of ${nameTag}`,
    });
  }
}

/** Synthesizes the stack described by the settings file (`$CRM_SETTINGS`, else the example set). */
export function synthesize(app: App = new App(), settings: StackSettings = loadStackSettings()): App {
  new CrmHostStack(app, settings);
  app.synth();
  return app;
}

if (require.main === module) {
  try {
    synthesize();
  } catch (error) {
    // A bad setting is the user's to fix: show the message, not a stack trace.
    if (!(error instanceof SettingsError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}
