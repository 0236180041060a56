import { TerraformStack } from "cdktf";
import { awsName, AWS_NAME_RULES, fitted } from "../constructs/aws-names";
import { AlarmTopic } from "../constructs/alarm-topic";
import { ApplicationLoadBalancer } from "../constructs/application-load-balancer";
import { DatabaseAlarms } from "../constructs/database-alarms";
import { FrontHealthCheck } from "../constructs/front-health-check";
import { HostLogGroup } from "../constructs/host-log-group";
import { HostTelemetryPolicy } from "../constructs/host-telemetry-policy";
import { LoadBalancerAlarms } from "../constructs/load-balancer-alarms";
import { BACK_END_RULE, HTTP_RULE, HTTPS_RULE, SSH_RULE } from "../constructs/constants";
import { APP_PORT, HTTP_PORT, HTTPS_PORT, SSH_PORT } from "../settings/ports";
import { HostGroup } from "../constructs/host-group";
import { HostLaunchTemplate } from "../constructs/host-launch-template";
import { HostSizingVariables } from "../constructs/host-sizing-variables";
import { ImageArchitectureCheck } from "../constructs/image-architecture-check";
import { InstanceRole } from "../constructs/instance-role";
import { DATABASE_PORT, databaseIdentifier, ManagedDatabase } from "../constructs/managed-database";
import { HostModules, moduleParameterPath } from "../constructs/host-modules";
import { ProvisioningUserData } from "../constructs/provisioning-user-data";
import { ScaleOutOutputs } from "../constructs/scale-out-outputs";
import { ScaleOutVariables } from "../constructs/scale-out-variables";
import { SecretParameters } from "../constructs/secret-parameters";
import { SecretsReadPolicy } from "../constructs/secrets-read-policy";
import { SiteCertificate } from "../constructs/site-certificate";
import { SiteDomain } from "../constructs/site-domain";
import { SshKeyPair } from "../constructs/ssh-key-pair";
import { SubnetZones } from "../constructs/subnet-zones";
import { TierSecurityGroup } from "../constructs/tier-security-group";
import { usesIpv6Metadata } from "../settings/host-layout";
import { hostLogGroupName } from "../settings/host-metrics";
import { SharedParts, userDefaultTags } from "./shared";

/**
 * The scale-out topology (docs/scale-out.md): security groups chained load balancer → hosts (3000) →
 * database (3306); RDS for MariaDB; the hosts' launch template and Auto Scaling group, in the load
 * balancer's target group; with a domain, an ACM certificate and an alias record.
 */
