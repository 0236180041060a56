/**
 * The ops command's everyday actions that run from the workstation (docs/operations.md, "Everyday
 * tasks"): `logs`, `backup` and `restore`. Each drives the host over ssh with commands run as root
 * (`sudo -n bash -c '…'`), and `backup` and `restore` drive EC2 with the user's own AWS credentials
 * (AWS SDK for JavaScript v3), so that the host's user data carries none of it (EC2's 16 KiB limit).
 * `restart` and `db` are the host's own actions (userdata/ops.sh).
 *
 * A {@link HostShell} runs one command as root on the host: over ssh in use (scripts/ops.ts), and in
 * the tests through bash in the provisioning harness's stand-in host, which is what sshd does with it.
 */
import { ChildProcess } from "child_process";
import { readFileSync } from "fs";
import { join } from "path";
import {
  AttachVolumeCommand,
  CreateSnapshotCommand,
  CreateVolumeCommand,
  DeleteVolumeCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  DetachVolumeCommand,
  EC2Client,
  Snapshot,
  Tag,
  Volume,
  waitUntilSnapshotCompleted,
  waitUntilVolumeAvailable,
  waitUntilVolumeInUse,
} from "@aws-sdk/client-ec2";
import { backupTargetTags, snapshotTags } from "../constructs/data-volume-backups";
import { HOST_FILES } from "../settings/host-layout";
import { StackSettings } from "../settings/stack-settings";
import { DATA_FILE_SYSTEM, DATABASE_SERVICE } from "../userdata/constants";
import { opsPaths } from "../userdata/ops";
import { SCALE_OUT_BACKUPS } from "../userdata/ops-actions";
import { shellQuote } from "../userdata/script";
import { UserError } from "./cli-options";
import { OPS_TIMEOUTS } from "./ops-timeouts";
import { isSince, SINCE_EXPECTED } from "./journal-since";

/** Runs `command` (a bash command line) as root on the host; its standard streams are pipes. */
export type HostShell = (command: string) => ChildProcess;

/** The logs `logs` shows. */
export const LOG_SOURCES = ["app", "provisioning", "ops", "database"] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

/**
 * MariaDB's error log on Amazon Linux 2023 (mariadb105-server's own configuration, log-error): a fact of
 * the image. Where it is absent (another image), `logs database` shows the database unit's journal.
 */
export const DATABASE_ERROR_LOG = "/var/log/mariadb/mariadb.log";

/** The checked options of `logs`. */
export interface LogOptions {
  readonly lines: number;
  readonly since?: string;
  readonly follow: boolean;
}

/** Reads `logs`' source and options; throws UserError (exit 2) naming a bad value. */
export function logOptions(
  args: readonly string[],
  options: Record<string, string>,
): { source: LogSource; options: LogOptions } {
  if (args.length > 1)
    throw new UserError(`logs takes one log (${LOG_SOURCES.join(", ")}); got "${args.join(" ")}"`, 2);
  const source = (args[0] ?? "app") as LogSource;
  if (!LOG_SOURCES.includes(source))
    throw new UserError(`logs: no log "${source}": the logs are ${LOG_SOURCES.join(", ")}`, 2);
  const lines = options.lines ?? "100";
  if (!/^[1-9][0-9]{0,5}$/.test(lines))
    throw new UserError(`--lines must be a number of lines from 1 to 999999, got ${JSON.stringify(lines)}`, 2);
  const since = options.since;
  if (since !== undefined && !isSince(since))
    throw new UserError(`--since must be ${SINCE_EXPECTED}, got ${JSON.stringify(since)}`, 2);
  if (since !== undefined && (source === "provisioning" || source === "ops")) {
    throw new UserError(`--since reads the journal; the ${source} log is a file: use --lines`, 2);
  }
  return { source, options: { lines: Number(lines), since, follow: options.follow === "true" } };
}

/** The command (run as root on the host) that prints a log: the journal of a unit, or a file's last lines. */
export function logsCommand(settings: StackSettings, source: LogSource, options: LogOptions): string {
  const p = settings.provisioning;
  const journal = (unit: string) =>
    [
      "journalctl",
      "--no-pager",
      "-u",
      unit,
      "-n",
      String(options.lines),
      ...(options.since ? ["--since", options.since] : []),
      ...(options.follow ? ["-f"] : []),
    ]
      .map(shellQuote)
      .join(" ");
  const file = (path: string) =>
    ["tail", "-n", String(options.lines), ...(options.follow ? ["-F"] : []), "--", path].map(shellQuote).join(" ");
  switch (source) {
    case "app":
      return `exec ${journal(`${p.appName}.service`)}`;
    case "provisioning":
      return `exec ${file(p.logFile)}`;
    case "ops":
      return `exec ${file(opsPaths(p).auditLog)}`;
    case "database":
      // --since reads the journal only: with it, the unit's journal even where the file is.
      return options.since
        ? `exec ${journal(`${DATABASE_SERVICE}.service`)}`
        : `if [[ -f ${shellQuote(DATABASE_ERROR_LOG)} ]]; then exec ${file(DATABASE_ERROR_LOG)}; else exec ${journal(`${DATABASE_SERVICE}.service`)}; fi`;
  }
}

