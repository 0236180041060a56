import { Instance } from "@cdktf/provider-aws/lib/instance";
import { IResolvable, ITerraformDependable } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";
import { INSTANCE_TYPE, ROOT_VOLUME_SIZE_GIB } from "./constants";

/**
 * Attributes of the instance Terraform leaves alone after creation. Both force a replacement
 * or a stop/start of the host in the AWS provider, and both change in ordinary use: the AMI
 * moves with every Amazon Linux release, and the user data with any secret or setting, though
 * the script runs only at the first boot. Upgrading the host is a deliberate `-replace`.
 */
export const IGNORED_INSTANCE_CHANGES = ["ami", "user_data", "user_data_base64"];

/**
 * The metadata service's settings of the hosts (an instance, a launch template): IMDSv2 only, one hop
 * (processes on the host only, not containers behind a bridge), and its IPv6 address when `ipv6`.
 */
export function metadataOptions(ipv6: boolean): {
  httpEndpoint: string;
  httpTokens: string;
  httpProtocolIpv6?: string;
  httpPutResponseHopLimit: number;
} {
  return {
    httpEndpoint: "enabled",
    httpTokens: "required",
    httpProtocolIpv6: ipv6 ? "enabled" : undefined,
    httpPutResponseHopLimit: 1,
  };
}

/** Props of {@link CrmInstance}. */
export interface CrmInstanceProps {
  /** AMI id (from the image parameter). */
  readonly imageId: string;
  /** SubnetId: a public subnet (`<subnet_id>`). */
  readonly subnetId: string;
  /** AvailabilityZone (`<availability_zone>`): must be the subnet's. */
  readonly availabilityZone: string;
  /** SecurityGroupIds. */
  readonly securityGroupIds: string[];
  /** KeyName of the SSH key pair. */
  readonly keyName: string;
  /** Name of the instance profile (IamInstanceProfile). */
  readonly instanceProfileName: string;
  /** UserData, already base64-encoded. */
  readonly userDataBase64: string;
  /** Value of the Name tag (`<stack_name>/<instance_name>`). */
  readonly nameTag: string;
  /**
   * Resources the instance waits for (the original stack's DependsOn the instance role, docs/original-stack.md §2.1).
   * @default - none
   */
  readonly dependsOn?: ITerraformDependable[];
  /**
   * InstanceType.
   * @default INSTANCE_TYPE ("t3.micro")
   */
  readonly instanceType?: string;
  /**
   * Size of the encrypted gp3 root volume, in GiB; must be at least the AMI's snapshot size.
   * @default ROOT_VOLUME_SIZE_GIB (16)
   */
  readonly rootVolumeSizeGiB?: number;
  /**
   * Whether to enable detailed (1-minute) CloudWatch monitoring, billed per metric; a boolean
   * or a Terraform expression such as the `detailed_monitoring` variable.
   * @default false (basic 5-minute monitoring, free)
   */
  readonly detailedMonitoring?: boolean | IResolvable;
  /**
   * Whether the metadata service also answers on its IPv6 address, fd00:ec2::254 (Nitro instances in a
   * subnet with IPv6), for a provisioning script that reads it there.
   * @default false (IPv4 only, 169.254.169.254)
   */
  readonly metadataIpv6?: boolean;
  /**
   * Terraform name of the instance (`aws_instance.<name>`): {@link nameElements} gives each the address `<type>.<name>`.
   * @default "crm_host"
   */
  readonly name?: string;
}

/**
 * The CRM host of docs/original-stack.md §2.1. Hardening that leaves what the original stack deploys
 * unchanged: the metadata service answers only IMDSv2 session tokens (the provisioning script uses them),
 * the root volume is encrypted, and the instance is EBS-optimized (t3 is by default).
 *
 * Defaults that keep a small host safe and cheap: Terraform ignores later changes of the image
 * and the user data ({@link IGNORED_INSTANCE_CHANGES}); termination protection is on (the
 * AWS provider lifts it itself before it terminates, so `destroy` and `-replace` still work);
 * CPU credits are `standard`, so a crash loop cannot bill surplus credits; the instance asks for
 * a public IP address, which the first boot needs for its downloads until the Elastic IP is associated
 * (EC2 then releases it), whatever the subnet's auto-assign setting; automatic recovery is EC2's default (on).
 */
export class CrmInstance extends Construct {
  public readonly instance: Instance;

  constructor(scope: Construct, id: string, props: CrmInstanceProps) {
    super(scope, id);
    this.instance = new Instance(this, "instance", {
      ami: props.imageId,
      instanceType: props.instanceType ?? INSTANCE_TYPE,
      availabilityZone: props.availabilityZone,
      subnetId: props.subnetId,
      vpcSecurityGroupIds: props.securityGroupIds,
      keyName: props.keyName,
      iamInstanceProfile: props.instanceProfileName,
      userDataBase64: props.userDataBase64,
      tags: { Name: props.nameTag },
      dependsOn: props.dependsOn,
      ebsOptimized: true,
      associatePublicIpAddress: true,
      disableApiTermination: true,
      creditSpecification: { cpuCredits: "standard" },
      monitoring: props.detailedMonitoring ?? false,
      // No maintenance_options: EC2's default is already simplified automatic recovery (auto_recovery
      // "default"; it moves the instance off failed hardware by itself, besides the recover alarm of
      // HostAlarms, which notifies). Stated, it bought nothing, and moto, which does not keep it, made each
      // later update call ModifyInstanceMaintenanceOptions, which it lacks: the second deploy never ended.
      metadataOptions: metadataOptions(props.metadataIpv6 ?? false),
      rootBlockDevice: {
        encrypted: true,
        volumeType: "gp3",
        volumeSize: props.rootVolumeSizeGiB ?? ROOT_VOLUME_SIZE_GIB,
        // Only the OS and the app live here; the database is on the data volume.
        deleteOnTermination: true,
      },
      lifecycle: { ignoreChanges: IGNORED_INSTANCE_CHANGES },
    });
    nameElements(props.name ?? "crm_host", this.instance);
  }

  /** Instance id (`i-…`). */
  public get instanceId(): string {
    return this.instance.id;
  }

  /** PublicIp of the instance. */
  public get publicIp(): string {
    return this.instance.publicIp;
  }
}
