/**
 * The one rule for an EBS snapshot's id that a user names: the stack's variable `data_volume_snapshot_id`
 * (a Terraform validation, constructs/data-volume-variables.ts) and `npm run ops -- <stack> restore --snapshot`
 * (scripts/ops.ts) apply this pattern and say this message. EC2's ids have 8 hexadecimal digits (the old
 * form) or 17; a plain regular expression that JavaScript and Terraform's RE2 read alike.
 */
export const SNAPSHOT_ID_SHAPE = "snap-([0-9a-f]{8}|[0-9a-f]{17})";
/** What a snapshot id must be, for the messages of both. */
export const SNAPSHOT_ID_EXPECTED = 'a snapshot id: "snap-" followed by 8 or 17 lowercase hexadecimal digits';

/** Whether `id` is a snapshot's id by SNAPSHOT_ID_SHAPE. */
export function isSnapshotId(id: string): boolean {
  return new RegExp(`^${SNAPSHOT_ID_SHAPE}$`).test(id);
}