/** The output of a host command and its exit status, bounded to `timeoutMs`. */
export function hostRun(
  shell: HostShell,
  command: string,
  input = "",
  timeoutMs = OPS_TIMEOUTS.hostCommandSeconds * 1000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = shell(command);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input);
  });
}

/** What an everyday action reports as it goes (standard error in use). */
export type Report = (line: string) => void;

/** The data volume of a single-host stack: the one volume carrying the snapshot policy's target tags. */
export async function findDataVolume(ec2: EC2Client, settings: StackSettings): Promise<Volume> {
  const tags = backupTargetTags(settings);
  const { Volumes = [] } = await ec2.send(
    new DescribeVolumesCommand({
      Filters: Object.entries(tags).map(([key, value]) => ({ Name: `tag:${key}`, Values: [value] })),
    }),
  );
  const described = Object.entries(tags)
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
  if (Volumes.length !== 1) {
    throw new UserError(
      `${Volumes.length === 0 ? "no" : `${Volumes.length}`} volumes tagged ${described} in ${settings.region}: ` +
        "is the stack deployed there, with these credentials' account?",
    );
  }
  return Volumes[0];
}

/** The tags a snapshot of the data volume gets: the volume's own (as DLM's copy_tags), the policy's, and who made it. */
export function backupSnapshotTags(volume: Volume, settings: StackSettings, madeBy: string): Tag[] {
  const tags: Record<string, string> = {};
  for (const { Key, Value } of volume.Tags ?? []) if (Key && !Key.startsWith("aws:")) tags[Key] = Value ?? "";
  Object.assign(tags, snapshotTags(settings), { CreatedBy: madeBy });
  return Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));
}

/** SQL of the backup lock: MariaDB's backup stages up to BLOCK_COMMIT (nothing commits; the redo log is on disk). */
export const BACKUP_LOCK_SQL =
  "BACKUP STAGE START;\nBACKUP STAGE FLUSH;\nBACKUP STAGE BLOCK_DDL;\nBACKUP STAGE BLOCK_COMMIT;\nSELECT 'crm-backup-locked';\n";
/** The host command of the lock's session: root's client over its Unix socket, statement by statement. */
export const BACKUP_LOCK_COMMAND = "exec mariadb --user=root --batch --skip-column-names --unbuffered";

/**
 * A session holding MariaDB's backup lock (BLOCK_COMMIT) until `release`; `held` resolves once it is
 * held (rejects if the session ends first or not within `timeoutMs`). Ending the session, however it
 * ends, releases the lock.
 */
export function holdBackupLock(
  shell: HostShell,
  timeoutMs = OPS_TIMEOUTS.backupLockSeconds * 1000,
): { held: Promise<void>; release: () => Promise<void> } {
  const child = shell(BACKUP_LOCK_COMMAND);
  let stdout = "";
  let stderr = "";
  const closed = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)));
  child.on("error", () => undefined);
  child.stdin?.on("error", () => undefined);
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const held = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new UserError(`the database's backup lock was not taken within ${timeoutMs / 1000} s: ${stderr.trim()}`),
        ),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("crm-backup-locked")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void closed.then((code) => {
      clearTimeout(timer);
      reject(
        new UserError(
          `the database session ended (exit ${code}) before it held the backup lock: ${stderr.trim() || "no message"}`,
        ),
      );
    });
  });
  held.catch(() => undefined);
  child.stdin?.write(BACKUP_LOCK_SQL);
  const release = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end("BACKUP STAGE END;\n");
      const timer = setTimeout(() => child.kill("SIGKILL"), OPS_TIMEOUTS.backupLockReleaseSeconds * 1000);
      await closed;
      clearTimeout(timer);
    }
  };
  return { held, release };
}

/** What `backup` made. */
export interface BackupResult {
  readonly snapshotId: string;
  readonly volumeId: string;
  /** Milliseconds the database held its commits. */
  readonly lockedMs: number;
}

/**
 * `backup`: the data volume's snapshot, application-consistent: MariaDB's commits held (BACKUP STAGE
 * BLOCK_COMMIT) in one session, the file system synced, CreateSnapshot (the snapshot's point in time),
 * the lock released, then a wait (at most `waitSeconds`) until the snapshot is completed.
 */
