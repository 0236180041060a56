/**
 * Terraform addresses are the identity of deployed resources: a changed address is a destroy and
 * a create. The example stack's addresses are pinned here, so a rename fails this test; and every
 * managed resource that a deployment of an earlier version can hold must still be at its address
 * or be the source of a `moved` block to an address the stack has, so that it plans no replacement.
 */
import { Testing } from "cdktf";
import { join } from "path";
import { CrmHostStack } from "../main";
import { exampleStackJson } from "../scripts/docs";
import { loadStackSettings } from "../settings/stack-settings";
import { blocksOf } from "../scripts/docs/terraform-json";
import { SINGLE_HOST_ADDRESSES } from "../constructs/addresses";
import { restoreSteps } from "../scripts/ops-restore";

/** The managed resources of earlier versions, as `cdktf synth` wrote them (the same in every stack). */
const EARLIER: Record<string, string[]> = {
  "main up to 1ebbfb9 (hashed addresses)": [
    "aws_dlm_lifecycle_policy.backups_policy_2715A676",
    "aws_ebs_volume.data_volume_7ED7A4FA",
    "aws_iam_instance_profile.instance_role_profile_A97E8156",
    "aws_iam_role.backups_role_FC5F98EC",
    "aws_iam_role.instance_role_D48363DA",
    "aws_iam_role_policy_attachment.backups_managed_policy_D94A58A8",
    "aws_instance.instance_A89AA789",
    "aws_key_pair.key_pair_key_75F208BA",
    "aws_security_group.security_group_82A3AF5D",
    "aws_volume_attachment.data_volume_attachment_47EEF82E",
    "terraform_data.bootstrap_check_181B6EDC",
    "terraform_data.secrets_checks_check_2A7A9794",
  ],
};

