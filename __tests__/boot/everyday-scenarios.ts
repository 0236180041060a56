/**
 * The everyday ops actions in the boot test (host A, after ops-scenarios.ts, before the reboot), run as
 * an operator runs them: `npm run ops -- <stack> logs|restart|db dump|run|backup|restore --drill` on this
 * machine, over ssh to the VM. EC2 is moto's server on this machine (AWS_ENDPOINT_URL for the AWS SDK),
 * holding a stand-in of the stack's host and data volume; the restore drill's scratch volume is the
 * VM's second NVMe disk (serial DRILL_SERIAL), which this test fills with a block copy of the data
 * volume taken while its file system is frozen, as EBS restores a snapshot, and links as /dev/sdg
 * (the device name the drill attaches it as).
 */
import {
  AttachVolumeCommand,
  CreateVolumeCommand,
  DescribeImagesCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  RunInstancesCommand,
} from "@aws-sdk/client-ec2";
import { join } from "path";
import { backupTargetTags } from "../../constructs/data-volume-backups";
import { loadStackSettings } from "../../settings/stack-settings";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { underLoad } from "./load";
import { OpsCommand } from "./ops-scenarios";
import { CommandResult, Vm } from "./vm";

/** The serial of host A's second NVMe disk, the restore drill's scratch volume. */
export const DRILL_SERIAL = "crmdrill0scratch";

export interface EverydayScenarioContext {
  readonly vm: Vm;
  /** The local command against the VM (ops-scenarios.ts). */
  readonly opsCommand: OpsCommand;
  /** The data volume's serial (its id without the dash). */
  readonly dataSerial: string;
  /** Records a row of the test's figures; throws when it is not ok. */
  readonly figure: (name: string, value: string, ok: boolean) => void;
}

const all = (result: CommandResult) => `${result.stdout}\n${result.stderr}`;
const lastLine = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter((line) => line && !line.startsWith("sudo:"))
    .pop() ?? "";