export async function backup(
  ec2: EC2Client,
  shell: HostShell,
  settings: StackSettings,
  report: Report,
  waitSeconds: number = OPS_TIMEOUTS.snapshotSeconds,
): Promise<BackupResult> {
  if (settings.provisioning.topology === "scale-out") throw new UserError(SCALE_OUT_BACKUPS, 2);
  const volume = await findDataVolume(ec2, settings);
  const volumeId = volume.VolumeId ?? "";
  report(`data volume ${volumeId}: holding the database's commits (BACKUP STAGE BLOCK_COMMIT)`);
  const lock = holdBackupLock(shell);
  let snapshotId: string;
  const started = Date.now();
  try {
    await lock.held;
    // The file systems' dirty pages on the volume too (what the database wrote before its lock).
    const sync = await hostRun(shell, "exec sync", "", OPS_TIMEOUTS.syncSeconds * 1000);
    if (sync.code !== 0) throw new UserError(`sync failed on the host: ${sync.stderr.trim()}`);
    const created = await ec2.send(
      new CreateSnapshotCommand({
        VolumeId: volumeId,
        Description: `${settings.stackName}/${settings.instanceName} data, application-consistent: npm run ops backup`,
        TagSpecifications: [
          { ResourceType: "snapshot", Tags: backupSnapshotTags(volume, settings, "npm run ops backup") },
        ],
      }),
    );
    snapshotId = created.SnapshotId ?? "";
  } finally {
    await lock.release();
  }
  const lockedMs = Date.now() - started;
  report(
    `snapshot ${snapshotId} started; the database commits again (held ${lockedMs} ms); waiting until it completes`,
  );
  await waitUntilSnapshotCompleted(
    { client: ec2, maxWaitTime: waitSeconds, minDelay: 5, maxDelay: 30 },
    { SnapshotIds: [snapshotId] },
  );
  report(`snapshot ${snapshotId} completed`);
  return { snapshotId, volumeId, lockedMs };
}

/** Why the scale-out topology refuses backup and restore. */
/** The snapshots of the stack's data volume, oldest first; `id`: that one only, which must be the stack's. */
export async function dataSnapshots(ec2: EC2Client, settings: StackSettings, id?: string): Promise<Snapshot[]> {
  const tags = snapshotTags(settings);
  // A named one through a filter: SnapshotIds would fail the call for an id that is not there.
  const { Snapshots = [] } = await ec2.send(
    new DescribeSnapshotsCommand({
      OwnerIds: ["self"],
      Filters: [
        ...Object.entries(tags).map(([key, value]) => ({ Name: `tag:${key}`, Values: [value] })),
        ...(id ? [{ Name: "snapshot-id", Values: [id] }] : []),
      ],
    }),
  );
  return Snapshots.filter((s) => s.State === "completed").sort(
    (a, b) => (a.StartTime?.getTime() ?? 0) - (b.StartTime?.getTime() ?? 0),
  );
}

/** The snapshot to restore: the one named (the stack's, completed), or the newest. */
export async function chooseSnapshot(ec2: EC2Client, settings: StackSettings, id?: string): Promise<Snapshot> {
  const tags = Object.entries(snapshotTags(settings))
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  const found = await dataSnapshots(ec2, settings, id);
  const chosen = found[found.length - 1];
  if (!chosen)
    throw new UserError(
      id ? `no completed snapshot ${id} tagged ${tags}` : `no completed snapshot tagged ${tags} in ${settings.region}`,
    );
  return chosen;
}

/** The host side of the restore drill (scripts/restore-drill.sh), functions only. */
export const DRILL_SCRIPT = readFileSync(join(__dirname, "restore-drill.sh"), "utf8");

/** The host command of the drill: the script's functions, then drill_main with the scratch volume's id. */
export function drillCommand(settings: StackSettings, volumeId: string): string {
  const header = {
    DATABASE_NAME: settings.provisioning.databaseName,
    DATA_FILE_SYSTEM,
    DEVICE_DIR: HOST_FILES.deviceDirectory,
  };
  return [
    ...Object.entries(header).map(([name, value]) => `readonly ${name}=${shellQuote(value)}`),
    DRILL_SCRIPT,
    `drill_main ${shellQuote(volumeId)}`,
  ].join("\n");
}

/** The tag `CreatedBy` of the drill's scratch volumes (with `Name` = `<stack>/<instance>/restore-drill`). */
export const DRILL_CREATED_BY = "npm run ops restore --drill";

/**
 * Removes the scratch volumes a drill cut off before its own clean-up (a kill on this machine) left:
 * detached if attached (the host's side unmounted when its session ended), then deleted.
 */
