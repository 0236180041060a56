/**
 * The database on the data volume, with real block devices (loop devices over sparse files),
 * real file systems, real mounts (in private mount namespaces) and a real MariaDB started by the
 * script's `systemctl start mariadb`: host A provisions and the app writes rows; a reboot keeps
 * the mount; host A goes, and host B, a fresh "root disk" with the same data volume, keeps the
 * database. Devices that hold foreign data are mounted as they are, never formatted.
 */
import { execFileSync, spawnSync } from "child_process";
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync, writeSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { nativePasswordHash, ProvisioningHarness, RunResult, startedUnitCalls } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { DATABASE_DROP_IN, renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(180_000);

const VOLUME_ID = "vol-0123456789abcdef0";
const ROOT_PASSWORD = "r00t-Data-Volume 'x' $HOME";
const APP_PASSWORD = `app "volume" \`id\` 100%`;
const TOKEN = "ghp_DataVolumeToken123";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64(ROOT_PASSWORD),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64(TOKEN),
};
/** Rows the application writes on host A, besides the three of export.sql. */
const APP_ROWS = Array.from({ length: 200 }, (_, i) => `(${100 + i}, 'customer ${i} of host A')`).join(", ");

const work = mkdtempSync(join(tmpdir(), "crm-data-volume-"));
const devices: string[] = [];

/** A sparse image file of `mib` MiB attached to a free loop device; `prepare` runs on the image first. */
function loopDevice(name: string, mib: number, prepare?: (image: string) => void): string {
  const image = join(work, `${name}.img`);
  execFileSync("truncate", ["-s", `${mib}M`, image]);
  prepare?.(image);
  const device = execFileSync("losetup", ["--find", "--show", image], { encoding: "utf8" }).trim();
  devices.push(device);
  return device;
}

function blkid(device: string, tag: string): string {
  return spawnSync("blkid", ["-p", "-o", "value", "-s", tag, device], { encoding: "utf8" }).stdout.trim();
}

/** Table checksum, row count and a digest of every row, as the app's data would be compared. */
async function fingerprint(h: ProvisioningHarness): Promise<string> {
  const db = h.settings.databaseName;
  return h.query(`CHECKSUM TABLE ${db}.customers EXTENDED;
SELECT COUNT(*), SHA2(GROUP_CONCAT(id, ':', name ORDER BY id SEPARATOR '|'), 256) FROM ${db}.customers;`);
}

/** Starts a host with a data volume; links the device after `linkAfterMs` (the attachment comes late). */
async function provision(
  device: string | undefined,
  options: { linkAfterMs?: number; as?: "nvme" | "virtio" | "sdf"; waitSeconds?: number } = {},
) {
  const h = await ProvisioningHarness.start({
    sourceHostToken: TOKEN,
    databaseOnDataVolume: true,
    dataVolumeWaitSeconds: options.waitSeconds ?? 30,
  });
  let timer: NodeJS.Timeout | undefined;
  if (device) {
    if (options.linkAfterMs)
      timer = setTimeout(() => h.linkDataVolume(device, VOLUME_ID, options.as), options.linkAfterMs);
    else h.linkDataVolume(device, VOLUME_ID, options.as);
  }
  const result = await h.run(renderProvisioningScript(h.settings, SECRETS, VOLUME_ID), { timeoutMs: 150_000 });
  if (timer) clearTimeout(timer);
  return { h, result };
}

const missing = [...ProvisioningHarness.toolsMissing(), ...ProvisioningHarness.dataVolumeToolsMissing()];

