import { AutoscalingGroup } from "@cdktf/provider-aws/lib/autoscaling-group";
import { ITerraformDependable, Op, Token } from "cdktf";
import { Construct } from "constructs";
import { nameElements } from "./addresses";

/**
 * How long the Auto Scaling group lets a new host boot before the load balancer's health checks count: its
 * first boot (the 15 steps: package updates, Node.js, yarn install) must be done by then, with a margin of
 * several times what the boot test's host D takes under software emulation (docs/testing.md has its figures),
 * for EC2's real package downloads.
 */
export const HEALTH_CHECK_GRACE_SECONDS = 900;

/** Props of {@link HostGroup}. */
export interface HostGroupProps {
  /** The launch template's id and the version to launch (its newest). */
  readonly launchTemplateId: string;
  readonly launchTemplateVersion: string;
  /** The subnets the group spreads its hosts over (two or more zones). */
  readonly subnetIds: string[];
  /** The load balancer's target groups the hosts join. */
  readonly targetGroupArns: string[];
  /** Fewest, most and wanted hosts (numbers, or expressions such as variables). */
  readonly minSize: number;
  readonly maxSize: number;
  readonly desiredCapacity: number;
  /** Share of the desired hosts, in percent, that keeps serving during an instance refresh (0 to 100); the refresh may run this plus 100. */
  readonly minHealthyPercentage: number;
  /** Prefix of the group's name: AWS adds a unique suffix. */
  readonly namePrefix: string;
  /** Value of the Name tag, given to every host too. */
  readonly nameTag: string;
  /**
   * Resources the group waits for: the role's policy, without which a first boot cannot read its secrets.
   * @default - none
   */
  readonly dependsOn?: ITerraformDependable[];
  /**
   * Seconds a new host may take before failed health checks count against it.
   * @default HEALTH_CHECK_GRACE_SECONDS (900)
   */
  readonly healthCheckGracePeriod?: number;
  /**
   * Terraform name of the group (`aws_autoscaling_group.<name>`).
   * @default "crm_hosts"
   */
  readonly name?: string;
}

/**
 * The scale-out topology's hosts: an Auto Scaling group across the subnets' zones, launched from the
 * launch template's newest version, in the load balancer's target group, whose health checks decide (ELB
 * health checks: a host that stops answering is replaced). A new launch template version (a new image or
 * a new release) starts a rolling instance refresh, Elastic Beanstalk's health-based rolling update: at
 * least minHealthyPercentage of the hosts keep serving, hosts already on the new version are skipped, and
 * a refresh whose new hosts do not become healthy rolls back by itself. Modelled on
 * terraform-aws-modules/autoscaling (vpc_zone_identifier, health_check_type, health_check_grace_period,
 * instance_refresh with strategy Rolling and preferences).
 */
export class HostGroup extends Construct {
  public readonly group: AutoscalingGroup;

  constructor(scope: Construct, id: string, props: HostGroupProps) {
    super(scope, id);
    this.group = new AutoscalingGroup(this, "group", {
      namePrefix: props.namePrefix,
      vpcZoneIdentifier: props.subnetIds,
      launchTemplate: { id: props.launchTemplateId, version: props.launchTemplateVersion },
      targetGroupArns: props.targetGroupArns,
      minSize: props.minSize,
      maxSize: props.maxSize,
      desiredCapacity: props.desiredCapacity,
      healthCheckType: "ELB",
      healthCheckGracePeriod: props.healthCheckGracePeriod ?? HEALTH_CHECK_GRACE_SECONDS,
      instanceRefresh: {
        strategy: "Rolling",
        preferences: {
          minHealthyPercentage: props.minHealthyPercentage,
          // AWS allows at most 100 between the two.
          maxHealthyPercentage: Token.asNumber(Op.add(props.minHealthyPercentage, 100)),
          skipMatching: true,
          autoRollback: true,
        },
      },
      tag: [{ key: "Name", value: props.nameTag, propagateAtLaunch: true }],
      dependsOn: props.dependsOn,
    });
    nameElements(props.name ?? "crm_hosts", this.group);
  }

  /** The group's name. */
  public get groupName(): string {
    return this.group.name;
  }
}