export async function everydayScenarios({
  vm,
  opsCommand,
  dataSerial,
  figure,
}: EverydayScenarioContext): Promise<void> {
  const stack = loadStackSettings(join(__dirname, "settings.json"));
  const settings = stack.provisioning;

  const logs = await opsCommand(["logs", "--lines", "300"]);
  const appLines = logs.stdout
    .split("\n")
    .filter((line) => line.includes(`${settings.appName}.service`) || /yarn install|Started /.test(line));
  figure(
    "ops logs: the app's journal",
    `exit ${logs.code}, ${logs.stdout.split("\n").filter(Boolean).length} lines, ${appLines.length} of the app's unit`,
    logs.code === 0 && appLines.length > 0,
  );

  const restart = await underLoad(vm, "restart", figure, () => opsCommand(["restart"]));
  const answer = await vm.httpGet(3000, "/", 10_000);
  figure(
    "ops restart: back to HTTP 200",
    `exit ${restart.code}, then HTTP ${answer?.status ?? "none"}: ${lastLine(all(restart))}`,
    restart.code === 0 && answer?.status === 200 && /answers HTTP 200/.test(all(restart)),
  );

  const dump = await opsCommand(["db", "dump"]);
  const customers = (dump.stdout.match(/^\(\d+,'[^']*'\)[,;]$/gm) ?? []).length;
  figure(
    "ops db dump: the rows",
    `exit ${dump.code}, ${customers} rows of INSERT INTO \`customers\`, ${dump.stdout.length} bytes`,
    dump.code === 0 &&
      dump.stdout.includes("INSERT INTO `customers`") &&
      dump.stdout.includes("Ada Lovelace") &&
      customers >= 3,
  );

  // run: the serving release's directory (appDir's target), the app's user, the unit's NODE_ENV; a failing command's status.
  const release = (await vm.sshOk(`readlink -f ${settings.appDir}`)).trim();
  const run = await opsCommand([
    "run",
    "--",
    "node",
    "-e",
    "console.log([process.env.NODE_ENV, process.cwd(), require('os').userInfo().username].join(' '))",
  ]);
  figure(
    "ops run -- node -e …: the app's environment, directory and user",
    `exit ${run.code}: ${lastLine(run.stdout)}${run.code === 0 ? "" : ` (${lastLine(run.stderr)})`}`,
    run.code === 0 && lastLine(run.stdout) === `production ${release} ${settings.loginUser}`,
  );
  const failing = await opsCommand(["run", "--", "sh", "-c", "echo on stderr >&2; exit 3"]);
  figure(
    "ops run of a failing command: its exit status is the CLI's",
    `exit ${failing.code}: ${lastLine(failing.stderr)}`,
    failing.code === 3 && failing.stderr.includes("on stderr"),
  );

  // moto's EC2 holds the stack's host and its data volume, tagged and attached as the stack has them.
  const moto = await MotoServer.start(findMotoServer()!);
  const ec2 = new EC2Client({
    region: stack.region,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
  });
  try {
    const zone = `${stack.region}a`;
    const { Images = [] } = await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"] }));
    const { Instances = [] } = await ec2.send(
      new RunInstancesCommand({
        ImageId: Images[0].ImageId,
        MinCount: 1,
        MaxCount: 1,
        Placement: { AvailabilityZone: zone },
      }),
    );
    const tags = Object.entries({
      Name: `${stack.stackName}/${stack.instanceName}/data`,
      ...backupTargetTags(stack),
    }).map(([Key, Value]) => ({ Key, Value }));
    const { VolumeId } = await ec2.send(
      new CreateVolumeCommand({
        AvailabilityZone: zone,
        Size: 1,
        VolumeType: "gp3",
        TagSpecifications: [{ ResourceType: "volume", Tags: tags }],
      }),
    );
    await ec2.send(new AttachVolumeCommand({ VolumeId, InstanceId: Instances[0].InstanceId, Device: "/dev/sdf" }));
    const aws = {
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: "moto",
      AWS_SECRET_ACCESS_KEY: "moto",
      AWS_CONFIG_FILE: "/dev/null",
      AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    };

    const backup = await opsCommand(["backup"], aws);
    const snapshotId = lastLine(backup.stdout);
    const { Snapshots = [] } = /^snap-/.test(snapshotId)
      ? await ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [snapshotId] }))
      : {};
    const snapshotTags = Object.fromEntries((Snapshots[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
    figure(
      "ops backup: a snapshot through moto's EC2, waited for",
      `exit ${backup.code}, ${snapshotId} ${Snapshots[0]?.State ?? "not found"}, ` +
        `tags ${Object.keys(snapshotTags).sort().join(",")}; ${backup.stderr.split("\n").find((line) => line.includes("held")) ?? ""}`,
      backup.code === 0 &&
        Snapshots[0]?.State === "completed" &&
        Snapshots[0]?.VolumeId === VolumeId &&
        snapshotTags.Stack === stack.stackName &&
        snapshotTags.Backup === backupTargetTags(stack).Backup,
    );

    // The snapshot as EBS would restore it: a block copy of the data volume, frozen while copied, on the second disk.
    await vm.sshOk(
      [
        "set -e",
        `data=$(readlink -f "$(ls /dev/disk/by-id/*_${dataSerial} | head -n 1)")`,
        `drill=$(readlink -f "$(ls /dev/disk/by-id/*_${DRILL_SERIAL} | head -n 1)")`,
        `trap 'fsfreeze -u ${settings.dataMount}' EXIT`,
        `fsfreeze -f ${settings.dataMount}`,
        // Direct reads: the block device's page cache may hold blocks older than what XFS wrote (the copy was then corrupt: EIO in the drill).
        'dd if="$data" of="$drill" bs=4M iflag=direct oflag=direct conv=fsync status=none',
        `fsfreeze -u ${settings.dataMount}`,
        "trap - EXIT",
        'ln -sfn "$drill" /dev/sdg',
      ].join("\n"),
      { timeoutMs: 300_000 },
    );
    const drill = await opsCommand(["restore", "--drill"], aws);
    const rows = drill.stdout
      .split("\n")
      .filter((line) => /^\S+ +\d+ +\S+$/.test(line))
      .map((line) => line.split(/ +/));
    const same = rows.length > 0 && rows.every(([, live, snapshot]) => live === snapshot);
    const left =
      (
        await ec2.send(
          new DescribeVolumesCommand({ Filters: [{ Name: "tag:CreatedBy", Values: ["npm run ops restore --drill"] }] }),
        )
      ).Volumes ?? [];
    const mounts = (await vm.sshOk("findmnt -rn -o TARGET | grep -c crm-restore-drill || true")).trim();
    figure(
      "ops restore --drill on a second disk: row counts as the live database's",
      `exit ${drill.code}, ` +
        `${rows.map(([table, live, snapshot]) => `${table} ${live}/${snapshot}`).join(", ")}; ${left.length} scratch volumes left, ${mounts} drill mounts left` +
        // On failure, what the host's side said (its server's log among it), not only the clean-up's last line.
        `${
          drill.code === 0
            ? ""
            : `; ${drill.stderr
                .split("\n")
                .filter((line) => line.trim() && !/ (deleted|attached to|to a scratch volume)/.test(line))
                .join(" | ")}`
        }`,
      drill.code === 0 &&
        same &&
        left.length === 0 &&
        mounts === "0" &&
        /drill: \d+ tables; 0 with other row counts/.test(drill.stdout),
    );
  } finally {
    // EBS deletes the scratch volume; the second disk stays, so its copy (the data volume's UUID too) is wiped,
    // or the reboot that follows could mount it as the data volume.
    await vm.ssh(`wipefs -a -q "$(readlink -f "$(ls /dev/disk/by-id/*_${DRILL_SERIAL} | head -n 1)")"; rm -f /dev/sdg`);
    ec2.destroy();
    await moto.stop();
  }
}
