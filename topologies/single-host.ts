import { TerraformStack } from "cdktf";
import { SINGLE_HOST_RESOURCES } from "../constructs/addresses";
import { CrmInstance } from "../constructs/crm-instance";
import { CrmSecurityGroup } from "../constructs/crm-security-group";
import { DataVolume } from "../constructs/data-volume";
import { backupTargetTags, DataVolumeBackups } from "../constructs/data-volume-backups";
import { DataVolumeVariables } from "../constructs/data-volume-variables";
import { ElasticIp } from "../constructs/elastic-ip";
import { FrontHealthCheck } from "../constructs/front-health-check";
import { HostAlarms } from "../constructs/host-alarms";
import { HostHealthAlarms } from "../constructs/host-health-alarms";
import { HostLogGroup } from "../constructs/host-log-group";
import { HostTelemetryPolicy } from "../constructs/host-telemetry-policy";
import { HostOutputs } from "../constructs/host-outputs";
import { HostSizingVariables } from "../constructs/host-sizing-variables";
import { ImageArchitectureCheck } from "../constructs/image-architecture-check";
import { InstanceRole } from "../constructs/instance-role";
import { HostModules, moduleParameterPath } from "../constructs/host-modules";
import { ProvisioningUserData } from "../constructs/provisioning-user-data";
import { SecretParameters } from "../constructs/secret-parameters";
import { SecretsReadPolicy } from "../constructs/secrets-read-policy";
import { SiteDomain } from "../constructs/site-domain";
import { SshKeyPair } from "../constructs/ssh-key-pair";
import { SubnetPlacement } from "../constructs/subnet-placement";
import { SubnetVariables } from "../constructs/subnet-variables";
import { isLetsEncrypt } from "../settings/domain-settings";
import { usesIpv6Metadata } from "../settings/host-layout";
import { hostLogGroupName } from "../settings/host-metrics";
import { SharedParts, userDefaultTags } from "./shared";

