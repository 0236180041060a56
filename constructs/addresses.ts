import { TerraformElement, TerraformResource, TerraformStack } from "cdktf";

/** What a name in a Terraform address may be here: lower-case words joined by `_`. */
const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/**
 * Gives Terraform elements the readable address `<type>.<name>` (`aws_instance.crm_host`) instead
 * of cdktf's `<construct path>_<hash>`, which changes whenever a construct is renamed or moved: in
 * Terraform a changed address is a destroy and a create. The elements of one construct have
 * different types, so they share its name. Name each element as soon as it is made, before
 * anything refers to it.
 */
export function nameElements(name: string, ...elements: TerraformElement[]): void {
  if (!NAME.test(name))
    throw new Error(
      `A Terraform name must be lower-case words joined by _ (such as crm_host), got ${JSON.stringify(name)}.`,
    );
  for (const element of elements) {
    element.overrideLogicalId(name);
    // cdktf fixes an element's id at its first reference, and ignores an override after it.
    if (element.friendlyUniqueId !== name)
      throw new Error(`${element.node.path} was referenced before it was named ${name}: name it first.`);
  }
}

/**
 * The single-host stack's resources that the ops CLI names to Terraform (the guided restore's
 * `terraform state rm` and `-replace`, scripts/ops-restore.ts), by role: topologies/single-host.ts names
 * them with these, so the CLI's addresses are the stack's (a test checks them against the synthesized JSON).
 */
export const SINGLE_HOST_RESOURCES = {
  host: { type: "aws_instance", name: "crm_host" },
  dataVolume: { type: "aws_ebs_volume", name: "crm_data" },
} as const;

/** The addresses (`<type>.<name>`) of SINGLE_HOST_RESOURCES, by role. */
export const SINGLE_HOST_ADDRESSES: Readonly<Record<keyof typeof SINGLE_HOST_RESOURCES, string>> = {
  host: `${SINGLE_HOST_RESOURCES.host.type}.${SINGLE_HOST_RESOURCES.host.name}`,
  dataVolume: `${SINGLE_HOST_RESOURCES.dataVolume.type}.${SINGLE_HOST_RESOURCES.dataVolume.name}`,
};

/**
 * The managed resources' addresses before they were named (cdktf's hashed names, which the first
 * releases synthesized: CHANGELOG.md), by the address each has now. The same in
 * every stack: the hash covers the construct path below the stack.
 */
export const HASHED_ADDRESSES: Readonly<Record<string, string>> = {
  "aws_security_group.crm_host": "aws_security_group.security_group_82A3AF5D",
  "aws_key_pair.crm_host": "aws_key_pair.key_pair_key_75F208BA",
  "aws_iam_role.crm_host": "aws_iam_role.instance_role_D48363DA",
  "aws_iam_instance_profile.crm_host": "aws_iam_instance_profile.instance_role_profile_A97E8156",
  "aws_instance.crm_host": "aws_instance.instance_A89AA789",
  "aws_ebs_volume.crm_data": "aws_ebs_volume.data_volume_7ED7A4FA",
  "aws_volume_attachment.crm_data": "aws_volume_attachment.data_volume_attachment_47EEF82E",
  "aws_iam_role.crm_data_snapshots": "aws_iam_role.backups_role_FC5F98EC",
  "aws_iam_role_policy_attachment.crm_data_snapshots": "aws_iam_role_policy_attachment.backups_managed_policy_D94A58A8",
  "aws_dlm_lifecycle_policy.crm_data_snapshots": "aws_dlm_lifecycle_policy.backups_policy_2715A676",
  "terraform_data.cdk_bootstrap_version": "terraform_data.bootstrap_check_181B6EDC",
  "terraform_data.secrets": "terraform_data.secrets_checks_check_2A7A9794",
};

/**
 * Adds a `moved` block from each earlier address of `history` to the resource that has that
 * address's key now, so that a deployment made with an earlier version plans no replacement.
 * Data sources and locals keep no state, and need none.
 *
 * The blocks are written into the stack's JSON, not through cdktf's `moveFromId`: that one makes
 * synthesis run `terraform version` (a check for Terraform >= 1.5, which `required_version`
 * already demands), so `cdktf synth` would fail on a machine without Terraform and pay a process
 * start on every other.
 */
export function moveFromEarlierAddresses(stack: TerraformStack, history: Readonly<Record<string, string>>): void {
  const moved: { from: string; to: string }[] = [];
  for (const construct of stack.node.findAll()) {
    if (!(construct instanceof TerraformResource)) continue;
    const address = `${construct.terraformResourceType}.${construct.friendlyUniqueId}`;
    const earlier = history[address];
    if (earlier !== undefined) moved.push({ from: earlier, to: address });
  }
  if (moved.length > 0) stack.addOverride("moved", moved);
}
