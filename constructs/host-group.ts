import { AutoscalingGroup } from "@cdktf/provider-aws/lib/autoscaling-group";
import { ITerraformDependable } from "cdktf";
import { Construct } from "constructs";
import { DATABASE_SETUP_WAIT_SECONDS } from "../userdata/constants";
import { nameElements } from "./addresses";

/**
 * How long an instance refresh waits, after a new host is in service, before it counts it and moves on: a new
 * host's first boot to healthy in the target group, twice the boot test's host D (~181 s; docs/testing.md,
 * "Benchmarks"), for EC2's real package downloads that the test's stand-ins answer at once. The refresh also
 * waits for the load balancer's verdict (docs/scale-out.md), so a slower host keeps the refresh waiting, not users.
 */
export const INSTANCE_WARMUP_SECONDS = 360;

/**
 * How long the Auto Scaling group lets a new host boot before the load balancer's health checks count: the
 * first deployment's hosts wait at step 4 up to DATABASE_SETUP_WAIT_SECONDS for the operator's db-setup, then
 * finish their first boot (INSTANCE_WARMUP_SECONDS).
 */
export const HEALTH_CHECK_GRACE_SECONDS = DATABASE_SETUP_WAIT_SECONDS + INSTANCE_WARMUP_SECONDS;

/**
 * Share of the desired hosts that an instance refresh keeps in service and healthy: all of them. AWS takes 0 to
 * 100, so 100 is the one value that keeps full capacity: the refresh launches and waits for new hosts before it
 * stops old ones (docs/scale-out.md, "What keeps capacity during a refresh").
 */
export const REFRESH_MIN_HEALTHY_PERCENTAGE = 100;

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
  /**
   * Most hosts an instance refresh runs at once, in percent of the desired ones (101 to 200, a number or an
   * expression): the new hosts it may launch before it stops old ones. It keeps REFRESH_MIN_HEALTHY_PERCENTAGE.
   */
  readonly maxHealthyPercentage: number;
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
   * @default HEALTH_CHECK_GRACE_SECONDS (960)
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
 * a new release) starts a rolling instance refresh, Elastic Beanstalk's health-based rolling update: every
 * desired host keeps serving, new hosts (up to maxHealthyPercentage) are launched and healthy in the load
 * balancer before old ones are stopped, hosts already on the new version are skipped, and a refresh whose new
 * hosts do not become healthy stops. Modelled on
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
          minHealthyPercentage: REFRESH_MIN_HEALTHY_PERCENTAGE,
          maxHealthyPercentage: props.maxHealthyPercentage,
          instanceWarmup: String(INSTANCE_WARMUP_SECONDS),
          skipMatching: true,
          // Off: the provider sets the group's new template version before it starts the refresh, so the
          // configuration a rollback restores is the new one already. A failed refresh stops instead, the hosts
          // not yet replaced keep the old version, and release_ref set back rolls back (docs/scale-out.md).
          autoRollback: false,
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
