/**
 * The boot test (`npm run test:boot`): the stack's own user data, built by the Terraform engine
 * with test secrets, given to an instance that hashicorp/aws creates in moto's EC2 and read back from
 * there (user-data.ts), delivered byte for byte through cloud-init's NoCloud datasource to a Debian 12
 * VM (cloud kernel 6.1, systemd, XFS root) booted by qemu; only downloads are stand-ins (see
 * stand-ins.ts and scripts/boot/image/). Each check is printed as a figure at the end, then
 * `boot: N passed, N failed` (boot-run.ts).
 *
 * This file boots host A (the example settings: first boot, ops, everyday actions, reboot) and host B
 * (host A's data volume, parameter-store mode, the rotation); variants.boot.ts boots the settings'
 * variants (hosts C and D), beside it in `npm test`.
 */
import { createHash, randomBytes } from "crypto";
import { gunzipSync } from "zlib";
import { mkdirSync } from "fs";
import { join } from "path";
import { loadStackSettings } from "../../settings/stack-settings";
import { DATA_FILE_SYSTEM, NODE_VERSION, RESTART_SEC, SWAP_SIZE_BYTES } from "../../userdata/constants";
import { opsPaths } from "../../userdata/ops";
import { awsJson, motoEnvironment } from "../support/real-provider";
import { describeWithEngine } from "../support/terraform-engine";
import { findMotoServer } from "../support/moto-server";
import { DRILL_SERIAL, everydayScenarios } from "./everyday-scenarios";
import { OpsCommand, opsScenarios } from "./ops-scenarios";
import { ParameterStoreHost } from "./parameter-store-host";
import { bootLogGroup, telemetryRows } from "./telemetry-rows";
import { YARN_VERSION } from "./stand-ins";
import { modulesNamed } from "../support/harness/module-parameters";
import { bootModulePath, engineUserData, ReadBackUserData, readBackRow, userDataToolsMissing } from "./user-data";
import { withCaddyMirror } from "./caddy-mirror";
import {
  BootRun,
  bootSecrets,
  Figures,
  FIRST_BOOT_LIMIT_MS,
  REBOOT_LIMIT_MS,
  secretForms as formsOf,
  seconds,
  stepTimes,
} from "./boot-run";
import { BOOT_REGION, bootToolsMissing, createDisk, createOverlay, createSeedIso, DriveSpec, Vm } from "./vm";
import { HOST_FILES } from "../../settings/host-layout";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(40 * 60_000);

const STACK_SETTINGS = loadStackSettings(join(__dirname, "settings.json"));
const SETTINGS = STACK_SETTINGS.provisioning;
/** Host A's log group (its user data names it; moto holds it, as the stack makes it). */
const LOG_GROUP = bootLogGroup(STACK_SETTINGS.stackName, STACK_SETTINGS.instanceName);
const FIRST_HOSTNAME = "ec2-203-0-113-25.compute-1.amazonaws.com";
const NEW_HOSTNAME = "ec2-198-51-100-77.compute-1.amazonaws.com";
const ROWS = ["customer 1 Ada Lovelace", "customer 2 Grace Hopper", "customer 3 Linus Torvalds"];
/**
 * The data volume as the stack ships it: its id in the user data, and an NVMe disk whose serial is
 * that id without its dash, as EBS volumes appear on Nitro instances. (NVMe, not virtio: the kernel
 * names virtio disks in probe order, and a second virtio disk can take /dev/vda from the root disk.)
 */
const DATA_VOLUME_ID = "vol-0a1b2c3d4e5f60718";
/** Rows host A writes as the app user after the import; host B must serve them too. */
const HOST_A_ROWS = [
  [4, "Written on host A"],
  [5, `Kept across hosts ${randomBytes(4).toString("hex")}`],
] as const;
const SECRETS = bootSecrets();
const figures = new Figures();
const { figure } = figures;
const secretForms = () => formsOf(SECRETS);

