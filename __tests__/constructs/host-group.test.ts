import {
  HEALTH_CHECK_GRACE_SECONDS,
  HostGroup,
  INSTANCE_WARMUP_SECONDS,
  REFRESH_MIN_HEALTHY_PERCENTAGE,
} from "../../constructs/host-group";
import { DATABASE_SETUP_WAIT_SECONDS } from "../../userdata/constants";
import { only, synthesize } from "../support/synth";

describe("HostGroup", () => {
  const { json } = synthesize(
    (scope) =>
      new HostGroup(scope, "hosts", {
        launchTemplateId: "lt-1",
        launchTemplateVersion: "7",
        subnetIds: ["subnet-a", "subnet-b"],
        targetGroupArns: ["arn:tg"],
        minSize: 2,
        maxSize: 4,
        desiredCapacity: 2,
        maxHealthyPercentage: 150,
        namePrefix: "S-W-",
        nameTag: "S/W",
      }),
  );
  const group = only(json.resource, "aws_autoscaling_group");

  it("spreads the hosts over the subnets, launched from the template's newest version, in the load balancer's target group", () => {
    expect(json.resource?.aws_autoscaling_group).toHaveProperty("crm_hosts");
    expect(group).toMatchObject({
      name_prefix: "S-W-",
      vpc_zone_identifier: ["subnet-a", "subnet-b"],
      launch_template: { id: "lt-1", version: "7" },
      target_group_arns: ["arn:tg"],
      min_size: 2,
      max_size: 4,
      desired_capacity: 2,
      tag: [{ key: "Name", value: "S/W", propagate_at_launch: true }],
    });
  });

  it("replaces a host the load balancer finds unhealthy, after a grace period that the first deployment's wait for db-setup and a first boot fit in", () => {
    expect(group).toMatchObject({ health_check_type: "ELB", health_check_grace_period: HEALTH_CHECK_GRACE_SECONDS });
    expect(HEALTH_CHECK_GRACE_SECONDS).toBe(DATABASE_SETUP_WAIT_SECONDS + INSTANCE_WARMUP_SECONDS);
    expect([INSTANCE_WARMUP_SECONDS, HEALTH_CHECK_GRACE_SECONDS]).toEqual([360, 960]);
  });

  it("rolls a new template version out by a rolling instance refresh that keeps every desired host serving: new hosts launched and warmed up before old ones stop, no auto rollback (it would restore the new version)", () => {
    expect(REFRESH_MIN_HEALTHY_PERCENTAGE).toBe(100);
    expect(group.instance_refresh).toEqual({
      strategy: "Rolling",
      preferences: {
        min_healthy_percentage: 100,
        max_healthy_percentage: 150,
        instance_warmup: String(INSTANCE_WARMUP_SECONDS),
        skip_matching: true,
        auto_rollback: false,
      },
    });
  });
});
