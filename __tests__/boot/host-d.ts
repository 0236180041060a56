/**
 * Host D of the boot test: a host of the scale-out topology (`"topology": "scale-out"`, docs/scale-out.md),
 * booted once from its own user data (a fresh root disk, no data volume):
 *
 * - the database is a MariaDB server on the test machine (support/database-server.ts: root only through
 *   its socket, a master user `admin` with RDS's privileges), which the guest reaches over TCP at
 *   DB_ADDRESS:3306, forwarded by qemu to its loopback port, as a host reaches RDS's endpoint;
 * - the master user's credentials are in a Secrets Manager secret as RDS keeps them (moto), which the
 *   guest never reads: the host waits at step 4 until the operator's `npm run ops -- <stack> db-setup`
 *   (this machine, the SDK reading moto, ssh to the guest as ec2-user) hands it to the host's db-setup;
 *   the app's password and the token are in Parameter Store, which the guest reads with the real AWS CLI
 *   and the role's credentials from the metadata stand-in.
 *
 * Checked: the first boot to the first HTTP 200 (plus the load balancer's two health checks: the figure that
 * INSTANCE_WARMUP_SECONDS, and with it HEALTH_CHECK_GRACE_SECONDS, is set from), db-setup, the import and the app user on the remote server, .env
 * with DB_HOST and DB_PORT and the load balancer's name, the app serving rows that only the remote server
 * holds, no database server of the host's own in use, and no secret in the logs.
 */
import { CreateSecretCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { randomBytes } from "crypto";
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";
import { gunzipSync } from "zlib";
import { TARGET_HEALTH_CHECK } from "../../constructs/application-load-balancer";
import { HEALTH_CHECK_GRACE_SECONDS, INSTANCE_WARMUP_SECONDS } from "../../constructs/host-group";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { parseStackSettings } from "../../settings/stack-settings";
import { DATABASE_MASTER_USER } from "../../settings/provisioning-settings";
import { DatabaseServer, sqlString } from "../support/database-server";
import { MotoServer } from "../support/moto-server";
import { isolatedMotoEnvironment } from "../support/real-provider";
import { operatorCommand } from "./ops-scenarios";
import { StandInServer } from "./stand-ins";
import { modulesNamed } from "../support/harness/module-parameters";
import { stepTimes } from "./boot-run";
import { appliedUserData, bootModulePath, readBackRow } from "./user-data";
import { Accelerator, BOOT_REGION, BootImage, createOverlay, createSeedIso, Vm } from "./vm";

/** What host D needs from the boot test that runs it. */
export interface HostDContext {
  readonly engine: string;
  readonly image: BootImage;
  readonly accel: Accelerator;
  readonly standIns: StandInServer;
  /** moto's server, which the stand-in server passes the AWS endpoints on to. */
  readonly moto: MotoServer;
  /** The boot test's private directory: host D's files go to `<work>/host-d`. */
  readonly work: string;
  /** The boot test's settings file; host D turns it into the scale-out topology's. */
  readonly settingsFile: string;
  /** Records a figure of the boot test; throws when it is not ok. */
  readonly figure: (name: string, value: string, ok: boolean) => void;
}

const STACK = "CrmHost-scale";
/** The database's address in the guest (RDS's endpoint stands there): qemu forwards it to the server's loopback port. */
const DB_ADDRESS = "10.0.2.101";
const DB_PORT = 3306;
const LOAD_BALANCER = "crm-hosts-1234567890.us-east-1.elb.amazonaws.com";
const FIRST_BOOT_LIMIT_MS = 15 * 60_000;
const ROWS = ["customer 1 Ada Lovelace", "customer 2 Grace Hopper", "customer 3 Linus Torvalds"];

export async function hostD(ctx: HostDContext): Promise<void> {
  const { figure, standIns } = ctx;
  const dir = join(ctx.work, "host-d");
  mkdirSync(dir);
  const suffix = randomBytes(5).toString("hex");
  const master = { username: DATABASE_MASTER_USER, password: `Master '"$(id) \`x\` %{y} ${suffix}M` };
  const appPassword = `App D pass'; -- \\ & ${suffix}`;
  const token = standIns.token;

  // The operator's settings file too (npm run ops reads it).
  const settingsFile = join(dir, "settings.json");
  const raw = {
    ...JSON.parse(readFileSync(ctx.settingsFile, "utf8")),
    stackName: STACK,
    topology: "scale-out",
    secrets: "parameter-store",
  };
  writeFileSync(settingsFile, JSON.stringify(raw, null, 2));
  const settings = parseStackSettings(raw).provisioning;
  // The app's password and the token: the master password is RDS's.
  const { appDbPassword, sourceHostToken } = secretParameterNames(STACK);
  const names = { region: BOOT_REGION, appDbPassword, sourceHostToken };
  const credentials = { accessKeyId: "boot-test", secretAccessKey: "boot-test" };
  const secretsManager = new SecretsManagerClient({ region: BOOT_REGION, endpoint: ctx.moto.endpoint, credentials });
  const ssm = new SSMClient({ region: BOOT_REGION, endpoint: ctx.moto.endpoint, credentials });
  const db = await DatabaseServer.start({ masterUser: master.username, masterPassword: master.password });
  let vm: Vm | undefined;
  try {
    // As RDS names the secret it manages (rds!db-<resource id>) and writes it.
    const masterSecretArn = (
      await secretsManager.send(
        new CreateSecretCommand({
          Name: `rds!db-${randomBytes(8).toString("hex")}`,
          SecretString: JSON.stringify(master),
        }),
      )
    ).ARN!;
    for (const [name, value] of [
      [names.appDbPassword, appPassword],
      [names.sourceHostToken, token],
    ]) {
      await ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));
    }
    const readBack = await appliedUserData(
      { engine: ctx.engine, moto: ctx.moto },
      (scope) =>
        new ProvisioningUserData(scope, "user_data", {
          settings,
          secrets: names,
          modulePath: bootModulePath("host-d"),
          scaleOut: {
            databaseHost: DB_ADDRESS,
            databasePort: String(DB_PORT),
            loadBalancerName: LOAD_BALANCER,
            releaseRef: "",
          },
        }),
    );
    const userData = readBack.bytes;
    figure(...readBackRow("host D: ", readBack));
    const script = gunzipSync(userData).toString("utf8");
    // Its modules in moto's Parameter Store (HostModules), which its first boot reads: the scale-out one among them.
    const named = modulesNamed(script).map((m) => m.name.split("/").pop());
    figure(
      "host D: scale-out user data",
      `${userData.length} bytes, modules ${named.join(", ")} named in it`,
      named.includes("remote-database") &&
        !named.includes("local-database") &&
        script.includes(`readonly DB_HOST='${DB_ADDRESS}'`),
    );

    const root = await createOverlay(ctx.image, join(dir, "root.qcow2"));
    const seed = await createSeedIso(
      join(dir, "seed.iso"),
      userData,
      `instance-id: i-${randomBytes(9).toString("hex").slice(0, 17)}\nlocal-hostname: ip-172-31-30-9\n`,
    );
    vm = await Vm.boot({
      image: ctx.image,
      accel: ctx.accel,
      rootDisk: root,
      seedIso: seed,
      workDir: dir,
      name: "host-d",
      guestPorts: [3000],
      standInPort: standIns.port,
      removeOnAbort: ctx.work,
      guestForwards: [{ guest: `${DB_ADDRESS}:${DB_PORT}`, hostPort: db.port }],
    });
    const host = vm;
    // The operator, once the host is up: db-setup with RDS's secret, read on this machine (moto), over ssh.
    await host.waitForSsh(FIRST_BOOT_LIMIT_MS);
    // As an operator meets it: the host waits at step 4 for db-setup, holding the ops lock (npm run ops installs its tool beside it).
    await host.sshOk(
      `timeout 600 bash -c 'until grep -qF "takes app_db_password yet: waiting" ${settings.logFile} 2>/dev/null; do sleep 2; done'`,
      { timeoutMs: 620_000 },
    );
    const operator = await operatorCommand(host, dir, settingsFile, figure, "host D");
    const aws = isolatedMotoEnvironment(ctx.moto.endpoint, BOOT_REGION);
    const setup = await operator.run(["db-setup", "--master-secret", masterSecretArn], aws);
    const setupOut = `${setup.stdout}\n${setup.stderr}`;
    figure(
      "host D: npm run ops -- <stack> db-setup (the master secret read here, sent on ssh's stdin)",
      `exit ${setup.code}, ` +
        `${setupOut.split("\n").find((line) => line.includes("db-setup: the database")) ?? setupOut.trim().split("\n").pop()}`,
      setup.code === 0 &&
        setupOut.includes(
          `db-setup: the database ${settings.databaseName} and its account ${settings.appDbUser}@% for app_db_password are in place`,
        ),
    );
    await host.waitForHttp(3000, FIRST_BOOT_LIMIT_MS);
    const firstHttp = (Date.now() - host.startedAt) / 1000;
    // Healthy to the load balancer after healthyThreshold answers, interval seconds apart.
    const healthy = firstHttp + TARGET_HEALTH_CHECK.healthyThreshold * TARGET_HEALTH_CHECK.interval;
    figure(
      "host D: first boot to first HTTP 200 (3000), and to healthy in the target group",
      `${firstHttp.toFixed(1)} s, ~${healthy.toFixed(0)} s ` +
        `(instance warmup ${INSTANCE_WARMUP_SECONDS} s, health-check grace ${HEALTH_CHECK_GRACE_SECONDS} s)`,
      healthy < HEALTH_CHECK_GRACE_SECONDS,
    );
    await host.ssh("timeout 300 cloud-init status --wait", { timeoutMs: 320_000 });

    const log = await host.sshOk(`cat ${settings.logFile}`);
    const steps = (log.match(/ DONE step_\d\d_/g) ?? []).length;
    const asApp = log.includes(`the app's account ${settings.appDbUser} logs in to ${DB_ADDRESS}`);
    const guestRead = standIns.requests.some(
      (request) => request.host === `secretsmanager.${BOOT_REGION}.amazonaws.com`,
    );
    figure(
      "host D: provisioning against the remote database, as the app's account",
      `${steps} of 15 steps, ` +
        `${asApp ? "as the app's account" : "NOT as the app's account"}, master secret ${guestRead ? "READ by the guest" : "never read by the guest"}`,
      steps === 15 && asApp && !guestRead && /provisioning \S+: done/.test(log),
    );
    figure("host D: provisioning's time (its log)", stepTimes(log), true);
    const dnf = await host.sshOk("cat /var/log/dnf-shim.log");
    // The image's own server (Debian's mariadb-server, as the other hosts need it) holds no database of the app.
    const local = (
      await host.ssh(
        `mariadb --batch --skip-column-names -e "SHOW DATABASES LIKE '${settings.databaseName}'" 2>&1 || true`,
      )
    ).stdout.trim();
    figure(
      "host D: the client package only (mariadb105), no local database",
      `${dnf
        .split("\n")
        .filter((l) => / install /.test(l))
        .map((l) => l.replace(/^\S+ /, ""))
        .join("; ")}; ` + `local server: ${local || "no such database"}`,
      / install nftables git mariadb105 gcc-c\+\+ make$/m.test(dnf) &&
        !/mariadb105-server/.test(dnf) &&
        !local.split("\n").includes(settings.databaseName),
    );

    const imported = await db.query(
      `SELECT COUNT(*) FROM \`${settings.databaseName}\`.customers; ` +
        `SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ${sqlString(settings.databaseName)}; ` +
        `SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User = ${sqlString(settings.appDbUser)}`,
    );
    figure(
      "host D: export.sql imported into the remote database, the app user created there",
      imported.replace(/\n/g, ", "),
      imported === `3\ncrm-provisioning: export.sql imported\n${settings.appDbUser}@%`,
    );

    const env = await host.sshOk(
      `grep -E '^(DB_HOST|DB_PORT|DB_USER|DB_NAME|FRONTENDURI|BACKENDURI)=' ${settings.appDir}/.env`,
    );
    const want = [
      `DB_USER=${settings.appDbUser}`,
      `DB_NAME=${settings.databaseName}`,
      `DB_HOST=${DB_ADDRESS}`,
      `DB_PORT=${DB_PORT}`,
      `FRONTENDURI=http://${LOAD_BALANCER}`,
      `BACKENDURI=http://${LOAD_BALANCER}:3000`,
    ];
    figure(
      "host D: .env names the database (DB_HOST, DB_PORT) and the load balancer",
      env.trim().replace(/\n/g, ", "),
      want.every((line) => env.split("\n").includes(line)),
    );

    // A row that only the remote server holds: the app must read it there.
    const marker = `Only in the RDS stand-in ${suffix}`;
    await db.query(`INSERT INTO \`${settings.databaseName}\`.customers (id, name) VALUES (4, ${sqlString(marker)})`);
    const answer = await host.httpGet(3000);
    const rows = [...ROWS, `customer 4 ${marker}`].filter((row) => answer?.body.includes(row)).length;
    figure(
      "host D: the app serves the remote database's rows",
      answer ? `${answer.status}, ${rows} of ${ROWS.length + 1} rows` : "no answer",
      answer?.status === 200 &&
        rows === ROWS.length + 1 &&
        answer.body.includes(`FRONTENDURI http://${LOAD_BALANCER}\n`),
    );

    const texts = [
      host.consoleText(),
      log,
      script,
      setupOut,
      (await host.ssh("cat /var/log/cloud-init-output.log")).stdout,
      (await host.ssh("journalctl --no-pager -o cat", { timeoutMs: 180_000 })).stdout,
    ];
    const forms = [master.password, appPassword, token].flatMap((s) => [
      s,
      encodeURIComponent(s),
      Buffer.from(s).toString("base64"),
      Buffer.from(s).toString("hex"),
    ]);
    const leaked = texts.some((text) => forms.some((form) => text.includes(form)));
    figure(
      "host D: secrets (master, app, token) in the user data, console, logs and journal",
      leaked ? "found" : "none",
      !leaked,
    );
  } finally {
    await vm?.kill();
    secretsManager.destroy();
    ssm.destroy();
    await db.stop();
  }
}
