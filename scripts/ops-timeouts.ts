/**
 * Every bound the ops command keeps on the workstation: how long it waits for Terraform, ssh, a host
 * command and AWS before it gives up with one line. Seconds; the host's own bounds are the tool's constants.
 */
export const OPS_TIMEOUTS = {
  /** `terraform output`, `terraform state list|pull`. */
  terraformSeconds: 120,
  /** ssh: the connection (ConnectTimeout), then a keep-alive every interval, given up after that many unanswered. */
  sshConnectSeconds: 15,
  sshAliveIntervalSeconds: 15,
  sshAliveCountMax: 4,
  /** A host command of an everyday action (hostRun), by default. */
  hostCommandSeconds: 120,
  /** backup: the database's backup lock taken; its session ended after the lock's release; the file system's sync. */
  backupLockSeconds: 60,
  backupLockReleaseSeconds: 30,
  syncSeconds: 60,
  /** backup: the snapshot completed. */
  snapshotSeconds: 3600,
  /** restore --drill: each of its waits for EC2 and the host's check. */
  drillSeconds: 900,
} as const;
