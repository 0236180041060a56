import { LaunchTemplate } from "@cdktf/provider-aws/lib/launch-template";
import { IResolvable, Token } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { INSTANCE_TYPE, ROOT_VOLUME_SIZE_GIB } from "./constants";
import { metadataOptions } from "./crm-instance";

/** Props of {@link HostLaunchTemplate}. */
export interface HostLaunchTemplateProps {
  /** AMI id (from the image parameter). */
  readonly imageId: string;
  /** The image's root device name (`/dev/xvda` on Amazon Linux 2023), for the root volume's settings. */
  readonly rootDeviceName: string;
  /**
   * InstanceType (a string or an expression such as a variable).
   * @default INSTANCE_TYPE ("t3.micro")
   */
  readonly instanceType?: string;
  /** Security groups of the hosts' network interface (the app hosts' tier). */
  readonly securityGroupIds: string[];
  /** KeyName of the SSH key pair. */
  readonly keyName: string;
  /** Name of the instance profile. */
  readonly instanceProfileName: string;
  /** The user data, already base64-encoded (it holds no secret in this topology: the settings demand parameter-store). */
  readonly userDataBase64: string;
  /** Prefix of the template's name (`<stack_name>-<instance_name>-`): AWS adds a unique suffix. */
  readonly namePrefix: string;
  /** Value of the Name tag of the hosts and their volumes (`<stack_name>/<instance_name>`). */
  readonly nameTag: string;
  /**
   * Detailed (1-minute) CloudWatch monitoring, a boolean or an expression such as the `detailed_monitoring` variable.
   * @default false
   */
  readonly detailedMonitoring?: boolean | IResolvable;
  /**
   * Whether the metadata service also answers on its IPv6 address (as CrmInstance's metadataIpv6).
   * @default false
   */
  readonly metadataIpv6?: boolean;
  /**
   * Size of the encrypted gp3 root volume, in GiB (no database on it here: the hosts keep the OS, the swap file and the app).
   * @default ROOT_VOLUME_SIZE_GIB (16)
   */
  readonly rootVolumeSizeGiB?: number;
  /**
   * Tags of the hosts and their volumes besides `Name`: the provider's default_tags reach the template itself,
   * not what Auto Scaling launches from it.
   * @default - none
   */
  readonly launchTags?: Readonly<Record<string, string>>;
  /**
   * Terraform name of the template (`aws_launch_template.<name>`).
   * @default "crm_hosts"
   */
  readonly name?: string;
}

/**
 * What the template ignores once it exists: the image, as the single host ignores its AMI
 * (IGNORED_INSTANCE_CHANGES), so that a new image in the public parameter does not start an instance
 * refresh of every host at the next unrelated apply.
 */
export const IGNORED_TEMPLATE_CHANGES = ["image_id"];

/**
 * What every host of the scale-out topology is launched from: the single host's instance settings
 * (CrmInstance) as a launch template. The image from the image parameter, the instance type, the instance
 * profile, the key pair, the app hosts' security group on a network interface with a public address (the
 * first boot downloads from the internet: public subnets, no NAT), IMDSv2 required with one hop (the
 * provisioning script's metadata lock-down keeps it to root), an encrypted gp3 root volume, `standard` CPU
 * credits, automatic recovery, and the user data. Each change (a new release_ref, a setting) makes a new
 * version, the default one, which the Auto Scaling group's instance refresh rolls out. The image is held
 * as the single host's is (IGNORED_TEMPLATE_CHANGES): a new AMI in the image parameter changes nothing
 * until the template is replaced on purpose (`-replace`, docs/scale-out.md), which makes a new template
 * before the old one goes (the group moves to it in between). Modelled on terraform-aws-modules/autoscaling's launch template inputs
 * (update_default_version, metadata_options, block_device_mappings, network_interfaces, tag_specifications).
 */
export class HostLaunchTemplate extends Construct {
  public readonly template: LaunchTemplate;

  constructor(scope: Construct, id: string, props: HostLaunchTemplateProps) {
    super(scope, id);
    const tags = { Name: props.nameTag };
    const launched = { ...props.launchTags, ...tags };
    this.template = new LaunchTemplate(this, "template", {
      namePrefix: props.namePrefix,
      description: `Hosts of ${props.nameTag}`,
      updateDefaultVersion: true,
      imageId: props.imageId,
      instanceType: props.instanceType ?? INSTANCE_TYPE,
      keyName: props.keyName,
      iamInstanceProfile: { name: props.instanceProfileName },
      userData: props.userDataBase64,
      ebsOptimized: "true",
      creditSpecification: { cpuCredits: "standard" },
      monitoring: { enabled: props.detailedMonitoring ?? false },
      maintenanceOptions: { autoRecovery: "default" },
      metadataOptions: metadataOptions(props.metadataIpv6 ?? false),
      networkInterfaces: [
        {
          deviceIndex: 0,
          associatePublicIpAddress: "true",
          deleteOnTermination: "true",
          securityGroups: props.securityGroupIds,
        },
      ],
      blockDeviceMappings: [
        {
          deviceName: props.rootDeviceName,
          ebs: {
            encrypted: "true",
            volumeType: "gp3",
            volumeSize: props.rootVolumeSizeGiB ?? ROOT_VOLUME_SIZE_GIB,
            deleteOnTermination: "true",
          },
        },
      ],
      tagSpecifications: [
        { resourceType: "instance", tags: launched },
        { resourceType: "volume", tags: launched },
      ],
      tags,
      lifecycle: { ignoreChanges: IGNORED_TEMPLATE_CHANGES, createBeforeDestroy: true },
    });
    nameElements(props.name ?? "crm_hosts", this.template);
  }

  /** The template's id, and its newest version (the one the group launches). */
  public get id(): string {
    return this.template.id;
  }

  public get latestVersion(): string {
    return Token.asString(this.template.latestVersion);
  }
}