describeWithTools("the database on the data volume, with real devices and mounts", missing, () => {
  afterAll(() => {
    for (const device of devices) spawnSync("losetup", ["--detach", device]);
    rmSync(work, { recursive: true, force: true });
  });

  describe("host A provisions on an empty volume, the app writes, a reboot; host B takes the volume over", () => {
    let device: string;
    let hostA: ProvisioningHarness;
    let hostB: ProvisioningHarness | undefined;
    let runA: RunResult;
    let uuidA = "";
    let beforeReplacement = "";
    const figures: string[] = [];

    beforeAll(async () => {
      device = loopDevice("data", 512);
      const started = Date.now();
      ({ h: hostA, result: runA } = await provision(device, { linkAfterMs: 2000 }));
      if (runA.exitCode !== 0) console.error(runA.output);
      figures.push(
        `host A: first boot provisioned in ${((Date.now() - started) / 1000).toFixed(1)} s (volume attached 2.0 s after the start)`,
      );
      uuidA = blkid(device, "UUID");
    });

    afterAll(async () => {
      await hostA?.stop();
      await hostB?.stop();
      if (figures.length) console.log(`data volume figures:\n  ${figures.join("\n  ")}`);
    }, TEARDOWN_MS);

    test("host A waits for the late volume, formats the empty volume as XFS and starts MariaDB on it", async () => {
      expect(runA.exitCode).toBe(0);
      expect(runA.output).toContain(`data volume ${VOLUME_ID} is ${device}`);
      expect(runA.output).toContain("the data volume holds no file system: creating xfs");
      expect(blkid(device, "TYPE")).toBe("xfs");
      expect(blkid(device, "LABEL")).toBe("crm-data");
      // The server runs on the bind mount of <dataMount>/mysql, on the volume.
      const pid = String(hostA.databasePid());
      const mounted = execFileSync(
        "findmnt",
        ["--task", pid, "--noheadings", "--output", "SOURCE,FSTYPE", "--target", hostA.host.databaseDir],
        { encoding: "utf8" },
      ).trim();
      expect(mounted).toBe(`${device}[/mysql] xfs`);
      expect(
        readFileSync(join(hostA.seenByDatabase(hostA.settings.dataMount), "mysql", "crm_test", "customers.frm")).length,
      ).toBeGreaterThan(0);
    });

    test("the volume is mounted before the database starts, which started on no other directory", () => {
      const { databaseDir } = hostA.host;
      const { appName } = hostA.settings;
      // After the telemetry timer's calls, before step 1.
      const telemetry = startedUnitCalls(
        [`${appName}-telemetry.service`, `${appName}-telemetry.timer`],
        `${appName}-telemetry.timer`,
        false,
      );
      const calls = runA.newCalls.filter((line) => /^(systemctl|database-)/.test(line));
      expect(calls.slice(0, telemetry.length)).toEqual(telemetry);
      expect(calls.slice(telemetry.length, telemetry.length + 10)).toEqual([
        "systemctl is-enabled --quiet nftables", // step 2: the firewall rules, before the database
        "systemctl enable --no-reload nftables",
        "systemctl daemon-reload", // the file system table and the database unit's drop-in
        "systemctl stop mariadb",
        ...startedUnitCalls([], "mariadb", false),
        `database-init ${databaseDir}`,
        `database-start ${databaseDir}`,
        "systemctl daemon-reload", // step 15's
      ]);
    });

    test("the fstab mounts the volume by UUID and binds the data directory, and the database unit waits for them", () => {
      const { dataMount } = hostA.settings;
      const { fstabFile, databaseDir, unitDirectory } = hostA.host;
      expect(readFileSync(fstabFile, "utf8")).toBe(
        [
          `UUID=${uuidA} ${dataMount} xfs defaults,nofail,x-systemd.device-timeout=2min 0 2`,
          `${dataMount}/mysql ${databaseDir} none bind,nofail,x-systemd.requires-mounts-for=${dataMount} 0 0`,
          `${hostA.settings.swapFile} none swap defaults 0 0`, // step 13
          "",
        ].join("\n"),
      );
      expect(readFileSync(join(unitDirectory, "mariadb.service.d", DATABASE_DROP_IN), "utf8")).toBe(
        `[Unit]\nRequiresMountsFor=${databaseDir}\n`,
      );
    });

    test("the app writes rows; a reboot mounts the volume from the fstab and the database keeps them", async () => {
      const { appDbUser, databaseName, dataMount } = hostA.settings;
      const { databaseDir } = hostA.host;
      await hostA.queryAs(appDbUser, APP_PASSWORD, `INSERT INTO ${databaseName}.customers VALUES ${APP_ROWS};`);
      beforeReplacement = await fingerprint(hostA);
      const calls = hostA.calls().length;
      const boot = await hostA.reboot();
      expect(boot.code).toBe(0);
      expect(boot.output.split("\n").map((line) => line.trim().split(/\s+/).join(" "))).toEqual([
        `${dataMount} ${device} xfs`,
        `${databaseDir} ${device}[/mysql] xfs`,
        "",
      ]);
      expect(await fingerprint(hostA)).toBe(beforeReplacement);
      // Only the unit started: no new data directory.
      expect(hostA.calls().slice(calls)).toEqual([`database-start ${databaseDir}`]);
      figures.push(
        `reboot: volume and bind mount back from the fstab, ${beforeReplacement.split("\n")[1].split("\t")[0]} rows identical by checksum`,
      );
    });

    test("host B, a fresh root disk, meets the database on the volume and keeps it", async () => {
      const uuidBefore = blkid(device, "UUID");
      await hostA.stop();
      const started = Date.now();
      let runB: RunResult;
      // Seen as a VM sees a disk whose serial is the volume id (any by-id name ending in it counts).
      ({ h: hostB, result: runB } = await provision(device, { as: "virtio" }));
      if (runB.exitCode !== 0) console.error(runB.output);
      expect(runB.exitCode).toBe(0);
      const h = hostB!;
      figures.push(
        `host B: first boot on the existing volume provisioned in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );

      // Never formatted, no new data directory, nothing imported twice.
      expect(runB.output).toContain("the data volume holds a xfs file system: mounting it as it is");
      expect(runB.output).not.toContain("creating xfs");
      expect(blkid(device, "UUID")).toBe(uuidBefore);
      expect(runB.newCalls.filter((line) => line.startsWith("database-init"))).toEqual([]);
      expect(runB.output).toContain("export.sql was imported before; not importing it again");

      // The rows, the root password and the app user with its password are those of host A.
      const after = await fingerprint(h);
      expect(after).toBe(beforeReplacement);
      expect(after.split("\n")[1].split("\t")[0]).toBe("203");
      expect(await h.canLogin(h.settings.appDbUser, APP_PASSWORD)).toBe(true);
      expect(await h.query("SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'")).toContain(
        nativePasswordHash(ROOT_PASSWORD),
      );
      figures.push(
        `host B: checksum ${after.split("\n")[0].split("\t")[1]} = host A's; 203 rows (3 imported once + 200 written); app user logs in with the same password`,
      );
    });
  });

  test("a volume holding a foreign file system (ext4, with files) is mounted as it is, never formatted", async () => {
    // Room for MariaDB's new data directory (its redo log alone takes 96 MiB).
    const device = loopDevice("foreign", 256, (image) => {
      const seed = join(work, "foreign-files");
      mkdirSync(seed);
      writeFileSync(join(seed, "notes.txt"), "kept by the owner\n");
      execFileSync("mkfs.ext4", ["-q", "-F", "-L", "foreign", "-d", seed, image]);
    });
    const uuid = blkid(device, "UUID");
    // Attached as on a Xen instance: only the device name, no NVMe serial.
    const { h, result } = await provision(device, { as: "sdf" });
    try {
      if (result.exitCode !== 0) console.error(result.output);
      expect(result.exitCode).toBe(0);
      expect(result.output).toContain("the data volume holds a ext4 file system: mounting it as it is");
      expect(blkid(device, "UUID")).toBe(uuid);
      expect(blkid(device, "LABEL")).toBe("foreign");
      const top = h.seenByDatabase(h.settings.dataMount);
      expect(readFileSync(join(top, "notes.txt"), "utf8")).toBe("kept by the owner\n");
      // The data directory is a directory of its own beside them (ext4's lost+found stays outside it).
      expect(execFileSync("ls", ["-A", top], { encoding: "utf8" }).split("\n").filter(Boolean).sort()).toEqual([
        "lost+found",
        "mysql",
        "notes.txt",
      ]);
      expect(readFileSync(h.host.fstabFile, "utf8")).toContain(
        `UUID=${uuid} ${h.settings.dataMount} ext4 defaults,nofail`,
      );
      expect(await h.query(`SELECT COUNT(*) FROM ${h.settings.databaseName}.customers`)).toBe("3");
    } finally {
      await h.stop();
    }
  });

  test("a volume holding a partition table and no file system is refused, untouched, and the database never starts", async () => {
    const device = loopDevice("partitioned", 64, (image) => {
      // An MBR with one Linux partition from sector 2048: blkid reports PTTYPE=dos and no TYPE.
      const mbr = Buffer.alloc(512);
      mbr.writeUInt8(0x83, 446 + 4);
      mbr.writeUInt32LE(2048, 446 + 8);
      mbr.writeUInt32LE(64 * 2048 - 2048, 446 + 12);
      mbr.writeUInt16LE(0xaa55, 510);
      const fd = openSync(image, "r+");
      writeSync(fd, mbr, 0, 512, 0);
      closeSync(fd);
    });
    const { h, result } = await provision(device);
    try {
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain(
        `the data volume ${device} holds a dos partition table and no file system; refusing to format it`,
      );
      expect(blkid(device, "PTTYPE")).toBe("dos");
      expect(blkid(device, "TYPE")).toBe("");
      expect(result.newCalls.filter((line) => /^(database-|systemctl (enable|start) .*mariadb)/.test(line))).toEqual(
        [],
      );
    } finally {
      await h.stop();
    }
  });

  test("no volume within the wait: the script stops, naming the volume, and never starts the database on the root disk", async () => {
    const { h, result } = await provision(undefined, { waitSeconds: 2 });
    try {
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain(`the data volume ${VOLUME_ID} did not appear within 2 s`);
      expect(result.durationMs).toBeGreaterThanOrEqual(2000);
      expect(result.newCalls.filter((line) => /^(database-|systemctl (enable|start) .*mariadb)/.test(line))).toEqual(
        [],
      );
    } finally {
      await h.stop();
    }
  });
});
