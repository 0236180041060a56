import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { App, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import { HASHED_ADDRESSES, moveFromEarlierAddresses } from "./constructs/addresses";
import { BootstrapVersionCheck } from "./constructs/bootstrap-version-check";
import { CrmInstance, INSTANCE_TYPE } from "./constructs/crm-instance";
import { ApplicationLoadBalancer } from "./constructs/application-load-balancer";
import { BACK_END_PORT, CrmSecurityGroup, HTTP_PORT, HTTPS_PORT, SSH_PORT } from "./constructs/crm-security-group";
import { DataVolume } from "./constructs/data-volume";
import { DataVolumeBackups } from "./constructs/data-volume-backups";
import { DeploymentVariables } from "./constructs/deployment-variables";
import { ElasticIp } from "./constructs/elastic-ip";
import { HostAlarms } from "./constructs/host-alarms";
import { HostGroup } from "./constructs/host-group";
import { HostLaunchTemplate } from "./constructs/host-launch-template";
import { HostOutputs } from "./constructs/host-outputs";
import { ImageArchitectureCheck } from "./constructs/image-architecture-check";
import { InstanceRole } from "./constructs/instance-role";
import { DATABASE_PORT, databaseIdentifier, ManagedDatabase } from "./constructs/managed-database";
import { ProvisioningUserData, UserDataTooLarge } from "./constructs/provisioning-user-data";
import { ScaleOutOutputs } from "./constructs/scale-out-outputs";
import { ScaleOutVariables } from "./constructs/scale-out-variables";
import { SecretParameters } from "./constructs/secret-parameters";
import { SecretVariables } from "./constructs/secret-variables";
import { SecretsReadPolicy } from "./constructs/secrets-read-policy";
import { SiteCertificate } from "./constructs/site-certificate";
import { SiteDomain } from "./constructs/site-domain";
import { SshKeyPair } from "./constructs/ssh-key-pair";
import { SsmImageParameter } from "./constructs/ssm-image-parameter";
import { StateBackend } from "./constructs/state-backend";
import { SubnetPlacement } from "./constructs/subnet-placement";
import { SubnetVariables } from "./constructs/subnet-variables";
import { SubnetZones } from "./constructs/subnet-zones";
import { TierSecurityGroup } from "./constructs/tier-security-group";
import { loadEnvironments } from "./settings/environments";
import { SettingsProblem } from "./settings/errors";
import { StackSettings } from "./settings/stack-settings";
import { usesIpv6Metadata } from "./userdata/host";

/** The oldest Terraform that can run the stack: 1.10 brought S3-native state locking (`use_lockfile`). */
export const MINIMUM_TERRAFORM_VERSION = ">= 1.10.0";

/** What both topologies build first, and the single host or the scale-out topology then takes. */
interface Shared {
  readonly settings: StackSettings;
  /** `<stack_name>/<instance_name>`. */
  readonly nameTag: string;
  readonly inputs: DeploymentVariables;
  readonly secrets: SecretParameters | SecretVariables;
  readonly image: SsmImageParameter;
}

/**
 * The CRM host of the spec: one EC2 instance with its firewall, identity, key pair and first-boot script;
 * or, with `"topology": "scale-out"`, the same hosts in an Auto Scaling group behind an Application Load
 * Balancer, on Amazon RDS for MariaDB (docs/scale-out.md).
 */
export class CrmHostStack extends TerraformStack {
  constructor(scope: Construct, settings: StackSettings) {
    super(scope, settings.stackName);
    // No typed binding for required_version on a stack: an override of the terraform block.
    this.addOverride("terraform.required_version", MINIMUM_TERRAFORM_VERSION);
    new StateBackend(this, "state", { settings: settings.backend, defaultRegion: settings.region });
    const nameTag = `${settings.stackName}/${settings.instanceName}`;

    new AwsProvider(this, "aws", { region: settings.region });
    const inputs = new DeploymentVariables(this, "inputs");
    const scaleOut = settings.provisioning.topology === "scale-out";
    // The secrets: sensitive variables written into the user data (the spec), or parameters the host reads at boot.
    const secrets = settings.provisioning.secrets === "parameter-store"
      ? new SecretParameters(this, "secret_parameters", { stackName: settings.stackName, region: settings.region, rootPassword: !scaleOut })
      : new SecretVariables(this, "secrets");
    new BootstrapVersionCheck(this, "bootstrap");
    const image = new SsmImageParameter(this, "image");
    const shared: Shared = { settings, nameTag, inputs, secrets, image };
    if (scaleOut) {
      this.scaleOut(shared);
    } else {
      this.singleHost(shared);
      // Deployments made before the readable names keep every resource: the hashed addresses move to them.
      moveFromEarlierAddresses(this, HASHED_ADDRESSES);
    }
  }

  /** The spec's one host, its own MariaDB on a data volume with daily snapshots, an Elastic IP and alarms. */
  private singleHost({ settings, nameTag, inputs, secrets, image }: Shared): void {
    const subnet = new SubnetVariables(this, "subnet", { region: settings.region });
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
      subnetId: subnet.subnetId.stringValue,
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
  }

  /**
   * The scale-out topology (docs/scale-out.md): security groups chained load balancer → hosts (3000) →
   * database (3306); RDS for MariaDB; the hosts' launch template and Auto Scaling group, in the load
   * balancer's target group; with a domain, an ACM certificate and an alias record.
   */
  private scaleOut({ settings, nameTag, inputs, secrets, image }: Shared): void {
    if (!(secrets instanceof SecretParameters)) throw new Error("The scale-out topology reads its secrets from Parameter Store.");
    const variables = new ScaleOutVariables(this, "scale_out");
    const subnetIds = variables.subnetIds.listValue;
    const architecture = new ImageArchitectureCheck(this, "image_architecture", {
      imageId: image.imageId, instanceType: variables.hostInstanceType.stringValue, imageParameter: image.parameterName,
    });
    const placement = new SubnetZones(this, "placement", { subnetIds: "var.subnet_ids", variableName: "subnet_ids" });
    const { domain } = settings.provisioning;
    const quotaNames = { cidrs: 'variable "ssh_ingress_cidrs" or "app_ingress_cidrs"', quota: "variable inbound_rule_quota" };

    const app = inputs.appIngressCidrs.listValue;
    const loadBalancerGroup = new TierSecurityGroup(this, "load_balancer_group", {
      vpcId: placement.vpcId,
      description: `Allow HTTP (80, 3000${domain ? ", HTTPS 443" : ""}) to the CRM load balancer, and it to the hosts' 3000`,
      ingress: [
        { port: BACK_END_PORT.port, description: BACK_END_PORT.description, cidrBlocks: app },
        { port: HTTP_PORT.port, description: HTTP_PORT.description, cidrBlocks: app },
        ...(domain ? [{ port: HTTPS_PORT.port, description: HTTPS_PORT.description, cidrBlocks: app }] : []),
      ],
      egress: [{ port: BACK_END_PORT.port, description: "to the hosts' application port", cidrBlocks: placement.cidrBlocks }],
      inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
      inboundRuleNames: quotaNames,
      nameTag: `${nameTag}/load-balancer`,
      name: "crm_load_balancer",
    });
    const hostsGroup = new TierSecurityGroup(this, "hosts_group", {
      vpcId: placement.vpcId,
      description: "Allow the CRM load balancer to the hosts' 3000, and SSH (22)",
      ingress: [
        { port: SSH_PORT.port, description: SSH_PORT.description, cidrBlocks: inputs.sshIngressCidrs.listValue },
        { port: BACK_END_PORT.port, description: "application back end, from the load balancer", securityGroups: [loadBalancerGroup.id] },
      ],
      egress: [{ description: "all outbound traffic", cidrBlocks: ["0.0.0.0/0"] }],
      inboundRuleQuota: inputs.inboundRuleQuota.numberValue,
      inboundRuleNames: quotaNames,
      nameTag: `${nameTag}/hosts`,
      name: "crm_hosts",
    });
    const databaseGroup = new TierSecurityGroup(this, "database_group", {
      vpcId: placement.vpcId,
      description: "Allow the CRM hosts to the database's MariaDB port (3306)",
      ingress: [{ port: DATABASE_PORT, description: "MariaDB, from the app hosts", securityGroups: [hostsGroup.id] }],
      nameTag: `${nameTag}/database`,
      name: "crm_database",
    });

    const database = new ManagedDatabase(this, "database", {
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
    const site = domain ? new SiteDomain(this, "domain", { hostedZone: domain.hostedZone, recordName: domain.name }) : undefined;
    const certificate = site && domain
      ? new SiteCertificate(this, "certificate", { domainName: domain.name, zoneId: site.zone.zoneId, nameTag }) : undefined;
    const loadBalancer = new ApplicationLoadBalancer(this, "load_balancer", {
      subnetIds,
      securityGroupIds: [loadBalancerGroup.id],
      vpcId: placement.vpcId,
      healthCheckPath: settings.provisioning.healthCheckPath,
      certificateArn: certificate?.arn,
      nameTag,
    });
    site?.aliasTo(loadBalancer.dnsName, loadBalancer.zoneId);

    const keyPair = new SshKeyPair(this, "key_pair", {
      keyName: inputs.keyPairName.stringValue,
      publicKey: inputs.sshPublicKey.stringValue,
    });
    const identity = new InstanceRole(this, "instance_role", { nameTag });
    const secretsPolicy = new SecretsReadPolicy(this, "secrets_policy", {
      roleName: identity.role.name, parameterArns: secrets.arns, kmsKeyId: settings.secretsKmsKeyId, region: settings.region,
      databaseSecret: { arn: database.masterSecretArn, kmsKeyArn: database.masterSecretKmsKeyArn },
    });
    const userData = new ProvisioningUserData(this, "user_data", {
      settings: settings.provisioning,
      secrets: secrets.names,
      scaleOut: {
        databaseHost: database.address,
        databasePort: database.port,
        masterSecretArn: database.masterSecretArn,
        loadBalancerName: loadBalancer.dnsName,
        releaseRef: variables.releaseRef.stringValue,
      },
    });
    const namePrefix = `${settings.stackName}-${settings.instanceName}-`;
    const template = new HostLaunchTemplate(this, "launch_template", {
      imageId: image.imageId,
      rootDeviceName: architecture.image.rootDeviceName,
      instanceType: variables.hostInstanceType.stringValue,
      securityGroupIds: [hostsGroup.id],
      keyName: keyPair.keyName,
      instanceProfileName: identity.instanceProfile.name,
      userDataBase64: userData.base64,
      namePrefix,
      nameTag,
      detailedMonitoring: inputs.detailedMonitoring.booleanValue,
      metadataIpv6: usesIpv6Metadata(settings.provisioning.metadataEndpoint),
    });
    const hosts = new HostGroup(this, "hosts", {
      launchTemplateId: template.id,
      launchTemplateVersion: template.latestVersion,
      subnetIds,
      targetGroupArns: [loadBalancer.targetGroup.arn],
      minSize: variables.hostsMinSize.numberValue,
      maxSize: variables.hostsMaxSize.numberValue,
      desiredCapacity: variables.hostsDesiredCapacity.numberValue,
      minHealthyPercentage: variables.refreshMinHealthyPercentage.numberValue,
      namePrefix,
      nameTag,
      // The hosts read their secrets at first boot: the policy must be in place before the first one starts.
      dependsOn: [identity.role, secretsPolicy.policy],
    });

    new ScaleOutOutputs(this, "outputs", {
      instanceName: settings.instanceName,
      nameTag,
      loadBalancerDns: loadBalancer.dnsName,
      domainName: domain?.name,
      databaseEndpoint: database.instance.endpoint,
      databaseSecretArn: database.masterSecretArn,
      autoScalingGroupName: hosts.groupName,
    });
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