export async function removeScratchVolumes(
  ec2: EC2Client,
  settings: StackSettings,
  report: Report,
  waitSeconds: number,
): Promise<void> {
  const { Volumes = [] } = await ec2.send(
    new DescribeVolumesCommand({
      Filters: [
        { Name: "tag:Name", Values: [`${settings.stackName}/${settings.instanceName}/restore-drill`] },
        { Name: "tag:CreatedBy", Values: [DRILL_CREATED_BY] },
      ],
    }),
  );
  for (const volume of Volumes) {
    const wait = { client: ec2, maxWaitTime: waitSeconds, minDelay: 2, maxDelay: 15 };
    for (const attachment of volume.Attachments ?? []) {
      await ec2.send(new DetachVolumeCommand({ VolumeId: volume.VolumeId, InstanceId: attachment.InstanceId }));
      await waitUntilVolumeAvailable(wait, { VolumeIds: [volume.VolumeId!] });
    }
    await ec2.send(new DeleteVolumeCommand({ VolumeId: volume.VolumeId }));
    report(`drill: deleted ${volume.VolumeId}, the scratch volume of a drill cut off before its clean-up`);
  }
}

/** The device name the drill attaches its volume as (the data volume is /dev/sdf). */
export const DRILL_DEVICE = "/dev/sdg";

/**
 * `restore --drill`: a volume from the snapshot in the data volume's zone, attached to the host beside
 * it, checked there by the drill script (a throwaway mariadbd on it, tables and row counts against the
 * live database), detached and deleted whatever happened. Resolves with the host's exit status.
 */
export async function restoreDrill(
  ec2: EC2Client,
  shell: HostShell,
  settings: StackSettings,
  report: Report,
  snapshotId?: string,
  waitSeconds: number = OPS_TIMEOUTS.drillSeconds,
): Promise<number> {
  if (settings.provisioning.topology === "scale-out") throw new UserError(SCALE_OUT_BACKUPS, 2);
  const volume = await findDataVolume(ec2, settings);
  const instanceId = volume.Attachments?.find((a) => a.State === "attached")?.InstanceId;
  if (!instanceId) throw new UserError(`the data volume ${volume.VolumeId} is not attached to a host`);
  const snapshot = await chooseSnapshot(ec2, settings, snapshotId);
  await removeScratchVolumes(ec2, settings, report, waitSeconds);
  report(
    `drill: snapshot ${snapshot.SnapshotId} (${snapshot.StartTime?.toISOString()}) to a scratch volume in ${volume.AvailabilityZone}`,
  );
  const created = await ec2.send(
    new CreateVolumeCommand({
      SnapshotId: snapshot.SnapshotId,
      AvailabilityZone: volume.AvailabilityZone,
      VolumeType: volume.VolumeType,
      TagSpecifications: [
        {
          ResourceType: "volume",
          Tags: [
            { Key: "Name", Value: `${settings.stackName}/${settings.instanceName}/restore-drill` },
            { Key: "CreatedBy", Value: DRILL_CREATED_BY },
          ],
        },
      ],
    }),
  );
  const drillVolume = created.VolumeId ?? "";
  let attached = false;
  const wait = { client: ec2, maxWaitTime: waitSeconds, minDelay: 2, maxDelay: 15 };
  try {
    await waitUntilVolumeAvailable(wait, { VolumeIds: [drillVolume] });
    await ec2.send(new AttachVolumeCommand({ VolumeId: drillVolume, InstanceId: instanceId, Device: DRILL_DEVICE }));
    attached = true;
    await waitUntilVolumeInUse(wait, { VolumeIds: [drillVolume] });
    report(`drill: ${drillVolume} attached to ${instanceId} as ${DRILL_DEVICE}; checking it on the host`);
    const result = await hostRun(shell, drillCommand(settings, drillVolume), "", waitSeconds * 1000);
    process.stdout.write(result.stdout);
    if (result.stderr) report(result.stderr.trimEnd());
    return result.code;
  } finally {
    if (attached) {
      await ec2
        .send(new DetachVolumeCommand({ VolumeId: drillVolume, InstanceId: instanceId, Force: false }))
        .catch((e: Error) => report(`drill: detach: ${e.message}`));
      await waitUntilVolumeAvailable(wait, { VolumeIds: [drillVolume] }).catch((e: Error) =>
        report(`drill: waiting for the detach: ${e.message}`),
      );
    }
    await ec2
      .send(new DeleteVolumeCommand({ VolumeId: drillVolume }))
      .then(() => report(`drill: ${drillVolume} deleted`))
      .catch((e: Error) =>
        report(
          `drill: could not delete ${drillVolume} (${e.message}): delete it with aws ec2 delete-volume --volume-id ${drillVolume}`,
        ),
      );
  }
}
