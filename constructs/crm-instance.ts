import { Instance } from "@cdktf/provider-aws/lib/instance";
import { ITerraformDependable } from "cdktf";
import { Construct } from "constructs";

/** InstanceType of the spec (2.1, 8). */
export const INSTANCE_TYPE = "t3.micro";

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
   * Resources the instance waits for (the spec's DependsOn the instance role).
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
   * @default 8 (the Amazon Linux 2023 AMI's size)
   */
  readonly rootVolumeSizeGiB?: number;
  /**
   * Whether to enable detailed (1-minute) CloudWatch monitoring, billed per instance.
   * @default true
   */
  readonly detailedMonitoring?: boolean;
}

/**
 * The CRM host of spec 2.1. Hardening that leaves what the spec deploys unchanged: the
 * metadata service answers only IMDSv2 session tokens (the provisioning script uses them),
 * the root volume is encrypted, and the instance is EBS-optimized (t3 is by default).
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
      monitoring: props.detailedMonitoring ?? true,
      metadataOptions: {
        httpEndpoint: "enabled",
        httpTokens: "required",
        // One hop: processes on the host only, not containers behind a bridge.
        httpPutResponseHopLimit: 1,
      },
      rootBlockDevice: {
        encrypted: true,
        volumeType: "gp3",
        volumeSize: props.rootVolumeSizeGiB ?? 8,
        deleteOnTermination: true,
      },
    });
  }

  /** PublicIp of the instance. */
  public get publicIp(): string {
    return this.instance.publicIp;
  }
}