export function buildScaleOut(stack: TerraformStack, { settings, nameTag, inputs, secrets, image }: SharedParts): void {
  if (!(secrets instanceof SecretParameters))
    throw new Error("The scale-out topology reads its secrets from Parameter Store.");
  const variables = new ScaleOutVariables(stack, "scale_out");
  // The hosts' type is ScaleOutVariables' host_instance_type; their root volume's size is shared with the single host.
  const sizing = new HostSizingVariables(stack, "sizing", { instanceType: false });
  const subnetIds = variables.subnetIds.listValue;
  const architecture = new ImageArchitectureCheck(stack, "image_architecture", {
    imageId: image.imageId,
    instanceType: variables.hostInstanceType.stringValue,
    imageParameter: image.parameterName,
  });
  const placement = new SubnetZones(stack, "placement", { subnetIds: "var.subnet_ids", variableName: "subnet_ids" });
  const { domain } = settings.provisioning;

  const app = inputs.appIngressCidrs.listValue;
  const loadBalancerGroup = new TierSecurityGroup(stack, "load_balancer_group", {
    vpcId: placement.vpcId,
    description: `Allow HTTP (${HTTP_PORT}, ${APP_PORT}${domain ? `, HTTPS ${HTTPS_PORT}` : ""}) to the CRM load balancer, and from it to the hosts on ${APP_PORT}`,
    ingress: [
      { ...BACK_END_RULE, cidrBlocks: app },
      { ...HTTP_RULE, cidrBlocks: app },
      ...(domain ? [{ ...HTTPS_RULE, cidrBlocks: app }] : []),
    ],
    egress: [
      { port: BACK_END_RULE.port, description: "to the hosts application port", cidrBlocks: placement.cidrBlocks },
    ],
    inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
    inboundRuleNames: inputs.inboundRuleNames,
    nameTag: `${nameTag}/load-balancer`,
    name: "crm_load_balancer",
  });
  const hostsGroup = new TierSecurityGroup(stack, "hosts_group", {
    vpcId: placement.vpcId,
    description: `Allow the CRM load balancer to the hosts on ${APP_PORT}, and SSH (${SSH_PORT})`,
    ingress: [
      { ...SSH_RULE, cidrBlocks: inputs.sshIngressCidrs.listValue },
      {
        port: BACK_END_RULE.port,
        description: "application back end, from the load balancer",
        securityGroups: [loadBalancerGroup.id],
      },
    ],
    egress: [{ description: "all outbound traffic", cidrBlocks: ["0.0.0.0/0"] }],
    inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
    inboundRuleNames: inputs.inboundRuleNames,
    nameTag: `${nameTag}/hosts`,
    name: "crm_hosts",
  });
  const databaseGroup = new TierSecurityGroup(stack, "database_group", {
    vpcId: placement.vpcId,
    description: "Allow the CRM hosts to the database MariaDB port (3306)",
    ingress: [{ port: DATABASE_PORT, description: "MariaDB, from the app hosts", securityGroups: [hostsGroup.id] }],
    nameTag: `${nameTag}/database`,
    name: "crm_database",
  });

  const database = new ManagedDatabase(stack, "database", {
    identifier: databaseIdentifier(settings.stackName),
    subnetIds,
    securityGroupIds: [databaseGroup.id],
    instanceClass: variables.databaseInstanceClass.stringValue,
    allocatedStorageGib: variables.databaseAllocatedStorageGib.numberValue,
    maxAllocatedStorageGib: variables.databaseMaxAllocatedStorageGib.numberValue,
    multiAz: variables.databaseMultiAz.booleanValue,
    backupRetentionDays: variables.databaseBackupRetentionDays.numberValue,
    deletionProtection: variables.databaseDeletionProtection.booleanValue,
    nameTag: `${nameTag}/database`,
  });
  const site = domain
    ? new SiteDomain(stack, "domain", { hostedZone: domain.hostedZone, recordName: domain.name })
    : undefined;
  const certificate =
    site && domain
      ? new SiteCertificate(stack, "certificate", { domainName: domain.name, zoneId: site.zone.zoneId, nameTag })
      : undefined;
  const loadBalancer = new ApplicationLoadBalancer(stack, "load_balancer", {
    subnetIds,
    securityGroupIds: [loadBalancerGroup.id],
    vpcId: placement.vpcId,
    healthCheckPath: settings.provisioning.healthCheckPath,
    certificateArn: certificate?.arn,
    nameTag,
  });
  site?.aliasTo(loadBalancer.dnsName, loadBalancer.zoneId);

  const keyPair = new SshKeyPair(stack, "key_pair", {
    keyName: inputs.keyPairName.stringValue,
    publicKey: inputs.sshPublicKey.stringValue,
  });
  const identity = new InstanceRole(stack, "instance_role", { nameTag });
  const secretsPolicy = new SecretsReadPolicy(stack, "secrets_policy", {
    roleName: identity.role.name,
    parameterArns: secrets.arns,
    kmsKeyId: settings.secretsKmsKeyId,
    region: settings.region,
  });
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
    secrets: secrets.names,
    scaleOut: {
      databaseHost: database.address,
      databasePort: database.port,
      loadBalancerName: loadBalancer.dnsName,
      releaseRef: variables.releaseRef.stringValue,
    },
  });
  // The group's and the template's names: <stackName>-<instanceName>-, cut (with a hash) to what a launch template takes.
  const nameBase = `${settings.stackName}-${settings.instanceName}`;
  const templatePrefix = awsName(
    "launchTemplateNamePrefix",
    `${fitted(nameBase, AWS_NAME_RULES.launchTemplateNamePrefix.max - 1)}-`,
  );
  const groupPrefix = awsName("autoScalingGroupNamePrefix", `${nameBase}-`);
  const template = new HostLaunchTemplate(stack, "launch_template", {
    imageId: image.imageId,
    rootDeviceName: architecture.image.rootDeviceName,
    instanceType: variables.hostInstanceType.stringValue,
    rootVolumeSizeGiB: sizing.rootVolumeSizeGiB.numberValue,
    securityGroupIds: [hostsGroup.id],
    keyName: keyPair.keyName,
    instanceProfileName: identity.instanceProfile.name,
    userDataBase64: userData.base64,
    namePrefix: templatePrefix,
    nameTag,
    launchTags: settings.tags,
    detailedMonitoring: inputs.detailedMonitoring.booleanValue,
    metadataIpv6: usesIpv6Metadata(settings.provisioning.metadataEndpoint),
  });
  const hosts = new HostGroup(stack, "hosts", {
    launchTemplateId: template.id,
    launchTemplateVersion: template.latestVersion,
    subnetIds,
    targetGroupArns: [loadBalancer.targetGroup.arn],
    minSize: variables.hostsMinSize.numberValue,
    maxSize: variables.hostsMaxSize.numberValue,
    desiredCapacity: variables.hostsDesiredCapacity.numberValue,
    maxHealthyPercentage: variables.refreshMaxHealthyPercentage.numberValue,
    namePrefix: groupPrefix,
    nameTag,
    // The hosts read their secrets and modules at first boot: the policies and modules must be in place before the first one starts.
    dependsOn: [identity.role, secretsPolicy.policy, telemetry.policy, ...modules.dependables],
  });

  const topic =
    settings.alarmEmail !== undefined
      ? new AlarmTopic(stack, "alarm_topic", { email: settings.alarmEmail, nameTag })
      : undefined;
  new LoadBalancerAlarms(stack, "load_balancer_alarms", {
    loadBalancerArnSuffix: loadBalancer.loadBalancer.arnSuffix,
    targetGroupArnSuffix: loadBalancer.targetGroup.arnSuffix,
    nameTag,
    topicArn: topic?.arn,
  });
  // What a user sees, checked from outside: the load balancer's port 80, or the domain over HTTPS.
  new FrontHealthCheck(stack, "front_check", {
    address: { dnsName: loadBalancer.dnsName },
    domainName: domain?.name,
    path: settings.provisioning.healthCheckPath,
    nameTag,
    region: settings.region,
    topicArn: topic?.arn,
    email: settings.alarmEmail,
    defaultTags: userDefaultTags(settings.tags),
  });
  new DatabaseAlarms(stack, "database_alarms", {
    dbInstanceIdentifier: database.instance.identifier,
    instanceClass: variables.databaseInstanceClass.stringValue,
    nameTag,
    topicArn: topic?.arn,
  });

  new ScaleOutOutputs(stack, "outputs", {
    instanceName: settings.instanceName,
    nameTag,
    loadBalancerDns: loadBalancer.dnsName,
    domainName: domain?.name,
    databaseEndpoint: database.instance.endpoint,
    databaseSecretArn: database.masterSecretArn,
    autoScalingGroupName: hosts.groupName,
  });
}
