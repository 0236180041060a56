import { HEALTH_CHECK_GRACE_SECONDS, HostGroup } from "../../constructs/host-group";
import { only, synthesize } from "../support/synth";

describe("HostGroup", () => {
  const { json } = synthesize((scope) => new HostGroup(scope, "hosts", {
    launchTemplateId: "lt-1", launchTemplateVersion: "7", subnetIds: ["subnet-a", "subnet-b"], targetGroupArns: ["arn:tg"],
    minSize: 2, maxSize: 4, desiredCapacity: 2, minHealthyPercentage: 90, namePrefix: "S-W-", nameTag: "S/W",
  }));
  const group = only(json.resource, "aws_autoscaling_group");

  it("spreads the hosts over the subnets, launched from the template's newest version, in the load balancer's target group", () => {
    expect(json.resource?.aws_autoscaling_group).toHaveProperty("crm_hosts");
    expect(group).toMatchObject({
      name_prefix: "S-W-", vpc_zone_identifier: ["subnet-a", "subnet-b"], launch_template: { id: "lt-1", version: "7" },
      target_group_arns: ["arn:tg"], min_size: 2, max_size: 4, desired_capacity: 2,
      tag: [{ key: "Name", value: "S/W", propagate_at_launch: true }],
    });
  });

  it("replaces a host the load balancer finds unhealthy, after a grace period that a first boot fits in", () => {
    expect(group).toMatchObject({ health_check_type: "ELB", health_check_grace_period: HEALTH_CHECK_GRACE_SECONDS });
    expect(HEALTH_CHECK_GRACE_SECONDS).toBe(900);
  });

  it("rolls a new template version out by a rolling instance refresh that keeps the minimum healthy share, without auto rollback (it would restore the new version)", () => {
    expect(group.instance_refresh).toEqual({
      strategy: "Rolling",
      preferences: { min_healthy_percentage: 90, max_healthy_percentage: "${(90 + 100)}", skip_matching: true, auto_rollback: false },
    });
  });
});
