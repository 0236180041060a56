/**
 * The ops command's everyday actions (docs/operations.md, "Everyday tasks"), run for real: the host's
 * `restart` and `db` (userdata/ops.sh, as the provisioning script installs the command) against the
 * harness's parts (MariaDB, the app's unit running server.js), and the workstation's `logs`, `backup`
 * and the restore drill's host side (scripts/ops-everyday.ts, scripts/restore-drill.sh) with their
 * host commands run by bash on the stand-in host, as sshd runs what ssh sends, and EC2 in moto's server.
 */
import { execFileSync } from "child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import {
  AttachVolumeCommand,
  CreateVolumeCommand,
  DescribeImagesCommand,
  DescribeSnapshotsCommand,
  DescribeVolumesCommand,
  EC2Client,
  RunInstancesCommand,
} from "@aws-sdk/client-ec2";
import {
  backup,
  BACKUP_LOCK_COMMAND,
  dataSnapshots,
  DRILL_SCRIPT,
  holdBackupLock,
  hostRun,
  logOptions,
  logsCommand,
  restoreDrill,
} from "../../scripts/ops-everyday";
import { restoreGuide, restoreSteps } from "../../scripts/ops-restore";
import { UserError } from "../../scripts/cli-options";
import { opsPaths, renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { StackSettings } from "../../settings/stack-settings";
import { shellQuote } from "../../userdata/script";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { guidedRestore, parseOpsArgs, runOps } from "../../scripts/ops";
import { findEngine } from "../support/terraform-engine";
import { actionAuditLines, ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { exampleStackSettings } from "../support/synth";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const APP_PASSWORD = `app pass "$USER" 100%`;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("r00t 'pw'"),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64("ghp_Everyday"),
};
/** The app: one line in its journal at each start, then it answers. */
const SERVER =
  "console.log('crm server listening'); require('http').createServer((q, r) => r.end('crm')).listen(process.env.PORT);\n";

const motoMissing = findMotoServer() ? [] : ["moto_server"];

describeWithTools(
  "the everyday ops actions, run for real",
  [...ProvisioningHarness.toolsMissing(), ...motoMissing],
  () => {
    let h: ProvisioningHarness;
    let ops: ReturnType<typeof opsPaths>;
    let settings: StackSettings;
    let moto: MotoServer;
    let ec2: EC2Client;
    let scratch: string;

    /** Runs the host's ops command as root through sudo by alice. */
    const run = (args: string[], input?: string): Promise<RunResult> =>
      h.runCommand(ops.command, args, { env: { SUDO_USER: "alice" }, input });
    const audit = () => actionAuditLines(ops.auditLog);
    const shell = (command: string) => h.shell(command);

    beforeAll(async () => {
      scratch = mkdtempSync(join(tmpdir(), "crm-everyday-"));
      h = await ProvisioningHarness.start({ sourceHostToken: "ghp_Everyday", app: true });
      ops = opsPaths(h.settings);
      settings = { ...exampleStackSettings(), provisioning: h.settings };
      await h.commitToRepository({ "server.js": SERVER }, "a server that logs");
      const first = await h.run(renderProvisioningScript(h.settings, SECRETS), { retryPauseSeconds: 0 });
      expect(first.exitCode).toBe(0);
      moto = await MotoServer.start(findMotoServer()!);
      ec2 = new EC2Client({
        region: settings.region,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
    });

    afterAll(async () => {
      ec2?.destroy();
      await moto?.stop();
      await h?.stop();
      rmSync(scratch, { recursive: true, force: true });
    }, TEARDOWN_MS);

    test("restart restarts the app's unit, waits for its health check and writes an audit line", async () => {
      const before = h.calls().length;
      const restarted = await run(["restart"]);
      expect(restarted.exitCode).toBe(0);
      expect(restarted.output).toMatch(/crm-test\.service answers HTTP 200 on \//);
      expect(h.calls().slice(before)).toContain("systemctl restart crm-test.service");
      expect(audit().pop()).toMatch(/^\S+Z alice restart: - -> -: ok$/);
    });

    test("restart of an app that does not come back fails, saying so, in its audit line too; arguments are refused", async () => {
      const server = join(h.settings.appDir, "server.js");
      writeFileSync(server, "process.exit(3);\n");
      try {
        const failed = await run(["restart"]);
        expect(failed.exitCode).toBe(1);
        expect(failed.output).toContain("the server exited with status 3");
        expect(failed.output).toContain("ERROR: the app does not answer after its restart");
        expect(audit().pop()).toMatch(
          /^\S+Z alice restart: - -> -: the app does not answer after its restart \(exit 1\)$/,
        );
      } finally {
        writeFileSync(server, SERVER);
      }
      expect((await run(["restart"])).exitCode).toBe(0);
      const extra = await run(["restart", "now"]);
      expect(extra.exitCode).toBe(1);
      expect(extra.output).toContain("ERROR: restart takes no arguments; got 'now'");
    });

    test("db is a MariaDB session as the app user on the app's database; the password never on a command line", async () => {
      const session = await run(["db"], "SELECT CURRENT_USER(), DATABASE(), COUNT(*) FROM customers;\n");
      expect(session.exitCode).toBe(0);
      expect(session.output).toContain(`crm_app@localhost\t${h.settings.databaseName}\t3`);
      const bad = await run(["db", "drop"]);
      expect(bad.exitCode).toBe(1);
      expect(bad.output).toContain("ERROR: db takes nothing or dump; got 'drop'");
      for (const call of h.calls()) expect(call).not.toContain(APP_PASSWORD);
    });

    test("db dump is a consistent mariadb-dump of the app's database, as the app user", async () => {
      const dump = await run(["db", "dump"]);
      expect(dump.exitCode).toBe(0);
      expect(dump.output).toContain("CREATE TABLE `customers`");
      expect(dump.output).toContain("INSERT INTO `customers` VALUES\n(1,'Ada'),\n(2,'Grace'),\n(3,'Linus');");
      expect(h.calls()).toContain(`mariadb-dump --single-transaction --user=crm_app ${h.settings.databaseName}`);
      expect(dump.output).not.toContain(APP_PASSWORD);
    });

    test("logs shows the app's journal, the provisioning log and the audit log, as the options say", async () => {
      const app = await hostRun(shell, logsCommand(settings, "app", logOptions([], { lines: "50" }).options));
      expect(app.code).toBe(0);
      expect(app.stdout).toContain("crm server listening");
      expect(h.calls()).toContain("journalctl --no-pager -u crm-test.service -n 50");
      const since = await hostRun(
        shell,
        logsCommand(settings, "app", logOptions(["app"], { since: "2 hours ago" }).options),
      );
      expect(since.code).toBe(0);
      expect(h.calls()).toContain("journalctl --no-pager -u crm-test.service -n 100 --since 2 hours ago");
      const provisioning = await hostRun(
        shell,
        logsCommand(settings, "provisioning", logOptions(["provisioning"], { lines: "3" }).options),
      );
      expect(provisioning.stdout.trim().split("\n")).toHaveLength(3);
      expect(provisioning.stdout).toContain("provisioning crm-test: done");
      const audited = await hostRun(shell, logsCommand(settings, "ops", logOptions(["ops"], {}).options));
      expect(audited.stdout).toMatch(/alice restart: - -> -: ok/);
      // No MariaDB error log file here (Amazon Linux's is /var/log/mariadb/mariadb.log): the unit's journal.
      const database = await hostRun(
        shell,
        logsCommand(settings, "database", logOptions(["database"], { lines: "5" }).options),
      );
      expect(database.code).toBe(0);
      expect(h.calls()).toContain("journalctl --no-pager -u mariadb.service -n 5");
    });

    test("logs refuses bad options with one line naming the value", () => {
      const refusal = (args: string[], options: Record<string, string>) => {
        try {
          logOptions(args, options);
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
          return (error as Error).message;
        }
        throw new Error("accepted");
      };
      expect(refusal(["nginx"], {})).toBe('logs: no log "nginx": the logs are app, provisioning, ops, database');
      expect(refusal([], { lines: "0" })).toBe('--lines must be a number of lines from 1 to 999999, got "0"');
      expect(refusal([], { since: "$(reboot)" })).toMatch(/^--since must be a date .*, got "\$\(reboot\)"$/);
      expect(refusal(["ops"], { since: "today" })).toBe(
        "--since reads the journal; the ops log is a file: use --lines",
      );
    });

    test("backup snapshots the data volume while MariaDB holds its commits, tags it like the daily ones and waits until it completes", async () => {
      const { VolumeId } = await ec2.send(
        new CreateVolumeCommand({
          AvailabilityZone: `${settings.region}a`,
          Size: 8,
          VolumeType: "gp3",
          TagSpecifications: [
            {
              ResourceType: "volume",
              Tags: [
                { Key: "Name", Value: `${settings.stackName}/${settings.instanceName}/data` },
                { Key: "Backup", Value: `${settings.stackName}/${settings.instanceName}/data` },
              ],
            },
          ],
        }),
      );
      // At the moment of CreateSnapshot, a commit waits for the backup lock (and gives up after 1 s).
      const duringSnapshot: string[] = [];
      ec2.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === "CreateSnapshotCommand") {
            const insert = await hostRun(
              shell,
              `mariadb --user=root ${shellQuote(h.settings.databaseName)}`,
              "SET SESSION lock_wait_timeout = 1; INSERT INTO orders VALUES (98, 2);\n",
              30_000,
            );
            duringSnapshot.push(insert.stderr);
          }
          return next(args);
        },
        { step: "initialize", name: "watchTheLock" },
      );
      const reports: string[] = [];
      try {
        const made = await backup(ec2, shell, settings, (line) => reports.push(line), 60);
        expect(made.volumeId).toBe(VolumeId);
        expect(duringSnapshot).toEqual([expect.stringContaining("Lock wait timeout exceeded")]);
        const { Snapshots = [] } = await ec2.send(new DescribeSnapshotsCommand({ SnapshotIds: [made.snapshotId] }));
        expect(Snapshots[0]).toMatchObject({ VolumeId, State: "completed" });
        expect(Object.fromEntries((Snapshots[0].Tags ?? []).map((t) => [t.Key, t.Value]))).toEqual({
          Name: `${settings.stackName}/${settings.instanceName}/data`,
          Backup: `${settings.stackName}/${settings.instanceName}/data`,
          Stack: settings.stackName,
          Instance: settings.instanceName,
          CreatedBy: "npm run ops backup",
        });
        expect(reports.join("\n")).toContain(`snapshot ${made.snapshotId} completed`);
      } finally {
        ec2.middlewareStack.remove("watchTheLock");
      }
      // Released: commits go through again.
      expect(
        await h.query(
          `INSERT INTO ${h.settings.databaseName}.orders VALUES (98, 2); SELECT COUNT(*) FROM ${h.settings.databaseName}.orders;`,
        ),
      ).toBe("3");
    });

    test("backup refuses a scale-out stack and a stack whose data volume is not found, before any lock", async () => {
      const scaleOut = {
        ...settings,
        provisioning: { ...settings.provisioning, topology: "scale-out" },
      } as StackSettings;
      await expect(backup(ec2, shell, scaleOut, () => undefined)).rejects.toThrow(
        /^backup and restore work on a single host's data volume/,
      );
      const other = { ...settings, stackName: "OtherStack" };
      await expect(backup(ec2, shell, other, () => undefined)).rejects.toThrow(
        `no volumes tagged Backup=OtherStack/${settings.instanceName}/data in ${settings.region}`,
      );
    });

    test("the restore drill's host side starts a throwaway server on a copy of the data directory and compares row counts", async () => {
      // A copy of the live data directory taken under the backup lock, as a snapshot is.
      const copy = join(scratch, "copy");
      const lock = holdBackupLock(shell);
      await lock.held;
      execFileSync("cp", ["-a", join(h.dir, "mysql"), copy]);
      await lock.release();
      await h.query(`INSERT INTO ${h.settings.databaseName}.orders VALUES (99, 1);`);
      const drillDir = join(scratch, "drill");
      const command = [
        `readonly DATABASE_NAME=${shellQuote(h.settings.databaseName)}`,
        DRILL_SCRIPT,
        `mkdir ${shellQuote(drillDir)}; DRILL_DIR=${shellQuote(drillDir)}; drill_check ${shellQuote(copy)}`,
      ].join("\n");
      const drill = await hostRun(shell, command, "", 150_000);
      expect(drill.stderr).toBe("");
      expect(drill.code).toBe(0);
      const rows = drill.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/));
      expect(rows).toEqual([
        ["table", "live", "snapshot"],
        ["customers", "3", "3"],
        ["orders", "4", "3"],
        [
          "drill:",
          "2",
          "tables;",
          "1",
          "with",
          "other",
          "row",
          "counts",
          "than",
          "the",
          "live",
          "database",
          "(rows",
          "changed",
          "since",
          "the",
          "snapshot);",
          "0",
          "missing",
          "from",
          "the",
          "snapshot",
        ],
      ]);
      // The throwaway server is gone (its socket with it); the live one still serves.
      expect(existsSync(join(drillDir, "server", "drill.pid"))).toBe(false);
      expect(readdirSync(join(drillDir, "server")).filter((name) => name.endsWith(".sock"))).toEqual([]);
      expect(await h.query("SELECT 1")).toBe("1");
    });

    test("restore --drill: a volume from the newest snapshot, attached, checked on the host by a throwaway server, detached and deleted", async () => {
      // The data volume attached to a host, as the stack has it; the snapshot is the backup test's.
      const { Images = [] } = await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"] }));
      const { Instances = [] } = await ec2.send(
        new RunInstancesCommand({
          ImageId: Images[0].ImageId,
          MinCount: 1,
          MaxCount: 1,
          Placement: { AvailabilityZone: `${settings.region}a` },
        }),
      );
      const instanceId = Instances[0].InstanceId!;
      const [data] =
        (
          await ec2.send(
            new DescribeVolumesCommand({
              Filters: [{ Name: "tag:Backup", Values: [`${settings.stackName}/${settings.instanceName}/data`] }],
            }),
          )
        ).Volumes ?? [];
      await ec2.send(new AttachVolumeCommand({ VolumeId: data.VolumeId, InstanceId: instanceId, Device: "/dev/sdf" }));
      // What EC2 restores from it, as a block device: a file system holding a copy of the data directory taken under the backup lock.
      const devices = join(scratch, "dev");
      const image = async (name: string, withData: boolean) => {
        const root = join(scratch, `${name}-root`);
        execFileSync("mkdir", ["-p", root]);
        if (withData) {
          const lock = holdBackupLock(shell);
          await lock.held;
          execFileSync("cp", ["-a", join(h.dir, "mysql"), join(root, "mysql")]);
          await lock.release();
          // Owned by a user of its own, as the mysql user owns it on a host: the throwaway server runs as that user.
          execFileSync("chown", ["-R", "nobody:", join(root, "mysql")]);
        }
        execFileSync("mkfs.ext4", ["-q", "-F", "-d", root, join(scratch, `${name}.img`), "512M"]);
        return execFileSync("losetup", ["--find", "--show", join(scratch, `${name}.img`)], { encoding: "utf8" }).trim();
      };
      const loops = [await image("good", true), await image("empty", false)];
      let device = loops[0];
      // Each scratch volume EC2 creates appears as the NVMe device named by its id, as on a Nitro instance.
      ec2.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          if (context.commandName === "CreateVolumeCommand") {
            const volumeId = (result.output as { VolumeId: string }).VolumeId;
            execFileSync("mkdir", ["-p", join(devices, "disk", "by-id")]);
            execFileSync("ln", [
              "-sfn",
              device,
              join(devices, "disk", "by-id", `nvme-Amazon_Elastic_Block_Store_${volumeId.replace("-", "")}`),
            ]);
          }
          return result;
        },
        { step: "initialize", name: "scratchDevice" },
      );
      // The host's /dev is the scratch one; its mounts in a namespace of their own.
      const drillShell = (command: string) =>
        h.shell(
          `exec unshare --mount --propagation private bash -c ${shellQuote(
            command.replace("readonly DEVICE_DIR='/dev'", `readonly DEVICE_DIR=${shellQuote(devices)}`),
          )}`,
        );
      const drills = () => readdirSync("/run").filter((name) => name.startsWith("crm-restore-drill."));
      const before = drills();
      const scratchVolumes = async () =>
        (
          (
            await ec2.send(
              new DescribeVolumesCommand({
                Filters: [
                  { Name: "tag:Name", Values: [`${settings.stackName}/${settings.instanceName}/restore-drill`] },
                ],
              }),
            )
          ).Volumes ?? []
        ).map((v) => v.VolumeId);
      // What a drill killed on this machine before its clean-up leaves: its scratch volume, attached.
      const { VolumeId: stale } = await ec2.send(
        new CreateVolumeCommand({
          AvailabilityZone: `${settings.region}a`,
          Size: 8,
          TagSpecifications: [
            {
              ResourceType: "volume",
              Tags: [
                { Key: "Name", Value: `${settings.stackName}/${settings.instanceName}/restore-drill` },
                { Key: "CreatedBy", Value: "npm run ops restore --drill" },
              ],
            },
          ],
        }),
      );
      await ec2.send(new AttachVolumeCommand({ VolumeId: stale, InstanceId: instanceId, Device: "/dev/sdg" }));
      const reports: string[] = [];
      const written: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string) => {
        written.push(String(chunk));
        return true;
      }) as typeof process.stdout.write;
      try {
        const code = await restoreDrill(ec2, drillShell, settings, (line) => reports.push(line), undefined, 60);
        expect({ code, reports }).toMatchObject({ code: 0 });
        expect(written.join("")).toMatch(/^customers +3 +3$/m);
        expect(written.join("")).toMatch(
          /^drill: 2 tables; \d+ with other row counts than the live database .*; 0 missing from the snapshot$/m,
        );
        expect(reports).toContain(`drill: deleted ${stale}, the scratch volume of a drill cut off before its clean-up`);
        expect(reports.join("\n")).toMatch(/drill: vol-\S+ attached to i-\S+ as \/dev\/sdg; checking it on the host/);
        expect(reports.join("\n")).toMatch(/drill: cleaned up \(exit 0\)/);
        expect(reports.join("\n")).toMatch(/drill: vol-\S+ deleted/);
        expect(await scratchVolumes()).toEqual([]);
        // A snapshot without a database: the drill fails, and still leaves nothing behind.
        device = loops[1];
        reports.length = 0;
        const failed = await restoreDrill(ec2, drillShell, settings, (line) => reports.push(line), undefined, 60);
        expect(failed).toBe(1);
        expect(reports.join("\n")).toContain("drill: no mysql directory on the volume");
        expect(reports.join("\n")).toMatch(/drill: vol-\S+ deleted/);
        expect(await scratchVolumes()).toEqual([]);
        expect(drills()).toEqual(before);
      } finally {
        process.stdout.write = write;
        ec2.middlewareStack.remove("scratchDevice");
        for (const loop of loops) execFileSync("losetup", ["-d", loop]);
      }
    });

    test("npm run ops's own path (runOps): db dump --output writes a private file only when the dump ends well; logs and backup reach the host", async () => {
      // ssh as far as the host: the words after the host, as sshd hands them to the login shell, run by
      // bash on the harness's host (sudo -n dropped: the test runs as root), with the host's environment.
      const env = h.scriptEnv();
      const ssh = join(scratch, "ssh-to-the-harness");
      writeFileSync(
        ssh,
        [
          "#!/bin/bash",
          ...["PATH", "HOME", "LANG", "TMPDIR"].map((name) => `export ${name}=${shellQuote(env[name] ?? "")}`),
          "while [[ $1 != -- ]]; do shift; done",
          "shift 2",
          'command="$*"',
          'exec bash -c "${command#sudo -n }"',
          "",
        ].join("\n"),
      );
      chmodSync(ssh, 0o755);
      const ops = (...args: string[]) =>
        runOps(
          parseOpsArgs([settings.stackName, ...args, "--host", "127.0.0.1"], {}),
          settings,
          scratch,
          ssh,
          () => ec2,
        );
      const file = join(scratch, "crm.sql");
      expect(await ops("db", "dump", "--output", file)).toBe(0);
      expect(readFileSync(file, "utf8")).toContain("INSERT INTO `customers` VALUES");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // A dump that fails (no tool there: the installer finds no configuration, and the action does not run) leaves no
      // file, and no partial one.
      const broken = {
        ...settings,
        provisioning: { ...settings.provisioning, scriptDirectory: join(scratch, "nowhere") },
      };
      const failed = join(scratch, "failed.sql");
      expect(
        await runOps(
          parseOpsArgs([settings.stackName, "db", "dump", "--output", failed, "--host", "127.0.0.1"], {}),
          broken,
          scratch,
          ssh,
        ),
      ).toBe(1);
      expect(existsSync(join(scratch, "nowhere"))).toBe(false);
      expect(readdirSync(scratch).filter((name) => name.startsWith("failed.sql"))).toEqual([]);
      expect(await ops("logs", "ops", "--lines", "1")).toBe(0);
      const written: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string) => {
        written.push(String(chunk));
        return true;
      }) as typeof process.stdout.write;
      const log = jest.spyOn(console, "log").mockImplementation((line: string) => {
        written.push(line);
      });
      const error = jest.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        expect(await ops("backup")).toBe(0);
      } finally {
        process.stdout.write = write;
        log.mockRestore();
        error.mockRestore();
      }
      expect(written.pop()).toMatch(/^snap-[0-9a-f]+$/);
    });

    test("npm run ops release with a releaseCommand: the data volume's snapshot first, its id printed and in the audit line; with --no-backup none", async () => {
      // ssh as far as the host, as in the test above: the words after the host, run by bash on the harness's host.
      const env = h.scriptEnv();
      const ssh = join(scratch, "ssh-for-the-release");
      writeFileSync(
        ssh,
        [
          "#!/bin/bash",
          // The host's environment, its trust in the source host's certificate too (the release clones).
          ...["PATH", "HOME", "LANG", "TMPDIR", "GIT_SSL_CAINFO"].map(
            (name) => `export ${name}=${shellQuote(env[name] ?? "")}`,
          ),
          "while [[ $1 != -- ]]; do shift; done",
          "shift 2",
          'command="$*"',
          'exec bash -c "${command#sudo -n }"',
          "",
        ].join("\n"),
      );
      chmodSync(ssh, 0o755);
      await h.pushCommit(
        { "server.js": SERVER, "migrate.sh": "echo 'migrated: it ran'\n" },
        "a migration",
        "refs/heads/migrating",
      );
      const migrating = { ...settings, provisioning: { ...settings.provisioning, releaseCommand: "bash migrate.sh" } };
      const release = (...extra: string[]) =>
        runOps(
          parseOpsArgs([settings.stackName, "release", "migrating", ...extra, "--host", "127.0.0.1"], {}),
          migrating,
          scratch,
          ssh,
          () => ec2,
        );
      const reports: string[] = [];
      const error = jest.spyOn(console, "error").mockImplementation((line: string) => {
        reports.push(line);
      });
      try {
        const before = (await dataSnapshots(ec2, settings)).map((snapshot) => snapshot.SnapshotId);
        expect(await release()).toBe(0);
        const taken = (await dataSnapshots(ec2, settings))
          .map((snapshot) => snapshot.SnapshotId)
          .filter((id) => !before.includes(id));
        expect(taken).toEqual([expect.stringMatching(/^snap-[0-9a-f]+$/)]);
        expect(reports).toContain(
          `ops: snapshot ${taken[0]}: npm run ops -- ${settings.stackName} restore --snapshot ${taken[0]} goes back to it`,
        );
        expect(audit().pop()).toMatch(
          new RegExp(`^\\S+Z root release migrating after snapshot ${taken[0]}: \\S+ -> \\S+: ok$`),
        );
        expect(readFileSync(ops.auditLog, "utf8")).toContain(
          " | release migrating after snapshot " + taken[0] + ", release command: migrated: it ran\n",
        );

        const count = (await dataSnapshots(ec2, settings)).length;
        expect(await release("--no-backup")).toBe(0);
        expect((await dataSnapshots(ec2, settings)).length).toBe(count);
        expect(audit().pop()).toMatch(/^\S+Z root release migrating: \S+ -> \S+: ok$/);
      } finally {
        error.mockRestore();
      }
      // --no-backup is release's own.
      expect(() => parseOpsArgs([settings.stackName, "rollback", "--no-backup"], {})).toThrow(
        "--no-backup is an option of release, not of rollback",
      );
    });

    test("restore (the real one) prints the steps with the snapshot, checks every input of them, and runs Terraform only after the stack's name is typed", async () => {
      const printed: string[] = [];
      const errors: string[] = [];
      const log = jest.spyOn(console, "log").mockImplementation((line: string) => {
        printed.push(line);
      });
      const error = jest.spyOn(console, "error").mockImplementation((line: string) => {
        errors.push(line);
      });
      const stacks = join(scratch, "stacks");
      const stackDirectory = join(stacks, settings.stackName);
      execFileSync("mkdir", ["-p", stackDirectory]);
      const request = (...extra: string[]) => parseOpsArgs([settings.stackName, "restore", ...extra], {});
      const notAsked = async (): Promise<string> => {
        throw new Error("asked");
      };
      // A snapshot of the stack's (moto holds others, of its images).
      const [newest] =
        (
          await ec2.send(
            new DescribeSnapshotsCommand({
              OwnerIds: ["self"],
              Filters: [{ Name: "tag:Stack", Values: [settings.stackName] }],
            }),
          )
        ).Snapshots ?? [];
      const userDirectory = join(scratch, "the user's dir");
      const initCwd = process.env.INIT_CWD;
      process.env.INIT_CWD = userDirectory;
      try {
        // Without --var-file: the guide only; its tfvars is where the user is, absolute (the guide changes directory) and quoted.
        expect(await guidedRestore(request("--snapshot", newest.SnapshotId!), settings, ec2, stacks, notAsked)).toBe(0);
        expect(printed.join("\n").split("\n")).toContain(
          `terraform apply -var=data_volume_snapshot_id=${newest.SnapshotId} -replace=aws_instance.crm_host ` +
            `'-var-file=${userDirectory.replace(/'/g, "'\\''")}/dev.tfvars'`,
        );
        expect(errors.pop()).toMatch(/^ops: restore: nothing changed; give --var-file/);
        const varFile = join(scratch, "dev.tfvars");
        // A tfvars that is not there: refused before the confirmation, nothing asked, nothing run.
        await expect(guidedRestore(request("--var-file", varFile), settings, ec2, stacks, notAsked)).rejects.toThrow(
          `--var-file ${varFile} is not a file: expected your stack's tfvars`,
        );
        writeFileSync(varFile, 'instance_type = "t3.small"\n');
        const engine = findEngine();
        if (engine) {
          // A stack directory without a state, then one whose state holds neither the volume nor the host: refused, nothing asked.
          await expect(
            guidedRestore(request("--var-file", varFile), settings, ec2, stacks, notAsked, engine),
          ).rejects.toThrow(
            `terraform state list failed in ${stackDirectory} (No state file was found!): run terraform init there`,
          );
          writeFileSync(
            join(stackDirectory, "terraform.tfstate"),
            JSON.stringify({
              version: 4,
              terraform_version: "1.11.4",
              serial: 1,
              lineage: "3f1c1c1e-0000-4000-8000-000000000001",
              outputs: {},
              resources: [],
            }),
          );
          await expect(
            guidedRestore(request("--var-file", varFile), settings, ec2, stacks, notAsked, engine),
          ).rejects.toThrow(`the state in ${stackDirectory} holds no aws_instance.crm_host or aws_ebs_volume.crm_data`);
          // A deployed stack's state (the two resources): a tfvars that is not there leaves it whole, confirmed or not.
          writeFileSync(
            join(stackDirectory, "terraform.tfstate"),
            JSON.stringify({
              version: 4,
              terraform_version: "1.11.4",
              serial: 1,
              lineage: "3f1c1c1e-0000-4000-8000-000000000001",
              outputs: {},
              check_results: null,
              resources: [
                ["aws_ebs_volume", "crm_data", "vol-0123456789abcdef0"],
                ["aws_instance", "crm_host", "i-0123456789abcdef0"],
              ].map(([type, name, id]) => ({
                mode: "managed",
                type,
                name,
                provider: 'provider["registry.terraform.io/hashicorp/aws"]',
                instances: [{ schema_version: 0, attributes: { id } }],
              })),
            }),
          );
          const state = () =>
            execFileSync(engine, ["state", "list"], { cwd: stackDirectory, encoding: "utf8" }).trim().split("\n");
          expect(state()).toEqual(["aws_ebs_volume.crm_data", "aws_instance.crm_host"]);
          await expect(
            guidedRestore(
              request("--var-file", join(scratch, "missing.tfvars")),
              settings,
              ec2,
              stacks,
              async () => settings.stackName,
              engine,
            ),
          ).rejects.toThrow(/^--var-file \S+missing.tfvars is not a file/);
          expect(state()).toEqual(["aws_ebs_volume.crm_data", "aws_instance.crm_host"]);
          expect(
            await guidedRestore(request("--var-file", varFile), settings, ec2, stacks, async () => "yes", engine),
          ).toBe(1);
          expect(errors.pop()).toBe(
            `ops: restore: not confirmed ("yes" is not ${settings.stackName}); nothing changed`,
          );
          expect(state()).toEqual(["aws_ebs_volume.crm_data", "aws_instance.crm_host"]);
          // No Terraform: named before anything is asked.
          await expect(
            guidedRestore(
              request("--var-file", varFile),
              settings,
              ec2,
              stacks,
              notAsked,
              join(scratch, "no-terraform"),
            ),
          ).rejects.toThrow(`Terraform (${join(scratch, "no-terraform")}) is not installed`);
          // A step that fails after state rm (here apply: the directory holds no configuration) says how to put the volume back.
          expect(
            await guidedRestore(
              request("--var-file", varFile),
              settings,
              ec2,
              stacks,
              async () => settings.stackName,
              engine,
            ),
          ).not.toBe(0);
          expect(state()).toEqual(["aws_instance.crm_host"]);
          expect(errors.pop()).toBe(
            `ops: restore: terraform apply failed (exit 1); see its message above and docs/operations.md; the state no longer holds ` +
              `aws_ebs_volume.crm_data (vol-0123456789abcdef0, still in AWS): put it back with \`cd ${stackDirectory} && terraform import -var-file=${varFile} ` +
              "aws_ebs_volume.crm_data vol-0123456789abcdef0`, or run the restore again once the cause is fixed",
          );
        }
        await expect(
          guidedRestore(request("--snapshot", "snap-00000000000000000"), settings, ec2, stacks),
        ).rejects.toThrow(/^no completed snapshot snap-0{17} tagged Stack=/);
      } finally {
        if (initCwd === undefined) delete process.env.INIT_CWD;
        else process.env.INIT_CWD = initCwd;
        log.mockRestore();
        error.mockRestore();
      }
    });

    test("the lock session's command and the guided restore's steps are what docs/operations.md says, one list that the shell reads back", () => {
      expect(BACKUP_LOCK_COMMAND).toBe("exec mariadb --user=root --batch --skip-column-names --unbuffered");
      const varFile = '/p/it\'s my "dir" $HOME/dev.tfvars';
      const guide = restoreGuide(
        settings,
        { SnapshotId: "snap-0123456789abcdef0", StartTime: new Date("2026-05-01T03:00:00Z") },
        varFile,
      );
      const steps = restoreSteps("snap-0123456789abcdef0", varFile);
      const docs = readFileSync(join(__dirname, "../../docs/operations.md"), "utf8");
      // Each step as the guide prints it is, read by bash, the step's own arguments.
      for (const step of steps) {
        const line = guide.find((printed) => printed.startsWith(`terraform ${step[0]} `));
        expect(line).toBeDefined();
        expect(
          execFileSync("bash", ["-c", `terraform() { printf '%s\\n' "$@"; }; ${line}`], { encoding: "utf8" })
            .trimEnd()
            .split("\n"),
        ).toEqual(step);
        expect(docs).toContain(`terraform ${step[0]} ${step[1].replace(/snap-0123456789abcdef0/, "snap-…")}`);
      }
      expect(guide).toContain("terraform state rm aws_ebs_volume.crm_data");
    });
  },
);