/** The original stack's one host, its own MariaDB on a data volume with daily snapshots, an Elastic IP and alarms. */
export function buildSingleHost(
  stack: TerraformStack,
  { settings, nameTag, inputs, secrets, image }: SharedParts,
): void {
  const subnet = new SubnetVariables(stack, "subnet", { region: settings.region });
  const sizing = new HostSizingVariables(stack, "sizing");
  const volumeInputs = new DataVolumeVariables(stack, "data_volume_inputs", {
    copyRegion: settings.snapshotCopyRegion,
  });
  const instanceType = sizing.instanceType!.stringValue;
  new ImageArchitectureCheck(stack, "image_architecture", {
    imageId: image.imageId,
    instanceType,
    imageParameter: image.parameterName,
  });
  const placement = new SubnetPlacement(stack, "placement", {
    subnetId: "var.subnet_id",
    givenVpcId: "var.vpc_id",
    givenAvailabilityZone: "var.availability_zone",
  });
  const { domain } = settings.provisioning;
  if (domain && isLetsEncrypt(domain.acmeDirectory)) {
    inputs.requirePublicAppIngress(
      "with a domain whose certificate Let's Encrypt issues (it validates from the public internet on ports 80 " +
        "and 443: with a narrower list no certificate is ever issued)",
    );
  }

  const securityGroup = new CrmSecurityGroup(stack, "security_group", {
    vpcId: placement.vpcId,
    sshIngressCidrs: inputs.sshIngressCidrs.listValue,
    appIngressCidrs: inputs.appIngressCidrs.listValue,
    inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
    inboundRuleNames: inputs.inboundRuleNames,
    https: domain !== undefined,
  });
  const keyPair = new SshKeyPair(stack, "key_pair", {
    keyName: inputs.keyPairName.stringValue,
    publicKey: inputs.sshPublicKey.stringValue,
  });
  const identity = new InstanceRole(stack, "instance_role", { nameTag });
  // The role's one policy, in parameter-store mode only: the instance reads its secrets with it at first boot.
  const secretsPolicy =
    secrets instanceof SecretParameters
      ? new SecretsReadPolicy(stack, "secrets_policy", {
          roleName: identity.role.name,
          parameterArns: secrets.arns,
          kmsKeyId: settings.secretsKmsKeyId,
          region: settings.region,
        })
      : undefined;
  // The host reports its health and ships its logs with these from its first boot.
  const logGroupName = hostLogGroupName(settings.stackName, settings.instanceName);
  const logs = new HostLogGroup(stack, "logs", {
    logGroupName,
    nameTag,
    retentionDays: inputs.logRetentionDays.numberValue,
  });
  const telemetry = new HostTelemetryPolicy(stack, "telemetry_policy", {
    roleName: identity.role.name,
    logGroupArn: logs.logGroup.arn,
  });
  // Created before the instance, whose user data names it; attached after.
  const backupTag = backupTargetTags(settings);
  const dataVolume = new DataVolume(stack, "data_volume", {
    name: SINGLE_HOST_RESOURCES.dataVolume.name,
    availabilityZone: placement.availabilityZone,
    nameTag: `${nameTag}/data`,
    tags: backupTag,
    preventDestroy: !settings.deleteDataVolumeOnDestroy,
    sizeGiB: volumeInputs.sizeGiB.numberValue,
    snapshotId: volumeInputs.snapshotId,
  });
  // Allocated before the instance, whose user data names it; associated after.
  const address = new ElasticIp(stack, "address", { nameTag });
  // The first boot's modules, which its user data reads from Parameter Store.
  const modules = new HostModules(stack, "modules", {
    settings: settings.provisioning,
    path: moduleParameterPath(settings.stackName),
    roleName: identity.role.name,
  });
  const userData = new ProvisioningUserData(stack, "user_data", {
    settings: settings.provisioning,
    logGroupName,
    modulePath: modules.path,
    secrets: secrets instanceof SecretParameters ? secrets.names : secrets.scriptSecrets,
    dataVolumeId: dataVolume.volumeId,
    elasticIp: address.publicIp,
  });
  if (!(secrets instanceof SecretParameters)) secrets.limitEncodedLength(userData.secretBudgetBytes!);
  const host = new CrmInstance(stack, "instance", {
    name: SINGLE_HOST_RESOURCES.host.name,
    imageId: image.imageId,
    subnetId: subnet.subnetId.stringValue,
    availabilityZone: placement.availabilityZone,
    securityGroupIds: [securityGroup.id],
    keyName: keyPair.keyName,
    instanceProfileName: identity.instanceProfile.name,
    userDataBase64: userData.base64,
    nameTag,
    instanceType,
    rootVolumeSizeGiB: sizing.rootVolumeSizeGiB.numberValue,
    detailedMonitoring: inputs.detailedMonitoring.booleanValue,
    metadataIpv6: usesIpv6Metadata(settings.provisioning.metadataEndpoint),
    dependsOn: [
      identity.role,
      telemetry.policy,
      ...(secretsPolicy ? [secretsPolicy.policy] : []),
      ...modules.dependables,
    ],
  });
  dataVolume.attachTo(host.instanceId);
  address.associateWith(host.instanceId);
  if (domain)
    new SiteDomain(stack, "domain", {
      hostedZone: domain.hostedZone,
      recordName: domain.name,
      address: address.publicIp,
    });
  const alarms = new HostAlarms(stack, "alarms", {
    instanceId: host.instanceId,
    region: settings.region,
    nameTag,
    email: settings.alarmEmail,
  });
  new HostHealthAlarms(stack, "health_alarms", { instanceId: host.instanceId, nameTag, topicArn: alarms.topic?.arn });
  // What a user sees, checked from outside: the Elastic IP's port 80, or the domain over HTTPS.
  new FrontHealthCheck(stack, "front_check", {
    address: { ipAddress: address.publicIp },
    domainName: domain?.name,
    path: settings.provisioning.healthCheckPath,
    nameTag,
    region: settings.region,
    topicArn: alarms.topic?.arn,
    email: settings.alarmEmail,
    defaultTags: userDefaultTags(settings.tags),
  });
  new DataVolumeBackups(stack, "backups", {
    targetTags: backupTag,
    stackName: settings.stackName,
    instanceName: settings.instanceName,
    retentionCount: volumeInputs.retentionCount.numberValue,
    intervalHours: volumeInputs.intervalHours.numberValue,
    copyRegion: settings.snapshotCopyRegion,
    copyRetentionDays: volumeInputs.copyRetentionDays?.numberValue,
  });

  new HostOutputs(stack, "outputs", {
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
}