describe("Terraform addresses of the example stack", () => {
  const stack = exampleStackJson();
  const addresses = blocksOf(stack)
    .map((block) => block.address)
    .sort();
  const locals = Object.keys(stack.locals ?? {})
    .map((name) => `local.${name}`)
    .sort();

  it("are readable and pinned: renaming one fails here (add a moved block, then update the list)", () => {
    expect(addresses).toEqual([
      "aws_cloudwatch_log_group.crm_host",
      "aws_cloudwatch_metric_alarm.crm_front",
      "aws_cloudwatch_metric_alarm.crm_host_app_health",
      "aws_cloudwatch_metric_alarm.crm_host_data_disk",
      "aws_cloudwatch_metric_alarm.crm_host_instance_check",
      "aws_cloudwatch_metric_alarm.crm_host_memory",
      "aws_cloudwatch_metric_alarm.crm_host_root_disk",
      "aws_cloudwatch_metric_alarm.crm_host_system_check",
      "aws_dlm_lifecycle_policy.crm_data_snapshots",
      "aws_ebs_volume.crm_data",
      "aws_eip.crm_host",
      "aws_eip_association.crm_host",
      "aws_iam_instance_profile.crm_host",
      "aws_iam_role.crm_data_snapshots",
      "aws_iam_role.crm_host",
      "aws_iam_role_policy.crm_host_modules",
      "aws_iam_role_policy.crm_host_telemetry",
      "aws_iam_role_policy_attachment.crm_data_snapshots",
      "aws_instance.crm_host",
      "aws_key_pair.crm_host",
      "aws_route53_health_check.crm_front",
      "aws_security_group.crm_host",
      "aws_ssm_parameter.crm_host_modules_local_database",
      "aws_ssm_parameter.crm_host_modules_ops",
      "aws_ssm_parameter.crm_host_modules_telemetry",
      "aws_volume_attachment.crm_data",
      "data.aws_ami.crm_host",
      "data.aws_ec2_instance_type.crm_host",
      "data.aws_iam_policy_document.crm_host_modules",
      "data.aws_iam_policy_document.crm_host_telemetry",
      "data.aws_partition.crm_data_snapshots",
      "data.aws_partition.crm_host_alarms",
      "data.aws_ssm_parameter.image",
      "data.aws_ssm_parameters_by_path.cdk_bootstrap_version",
      "data.aws_subnet.crm_host",
      "data.aws_vpc.crm_host",
      "terraform_data.cdk_bootstrap_version",
      "terraform_data.crm_host_placement",
      "terraform_data.secrets",
      "terraform_data.ssh_public_key",
    ]);
    expect(locals).toEqual(["local.cdk_bootstrap_version", "local.provisioning_script"]);
    for (const address of [...addresses, ...locals]) expect(address).toMatch(/^(data\.)?[a-z0-9_]+\.[a-z][a-z0-9_]*$/);
  });

  it.each(Object.entries(EARLIER))("keep every managed resource of %s, moved where renamed", (_version, released) => {
    const moved = new Map(
      ((stack as { moved?: { from: string; to: string }[] }).moved ?? []).map((block) => [block.from, block.to]),
    );
    const unreachable = released.filter((address) => {
      let current = address;
      // Follow a chain of moves (a resource renamed in several releases) to where it is now.
      for (let hops = 0; !addresses.includes(current) && moved.has(current) && hops < 10; hops++)
        current = moved.get(current)!;
      return !addresses.includes(current) || current.split(".")[0] !== address.split(".")[0];
    });
    expect(unreachable).toEqual([]);
  });

  it("hold the ones the ops CLI names to Terraform (the guided restore's state rm and -replace), from its one map", () => {
    expect(Object.values(SINGLE_HOST_ADDRESSES).filter((address) => !addresses.includes(address))).toEqual([]);
    expect(
      restoreSteps("snap-01234567", "/p/dev.tfvars")
        .flat()
        .filter((word) => /^(-replace=)?aws_/.test(word))
        .map((word) => word.replace(/^-replace=/, "")),
    ).toEqual([SINGLE_HOST_ADDRESSES.dataVolume, SINGLE_HOST_ADDRESSES.host]);
  });

  it("for examples/prod.json (parameter-store mode, a domain, an alarm e-mail), has the secrets', the domain's and the topic's own", () => {
    const prod = JSON.parse(
      Testing.synth(new CrmHostStack(Testing.app(), loadStackSettings(join(__dirname, "..", "examples", "prod.json")))),
    );
    const added = blocksOf(prod)
      .map((block) => block.address)
      .filter((address) => !addresses.includes(address))
      .sort();
    expect(added).toEqual([
      "aws_iam_role_policy.crm_secrets",
      "aws_kms_key.crm_host_alarms",
      "aws_route53_record.crm_site",
      "aws_sns_topic.crm_host_alarms",
      "aws_sns_topic_subscription.crm_host_alarms",
      "aws_ssm_parameter.crm_host_modules_front",
      "aws_ssm_parameter.crm_host_modules_parameter_store",
      "data.aws_caller_identity.crm_host_alarms",
      "data.aws_caller_identity.crm_secrets",
      "data.aws_iam_policy_document.crm_secrets",
      "data.aws_kms_key.crm_secrets",
      "data.aws_resourcegroupstaggingapi_resources.crm_secrets",
      "data.aws_route53_zone.crm_site",
    ]);
    expect(blocksOf(prod).map((block) => block.address)).toEqual(expect.arrayContaining(addresses));
    expect(Object.keys(prod.locals ?? {}).sort()).toEqual([
      "cdk_bootstrap_version",
      "crm_secrets_listed",
      "crm_secrets_missing",
      "crm_secrets_parameters",
      "provisioning_script",
    ]);
  });

  it("for examples/scale-out.json (RDS, a load balancer, an Auto Scaling group, a domain), are readable and pinned, and move nothing", () => {
    const scaleOut = JSON.parse(
      Testing.synth(
        new CrmHostStack(Testing.app(), loadStackSettings(join(__dirname, "..", "examples", "scale-out.json"))),
      ),
    );
    const all = blocksOf(scaleOut)
      .map((block) => block.address)
      .sort();
    expect(all).toEqual([
      "aws_acm_certificate.crm_site",
      "aws_acm_certificate_validation.crm_site",
      "aws_autoscaling_group.crm_hosts",
      "aws_cloudwatch_log_group.crm_host",
      "aws_cloudwatch_metric_alarm.crm_database_connections",
      "aws_cloudwatch_metric_alarm.crm_database_cpu",
      "aws_cloudwatch_metric_alarm.crm_database_free_memory",
      "aws_cloudwatch_metric_alarm.crm_database_free_storage",
      "aws_cloudwatch_metric_alarm.crm_front",
      "aws_cloudwatch_metric_alarm.crm_load_balancer_5xx",
      "aws_cloudwatch_metric_alarm.crm_load_balancer_healthy_hosts",
      "aws_cloudwatch_metric_alarm.crm_load_balancer_response_time",
      "aws_cloudwatch_metric_alarm.crm_load_balancer_unhealthy_hosts",
      "aws_db_instance.crm_database",
      "aws_db_parameter_group.crm_database",
      "aws_db_subnet_group.crm_database",
      "aws_iam_instance_profile.crm_host",
      "aws_iam_role.crm_host",
      "aws_iam_role_policy.crm_host_modules",
      "aws_iam_role_policy.crm_host_telemetry",
      "aws_iam_role_policy.crm_secrets",
      "aws_key_pair.crm_host",
      "aws_launch_template.crm_hosts",
      "aws_lb.crm_load_balancer",
      "aws_lb_listener.crm_load_balancer_back_end",
      "aws_lb_listener.crm_load_balancer_front_end",
      "aws_lb_listener.crm_load_balancer_https",
      "aws_lb_target_group.crm_hosts",
      "aws_route53_health_check.crm_front",
      "aws_route53_record.crm_site",
      "aws_route53_record.crm_site_validation",
      "aws_security_group.crm_database",
      "aws_security_group.crm_hosts",
      "aws_security_group.crm_load_balancer",
      "aws_ssm_parameter.crm_host_modules_ops",
      "aws_ssm_parameter.crm_host_modules_parameter_store",
      "aws_ssm_parameter.crm_host_modules_remote_database",
      "aws_ssm_parameter.crm_host_modules_telemetry",
      "data.aws_ami.crm_host",
      "data.aws_caller_identity.crm_secrets",
      "data.aws_ec2_instance_type.crm_database_class",
      "data.aws_ec2_instance_type.crm_host",
      "data.aws_iam_policy_document.crm_host_modules",
      "data.aws_iam_policy_document.crm_host_telemetry",
      "data.aws_iam_policy_document.crm_secrets",
      "data.aws_kms_key.crm_secrets",
      "data.aws_resourcegroupstaggingapi_resources.crm_secrets",
      "data.aws_route53_zone.crm_site",
      "data.aws_ssm_parameter.image",
      "data.aws_ssm_parameters_by_path.cdk_bootstrap_version",
      "data.aws_subnet.crm_hosts",
      "terraform_data.cdk_bootstrap_version",
      "terraform_data.crm_hosts_placement",
      "terraform_data.secrets",
      "terraform_data.ssh_public_key",
    ]);
    for (const address of all) expect(address).toMatch(/^(data\.)?[a-z0-9_]+\.[a-z][a-z0-9_]*$/);
    expect(Object.keys(scaleOut.locals ?? {}).sort()).toEqual([
      "cdk_bootstrap_version",
      "crm_hosts_subnet_vpcs",
      "crm_hosts_subnet_zones",
      "crm_secrets_listed",
      "crm_secrets_missing",
      "crm_secrets_parameters",
      "provisioning_script",
    ]);
    // A new topology, not a change of a deployed one: the single host's moves do not apply to it.
    expect(scaleOut.moved).toBeUndefined();
  });

  it("moves nothing that does not exist now, and only resources (data sources and locals keep no state)", () => {
    for (const block of (stack as { moved?: { from: string; to: string }[] }).moved ?? []) {
      expect(addresses).toContain(block.to);
      expect(block.from).not.toMatch(/^(data|local)\./);
    }
  });
});