describeWithEngine(
  "the stack's user data boots a Debian 12 VM for real: host A, then host B on its data volume",
  (engine) => {
    /** The machine side: image, moto, stand-ins, Caddy (boot-run.ts). */
    let run: BootRun | undefined;
    let vm: Vm | undefined;
    let hostB: Vm | undefined;
    let dataDisk: DriveSpec;
    let userData: Buffer;
    /** Host A's user data as EC2 (moto) keeps it: the instance's userData attribute, read back. */
    let readBack: ReadBackUserData;
    let firstHttpMs = 0;
    /** Host B boots in parameter-store mode: the migration by host replacement (parameter-store-host.ts). */
    let parameterStore: ParameterStoreHost;
    /** The local ops command against host A, once the ops scenarios have set it up. */
    let opsCommand: OpsCommand | undefined;

    /** The data volume as a host sees it: its device (by the serial), what is mounted where, its file system's UUID. */
    async function dataVolumeState(
      host: Vm,
    ): Promise<{ device: string; dbSource: string; dataSource: string; uuid: string }> {
      const [device, dbSource, dataSource, uuid] = (
        await host.sshOk(
          [
            `dev=$(readlink -f "$(ls /dev/disk/by-id/*_${dataDisk.serial} | head -1)")`,
            `echo "$dev"`,
            `findmnt -n -o SOURCE -M ${HOST_FILES.databaseDir} | head -1`,
            `findmnt -n -o SOURCE,FSTYPE -M ${SETTINGS.dataMount} | head -1`,
            `blkid -p -o value -s UUID "$dev"`,
          ].join("; "),
        )
      )
        .split("\n")
        .map((line) => line.trim().replace(/\s+/g, " "));
      return { device, dbSource: dbSource ?? "", dataSource: dataSource ?? "", uuid: uuid ?? "" };
    }

    /** SQL as the app user, with the password the app's own dotenv reads from .env (it never crosses ssh). */
    function appSql(host: Vm, sql: string) {
      const node = `${SETTINGS.loginHome}/.nvm/versions/node/v${NODE_VERSION}/bin/node`;
      const parse = "process.stdout.write(require('dotenv').parse(require('fs').readFileSync('.env')).DB_PASSWORD)";
      return host.ssh(
        `cd ${SETTINGS.appDir} && MYSQL_PWD="$(${node} -e "${parse}")" mariadb --batch --skip-column-names ` +
          `--user=${SETTINGS.appDbUser} ${SETTINGS.databaseName} -e "${sql}"`,
      );
    }

    /** The customers as the app user reads them: count, sha256 of the ordered rows, and MariaDB's CHECKSUM TABLE. */
    async function customers(host: Vm): Promise<{ count: number; sha256: string; checksum: string }> {
      const rows = await appSql(host, "SELECT id, name FROM customers ORDER BY id");
      const sum = await appSql(host, "CHECKSUM TABLE customers");
      if (rows.code !== 0 || sum.code !== 0)
        throw new Error(`in ${host.name}: reading customers as the app user failed: ${rows.stderr}${sum.stderr}`);
      return {
        count: rows.stdout.trim().split("\n").filter(Boolean).length,
        sha256: createHash("sha256").update(rows.stdout).digest("hex"),
        checksum: sum.stdout.trim().split(/\s+/).pop() ?? "",
      };
    }

    beforeAll(async () => {
      run = new BootRun();
      await run.prepare();
      const { work, image, caddy } = run;
      // The user data as AWS stores it: Terraform evaluates the construct's expression, hashicorp/aws gives it to
      // an instance in moto's EC2 (moto's server: EC2 for the user data, SSM, KMS, Secrets Manager, CloudWatch and
      // Logs for the hosts), and the AWS CLI reads it back (DescribeInstanceAttribute userData). Host A's and host
      // B's (parameter-store mode) side by side: one init and one apply each.
      const target = { engine, moto: run.moto! };
      [readBack, parameterStore] = await Promise.all([
        engineUserData(
          target,
          withCaddyMirror(SETTINGS, caddy),
          SECRETS,
          DATA_VOLUME_ID,
          undefined,
          LOG_GROUP,
          bootModulePath("host-a"),
        ),
        ParameterStoreHost.start(target, withCaddyMirror(SETTINGS, caddy), "CrmHostStack", DATA_VOLUME_ID),
      ]);
      userData = readBack.bytes;
      await awsJson(
        ["logs", "create-log-group", "--log-group-name", LOG_GROUP],
        motoEnvironment(run.moto!.endpoint, BOOT_REGION),
      );
      const standIns = await run.startStandIns(SETTINGS.repoUrl, SECRETS.source_host_token);

      const hostA = join(work, "host-a");
      mkdirSync(hostA);
      const root = await createOverlay(image, join(hostA, "root.qcow2"));
      // Blank, as a new EBS volume: the first boot must format it. Outside host A's directory: host B gets it.
      dataDisk = {
        file: await createDisk(join(work, "data-volume.raw"), "1G"),
        serial: DATA_VOLUME_ID.replace("-", ""),
        bus: "nvme",
      };
      const seed = await createSeedIso(
        join(hostA, "seed.iso"),
        userData,
        `instance-id: i-${randomBytes(8).toString("hex").slice(0, 17)}\nlocal-hostname: ip-172-31-20-5\n`,
      );
      // A second NVMe disk, blank: the restore drill's scratch volume (everyday-scenarios.ts).
      const drillDisk: DriveSpec = {
        file: await createDisk(join(hostA, "drill-volume.raw"), "1G"),
        serial: DRILL_SERIAL,
        bus: "nvme",
      };
      vm = await Vm.boot({
        image,
        accel: run.accel,
        rootDisk: root,
        seedIso: seed,
        workDir: hostA,
        name: "host-a",
        guestPorts: [80, 3000],
        standInPort: standIns.port,
        removeOnAbort: work,
        drives: [dataDisk, drillDisk],
      });
      await vm.waitForHttp(3000, FIRST_BOOT_LIMIT_MS);
      firstHttpMs = Date.now() - vm.startedAt;
      await vm.waitForSsh(120_000);
      await vm.ssh("timeout 300 cloud-init status --wait", { timeoutMs: 320_000 });
    });

    afterAll(async () => {
      try {
        await vm?.kill();
        await hostB?.kill();
        await parameterStore?.stop();
        await run?.stop();
      } finally {
        figures.print();
      }
    }, TEARDOWN_MS);

    it("boots: image, accelerator, user data read back from EC2, first HTTP 200", () => {
      const { image, accelNote } = run!;
      figure(
        "image",
        `${image.fsType} root, ${image.buildSeconds ? `built in ${image.buildSeconds.toFixed(0)} s` : "cached"}`,
        true,
      );
      figure("accelerator", accelNote, true);
      figure(
        "user data",
        `${userData.length} bytes from EC2 (terraform apply), sha256 ${createHash("sha256").update(userData).digest("hex").slice(0, 12)}`,
        userData.subarray(0, 12).toString() === "#!/bin/bash\n" || userData[0] === 0x1f,
      );
      figure(...readBackRow("", readBack));
      figure("first boot to first HTTP 200 (port 3000)", seconds(firstHttpMs), firstHttpMs < FIRST_BOOT_LIMIT_MS);
    });

    it("cloud-init received the user data unmodified and finished without errors", async () => {
      const stored = await vm!.sshOk("sha256sum </var/lib/cloud/instance/user-data.txt | cut -d' ' -f1");
      figure(
        "user data in the guest = engine's bytes",
        stored.trim().slice(0, 12),
        stored.trim() === createHash("sha256").update(userData).digest("hex"),
      );
      const status = await vm!.ssh("cloud-init status --long");
      const result = JSON.parse(await vm!.sshOk("cat /run/cloud-init/result.json")) as { v1: { errors: string[] } };
      const done = /status: done/.test(status.stdout);
      figure(
        "cloud-init status",
        `${done ? "done" : status.stdout.trim().split("\n")[0]}, ${result.v1.errors.length} errors`,
        done && result.v1.errors.length === 0 && status.code === 0,
      );
      const log = await vm!.sshOk(`cat ${SETTINGS.logFile}`);
      const doneSteps = (log.match(/ DONE step_\d\d_/g) ?? []).length;
      figure(
        "provisioning steps done",
        `${doneSteps} of 15, ${/provisioning \S+: done/.test(log) ? "script done" : "script NOT done"}`,
        doneSteps === 15 && /provisioning \S+: done/.test(log),
      );
      figure("provisioning's time (its log)", stepTimes(log), true);
      // Each reload runs every unit and generator again (3 to 10 core-seconds under emulation): the script makes two,
      // for the data volume's file system table and unit drop-in, and step 15's (the original stack's); the units it
      // starts are read from their files, and enabled without one (load_units, enable_unit). Debian's MariaDB also has
      // a SysV script, which `systemctl enable` hands to update-rc.d, which reloads twice (AL2023 has none): 4 here.
      const reloads = Number((await vm!.sshOk("journalctl -b _PID=1 -o cat | grep -cx 'Reloading.' || true")).trim());
      figure("systemd reloads in the first boot", String(reloads), reloads <= 4);
      // The modules its user data names, read from moto's Parameter Store by the real AWS CLI, kept by their sha256.
      const named = modulesNamed(gunzipSync(userData).toString("utf8"));
      const kept = (await vm!.sshOk(`cd ${HOST_FILES.moduleDirectory} && sha256sum *.sh`))
        .trim()
        .split("\n")
        .map((line) => line.split(/\s+/))
        .map(([sum, file]) => `${sum}:${file}`)
        .sort();
      figure(
        "first boot's modules: from Parameter Store (moto), kept by sha256",
        `${named.length} named (${named.map((m) => m.name.split("/").pop()).join(", ")}), ` + `${kept.length} kept`,
        named.length >= 3 &&
          kept.join(" ") ===
            named
              .map((m) => `${m.sha256}:${m.sha256}.sh`)
              .sort()
              .join(" "),
      );
      const dnf = await vm!.sshOk("cat /var/log/dnf-shim.log");
      figure(
        "dnf stand-in calls",
        dnf
          .trim()
          .split("\n")
          .map((l) => l.replace(/^\S+ /, ""))
          .join("; "),
        /dnf -y upgrade/.test(dnf) &&
          /groupinstall Development Tools/.test(dnf) &&
          /install nftables git mariadb105-server gcc-c\+\+ make/.test(dnf),
      );
    });

    it("keeps the database on the data volume, which it formatted because it was blank", async () => {
      const state = await dataVolumeState(vm!);
      figure(
        "data volume device",
        `${DATA_VOLUME_ID} is ${state.device} (NVMe, serial ${dataDisk.serial})`,
        /^\/dev\/nvme\d+n1$/.test(state.device),
      );
      figure(
        "database directory on the data volume",
        `${HOST_FILES.databaseDir} from ${state.dbSource}, ${SETTINGS.dataMount} from ${state.dataSource}`,
        state.dbSource === `${state.device}[/mysql]` && state.dataSource.startsWith(`${state.device} `),
      );
      const log = await vm!.sshOk(`grep -F 'data volume' ${SETTINGS.logFile} | cut -d' ' -f2-`);
      const formatted = log.includes("the data volume holds no file system: creating");
      figure(
        "blank data disk formatted at first boot",
        formatted ? `yes, UUID ${state.uuid}` : log.trim().replace(/\n/g, "; "),
        formatted && state.uuid !== "",
      );
    });

    it("serves the imported rows on ports 3000 and 80 from outside the VM", async () => {
      for (const port of [3000, 80]) {
        const answer = await vm!.httpGet(port);
        const rows = ROWS.filter((row) => answer?.body.includes(row)).length;
        figure(
          `HTTP on port ${port}`,
          answer ? `${answer.status}, ${rows} of ${ROWS.length} rows` : "no answer",
          answer?.status === 200 && rows === ROWS.length,
        );
      }
    });

    it("runs the real Node.js, yarn and dotenv, installed as the unit installs them", async () => {
      const bin = `${SETTINGS.loginHome}/.nvm/versions/node/v${NODE_VERSION}/bin`;
      const versions = await vm!.sshOk(`${bin}/node --version; PATH=${bin}:$PATH ${bin}/yarn --version`);
      figure(
        "node, yarn",
        versions.trim().replace("\n", ", "),
        versions.trim() === `v${NODE_VERSION}\n${YARN_VERSION}`,
      );
      const journal = await vm!.sshOk(`journalctl -b -u ${SETTINGS.appName}.service --no-pager -o cat`);
      const upToDate = /Already up-to-date/.test(journal);
      figure(
        "unit's first yarn install",
        upToDate ? "already up-to-date (same install as step 14)" : "changed node_modules",
        upToDate,
      );
    });

    it("has 2 GiB of swap and a private .env with the right values", async () => {
      // swapon counts the usable size (the file less its one-page header); the file is the 2 GiB.
      const [active, file] = (await vm!.sshOk(`swapon --show=NAME --noheadings; stat -c '%s %a' ${SETTINGS.swapFile}`))
        .trim()
        .split("\n");
      figure(
        "swap",
        `${active?.trim() || "off"}, ${file}`,
        active?.trim() === SETTINGS.swapFile && file === `${SWAP_SIZE_BYTES} 600`,
      );
      const fstab = await vm!.sshOk(`grep -c '^${SETTINGS.swapFile} ' /etc/fstab || true`);
      figure("swap lines in /etc/fstab", fstab.trim(), fstab.trim() === "1");
      const env = `${SETTINGS.appDir}/.env`;
      const meta = await vm!.sshOk(`stat -c '%a %U' ${env}`);
      // The password as the app's own dotenv reads it, compared by hash in the guest: it never crosses ssh.
      const node = `${SETTINGS.loginHome}/.nvm/versions/node/v${NODE_VERSION}/bin/node`;
      const parse = "process.stdout.write(require('dotenv').parse(require('fs').readFileSync('.env')).DB_PASSWORD)";
      const values = await vm!.sshOk(
        `cd ${SETTINGS.appDir} && grep -v '^DB_PASSWORD=' .env; printf 'DB_PASSWORD sha256 '; ` +
          `${node} -e "${parse}" | sha256sum | cut -d' ' -f1`,
      );
      const want = [
        `DB_USER=${SETTINGS.appDbUser}`,
        `DB_NAME=${SETTINGS.databaseName}`,
        `FRONTENDURI=http://${FIRST_HOSTNAME}`,
        `BACKENDURI=http://${FIRST_HOSTNAME}:3000`,
        "SESSION_SECRET=keep-me",
        "PORT=3000",
        `DB_PASSWORD sha256 ${createHash("sha256").update(SECRETS.app_db_password).digest("hex")}`,
      ];
      const missing = want.filter((line) => !values.split("\n").includes(line));
      figure(
        ".env",
        `mode ${meta.trim()}, ${want.length - missing.length} of ${want.length} expected lines${missing.length ? ` (missing ${missing.join(", ").replace(/sha256 \S+/, "sha256 …")})` : ""}`,
        meta.trim() === `600 ${SETTINGS.loginUser}` && missing.length === 0,
      );
    });

    it("keeps the metadata service to root and EC2 Instance Connect's user", async () => {
      const probe = (user: string) =>
        vm!.ssh(
          `runuser -u ${user} -- curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 21600' http://169.254.169.254/latest/api/token`,
        );
      const [root, connect, app] = await Promise.all([
        probe("root"),
        probe("ec2-instance-connect"),
        probe(SETTINGS.loginUser),
      ]);
      figure("metadata from root", `HTTP ${root.stdout.trim()}`, root.stdout.trim() === "200");
      figure("metadata from ec2-instance-connect", `HTTP ${connect.stdout.trim()}`, connect.stdout.trim() === "200");
      figure(
        `metadata from ${SETTINGS.loginUser}`,
        app.code === 0 ? `HTTP ${app.stdout.trim()}` : `refused (curl exit ${app.code})`,
        app.code !== 0 && app.stdout.trim() !== "200",
      );
    });

    it("restarts the app RestartSec after kill -9", async () => {
      const unit = `${SETTINGS.appName}.service`;
      const pid = (await vm!.sshOk(`systemctl show -p MainPID --value ${unit}`)).trim();
      const killedAt = Date.now();
      await vm!.sshOk(`kill -9 ${pid}`);
      // Wait for the port to go quiet, then for it to answer again.
      await vm!.waitFor(
        "the app to stop answering",
        async () => ((await vm!.httpGet(3000, "/", 2000))?.status === 200 ? undefined : true),
        30_000,
        200,
      );
      await vm!.waitForHttp(3000, 120_000);
      const back = Date.now() - killedAt;
      figure(
        "kill -9 to HTTP 200 again",
        `${seconds(back)} (RestartSec ${RESTART_SEC} s)`,
        back >= RESTART_SEC * 1000 && back < 90_000,
      );
    });

    it("publishes its health, disk and memory metrics and ships its logs to CloudWatch (moto); a stopped app reports unhealthy", () =>
      telemetryRows({
        vm: vm!,
        moto: parameterStore.moto,
        settings: SETTINGS,
        logGroup: LOG_GROUP,
        signatures: run!.standIns!.aws!,
        figure,
      }));

    it("ships, rolls back, patches and repairs the running host with the ops command (npm run ops)", async () => {
      opsCommand = await opsScenarios({ vm: vm!, work: run!.work, figure, secretForms });
    });

    it("reads the logs, restarts, dumps, backs up and drills a restore with the everyday ops actions", async () => {
      if (!opsCommand) throw new Error("the ops scenarios did not get as far as the everyday ones");
      await everydayScenarios({ vm: vm!, opsCommand, dataSerial: dataDisk.serial!, figure });
    });

    it("comes back after a reboot without running the user data again, with the new public hostname", async () => {
      await vm!.sshOk(`echo ${NEW_HOSTNAME} >/etc/imds-standin/public-hostname`);
      const rebootAt = Date.now();
      await vm!.reboot(REBOOT_LIMIT_MS);
      const body = await vm!.waitForHttp(80, REBOOT_LIMIT_MS);
      figure("reboot to HTTP 200 on port 80", seconds(Date.now() - rebootAt), true);
      const state = await vm!.sshOk(
        [
          `systemctl is-active mariadb.service ${SETTINGS.appName}.service nftables.service | tr '\\n' ' '`,
          "echo",
          `swapon --show=NAME --noheadings | tr '\\n' ' '`,
          "echo",
          `grep -c 'provisioning .*: start' ${SETTINGS.logFile}`,
          `grep -c ' reprovision: ' ${opsPaths(SETTINGS).auditLog} || true`,
        ].join("; "),
      );
      const [active, swaps, starts, reprovisions] = state.split("\n");
      figure("after reboot: mariadb, app, nftables", active.trim(), active.trim() === "active active active");
      figure("after reboot: swap", swaps.trim() || "off", swaps.includes(SETTINGS.swapFile));
      figure(
        "user data runs",
        `${starts.trim()} time(s), ${reprovisions.trim()} by reprovision`,
        Number(starts) === 1 + Number(reprovisions),
      );
      const volume = await dataVolumeState(vm!);
      figure(
        "after reboot: database directory",
        `${HOST_FILES.databaseDir} from ${volume.dbSource}`,
        volume.dbSource === `${volume.device}[/mysql]`,
      );
      const rows = ROWS.filter((row) => body.includes(row)).length;
      figure("after reboot: rows on port 80", `${rows} of ${ROWS.length}`, rows === ROWS.length);
      const env = await vm!.sshOk(`grep -E '^(FRONTENDURI|BACKENDURI|SESSION_SECRET)=' ${SETTINGS.appDir}/.env`);
      const follows =
        env.includes(`FRONTENDURI=http://${NEW_HOSTNAME}\n`) &&
        env.includes(`BACKENDURI=http://${NEW_HOSTNAME}:3000\n`) &&
        env.includes("SESSION_SECRET=keep-me");
      figure(
        "URIs follow the new public hostname",
        follows ? `${NEW_HOSTNAME} in .env and in the app` : env.trim().replace(/\n/g, "; "),
        follows && body.includes(`FRONTENDURI http://${NEW_HOSTNAME}`),
      );
      const order = await vm!.sshOk(
        `systemctl show -p ActiveEnterTimestampMonotonic --value mariadb.service ${SETTINGS.appName}.service`,
      );
      const [db, appStart] = order
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map(Number);
      figure("app started after MariaDB", `${((appStart - db) / 1e6).toFixed(1)} s later`, appStart > db);
    });

    it("leaks no secret to the console, the journal, cloud-init's logs or the provisioning log", async () => {
      const sources: Record<string, string> = {
        console: vm!.consoleText(),
        journal: (await vm!.ssh("journalctl --no-pager -o cat", { timeoutMs: 180_000 })).stdout,
        "cloud-init.log": (await vm!.ssh("cat /var/log/cloud-init.log")).stdout,
        "cloud-init-output.log": (await vm!.ssh("cat /var/log/cloud-init-output.log")).stdout,
        "provisioning log": (await vm!.ssh(`cat ${SETTINGS.logFile}`)).stdout,
      };
      const forms = secretForms();
      const leaks = Object.entries(sources)
        .filter(([, text]) => forms.some((form) => text.includes(form)))
        .map(([name]) => name);
      const sizes = Object.entries(sources)
        .map(([name, text]) => `${name} ${Math.round(text.length / 1024)} KiB`)
        .join(", ");
      figure(
        "secrets in logs",
        leaks.length ? `found in ${leaks.join(", ")}` : `none (${sizes})`,
        leaks.length === 0 && sources.journal.length > 0,
      );
    });

    it("host B, a new host on host A's data volume, keeps its rows, imports nothing twice and serves them", async () => {
      // Host A's last act: the app user writes rows, and a file not the script's sits at the volume's top.
      const inserted = await appSql(
        vm!,
        `INSERT INTO customers VALUES ${HOST_A_ROWS.map(([id, name]) => `(${id}, '${name}')`).join(", ")}`,
      );
      if (inserted.code !== 0) throw new Error(`host A: INSERT as the app user failed: ${inserted.stderr}`);
      const foreign = `foreign ${randomBytes(8).toString("hex")}`;
      await vm!.sshOk(`echo '${foreign}' >${SETTINGS.dataMount}/foreign.txt && sync`);
      const before = await customers(vm!);
      const volumeA = await dataVolumeState(vm!);
      figure(
        "host A's rows before it goes",
        `${before.count}, sha256 ${before.sha256.slice(0, 12)}, CHECKSUM TABLE ${before.checksum}`,
        before.count === ROWS.length + HOST_A_ROWS.length,
      );
      // Destroyed as EC2 terminates an instance: an ACPI shutdown, then it is gone for good.
      await vm!.shutdown(120_000);

      const { work, image, accel, standIns } = run!;
      const dir = join(work, "host-b");
      mkdirSync(dir);
      const instanceId = `i-${randomBytes(9).toString("hex").slice(0, 17)}`;
      const root = await createOverlay(image, join(dir, "root.qcow2"));
      figure(...readBackRow("host B: ", parameterStore.readBack));
      const seed = await createSeedIso(
        join(dir, "seed.iso"),
        parameterStore.userData,
        `instance-id: ${instanceId}\nlocal-hostname: ip-172-31-20-6\n`,
      );
      await parameterStore.putAllButAppPassword(SECRETS);
      hostB = await Vm.boot({
        image,
        accel,
        rootDisk: root,
        seedIso: seed,
        workDir: dir,
        name: "host-b",
        guestPorts: [80, 3000],
        standInPort: standIns!.port,
        removeOnAbort: work,
        drives: [dataDisk],
      });
      await parameterStore.stopsThenRepairs(hostB, SECRETS, figure, FIRST_BOOT_LIMIT_MS);
      await hostB.waitForHttp(3000, FIRST_BOOT_LIMIT_MS);
      const httpMs = Date.now() - hostB.startedAt;
      await hostB.waitForSsh(120_000);
      await hostB.ssh("timeout 300 cloud-init status --wait", { timeoutMs: 320_000 });
      figure("host B: new root disk, new instance id, first HTTP 200", seconds(httpMs), httpMs < FIRST_BOOT_LIMIT_MS);

      const seen = await hostB.sshOk(
        "cat /var/lib/cloud/data/instance-id; sha256sum </var/lib/cloud/instance/user-data.txt | cut -d' ' -f1",
      );
      const [seenId, seenData] = seen.trim().split("\n");
      const status = await hostB.ssh("cloud-init status --long");
      const result = JSON.parse(await hostB.sshOk("cat /run/cloud-init/result.json")) as { v1: { errors: string[] } };
      const log = await hostB.sshOk(`cat ${SETTINGS.logFile}`);
      const steps = (log.match(/ DONE step_\d\d_/g) ?? []).length;
      // cloud-init keeps the first run's failure (the missing parameter); the repaired run did the 15 steps.
      const done =
        /status: error/.test(status.stdout) &&
        result.v1.errors.length > 0 &&
        result.v1.errors.every((error) => /scripts.user/i.test(error));
      const hostBData = createHash("sha256").update(parameterStore.userData).digest("hex");
      figure(
        "host B: cloud-init",
        `instance ${seenId}, the parameter-store user data: ${seenData === hostBData}, ` +
          `${done ? "first run failed" : "NOT as expected"}, ${result.v1.errors.length} errors, ${steps} of 15 steps`,
        seenId === instanceId && seenData === hostBData && done && steps === 15,
      );

      const volumeB = await dataVolumeState(hostB);
      const kept = log.includes(`the data volume holds a ${DATA_FILE_SYSTEM} file system: mounting it as it is`);
      figure(
        "host B: data volume mounted, not formatted",
        `${kept ? "mounted as it is" : "NOT as it is"}, UUID ${volumeB.uuid === volumeA.uuid ? "unchanged" : `${volumeA.uuid} -> ${volumeB.uuid}`}, ` +
          `${HOST_FILES.databaseDir} from ${volumeB.dbSource}`,
        kept && volumeB.uuid === volumeA.uuid && volumeB.dbSource === `${volumeB.device}[/mysql]`,
      );
      const foreignB = (await hostB.sshOk(`cat ${SETTINGS.dataMount}/foreign.txt`)).trim();
      figure(
        "host B: a foreign file at the volume's top",
        foreignB === foreign ? "kept" : `"${foreignB}"`,
        foreignB === foreign,
      );

      const login = await appSql(hostB, "SELECT CURRENT_USER()");
      const changed = /was not app_db_password/.test(log);
      figure(
        "host B: app user logs in with the same password",
        login.code === 0
          ? `${login.stdout.trim()}${changed ? ", but step 6 changed it" : ", unchanged by step 6"}`
          : `refused: ${login.stderr.trim()}`,
        login.code === 0 && !changed,
      );
      const after = await customers(hostB);
      figure(
        "host B: rows identical to host A's",
        `${after.count}, sha256 ${after.sha256.slice(0, 12)}, CHECKSUM TABLE ${after.checksum}`,
        after.sha256 === before.sha256 && after.checksum === before.checksum,
      );
      const comment = (
        await appSql(
          hostB,
          `SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '${SETTINGS.databaseName}'`,
        )
      ).stdout.trim();
      const skipped = /was imported before; not importing it again/.test(log);
      figure(
        "host B: export.sql not imported again",
        `${skipped ? "skipped" : "NOT skipped"} (database comment "${comment}"), ${after.count} rows`,
        skipped && comment === "crm-provisioning: export.sql imported" && after.count === before.count,
      );

      const want = [...ROWS, ...HOST_A_ROWS.map(([id, name]) => `customer ${id} ${name}`)];
      for (const port of [3000, 80]) {
        const answer = await hostB.httpGet(port);
        const rows = want.filter((row) => answer?.body.includes(row)).length;
        figure(
          `host B: HTTP on port ${port}`,
          answer ? `${answer.status}, ${rows} of ${want.length} rows` : "no answer",
          answer?.status === 200 && rows === want.length,
        );
      }
    });

    it("host B: rotates the secrets on the running host, then an interrupted rotation run again; no secret, old or new, anywhere", async () => {
      const standIns = run!.standIns!;
      await parameterStore.rotates(
        hostB!,
        standIns,
        figure,
        appSql,
        join(__dirname, "settings.json"),
        loadStackSettings(join(__dirname, "settings.json")).stackName,
      );
      await parameterStore.rotationInterruptedThenRerun(
        hostB!,
        standIns,
        figure,
        appSql,
        join(__dirname, "settings.json"),
        loadStackSettings(join(__dirname, "settings.json")).stackName,
      );
      await parameterStore.leaksNothing(hostB!, figure);
    });
  },
  [
    ...bootToolsMissing(),
    ...(findMotoServer() ? [] : ["moto_server (scripts/ci/install-tools.sh moto)"]),
    ...userDataToolsMissing(),
  ],
);
