/**
 * What `npm run destroy` deletes, for docs/operations.md ("Destroying"): every managed resource type of the
 * single-host examples' synthesized stacks, each with what it is to the operator. A new resource type
 * without a line here fails `npm run docs` (and so the generated-docs test), so the list cannot omit one.
 */
import { StackJson } from "./terraform-json";

/** What destroying each resource type removes, and the setting that adds it when not every stack has it. */
export const DESTROYED: Readonly<Record<string, { readonly what: string; readonly with?: string }>> = {
  aws_instance: { what: "the instance, with its root volume (the checkout on it)" },
  aws_eip: { what: "the Elastic IP: its address is released, and a new deploy gets another one" },
  aws_eip_association: { what: "the Elastic IP's association with the instance" },
  aws_security_group: { what: "the security group" },
  aws_key_pair: { what: "the key pair (your private key file stays yours)" },
  aws_iam_role: { what: "the IAM roles (the instance's, and the snapshot policy's)" },
  aws_iam_role_policy: { what: "the instance role's inline policies" },
  aws_ssm_parameter: {
    what: "the first boot's modules in Parameter Store (its secrets' parameters are yours: `npm run secrets`)",
  },
  aws_iam_role_policy_attachment: { what: "the snapshot role's AWS managed policy, detached" },
  aws_iam_instance_profile: { what: "the instance profile" },
  aws_dlm_lifecycle_policy: { what: "the snapshot policy (not the snapshots it took)" },
  aws_cloudwatch_metric_alarm: { what: "the alarms (the outside check's in us-east-1)" },
  aws_cloudwatch_log_group: { what: "the log group, with the host's logs in it" },
  aws_sns_topic: {
    what: "the alarms' topic (and the outside check's in us-east-1, for a stack elsewhere)",
    with: "alarmEmail",
  },
  aws_sns_topic_subscription: { what: "its e-mail subscription", with: "alarmEmail" },
  aws_kms_key: {
    what: "the KMS key of the alarm notifications (KMS deletes it after its waiting period)",
    with: "alarmEmail",
  },
  aws_route53_record: { what: "the domain's A record (the hosted zone stays)", with: "domain" },
  aws_route53_health_check: { what: "the outside check of the front end (Route 53 health check)" },
  terraform_data: { what: "the plan-time checks (no AWS resource)" },
  aws_ebs_volume: {
    what: 'the data volume, only with `"deleteDataVolumeOnDestroy": true` and after its final snapshot; otherwise destroy stops at it (below)',
  },
  aws_volume_attachment: { what: "the data volume's attachment" },
};

/** The generated list: one line per resource type of `stacks`, with its count in the first stack that has it. */
export function destroyedList(stacks: readonly StackJson[]): string {
  const counts = new Map<string, number>();
  for (const stack of stacks) {
    for (const [type, blocks] of Object.entries(stack.resource ?? {}))
      if (!counts.has(type)) counts.set(type, Object.keys(blocks).length);
  }
  const missing = [...counts.keys()].filter((type) => !Object.hasOwn(DESTROYED, type));
  if (missing.length > 0)
    throw new Error(`scripts/docs/destroyed.ts: say what destroying ${missing.join(", ")} removes (DESTROYED)`);
  return Object.entries(DESTROYED)
    .filter(([type]) => counts.has(type))
    .map(
      ([type, { what, with: setting }]) =>
        `- ${what}: \`${type}\` × ${counts.get(type)}${setting ? `, with the setting \`${setting}\`` : ""}`,
    )
    .join("\n");
}
