/**
 * The scale-out topology's provisioning (userdata/remote-database.sh), run for real: two hosts (two
 * harnesses, each with its own git server, metadata stand-in and paths) provision at the same time
 * against one MariaDB server reached over TCP, standing in for Amazon RDS for MariaDB: root only through
 * its socket, and a master user `admin` with exactly RDS's privileges, whose credentials the hosts never
 * hold: the hosts wait at step 4 until db-setup, run on one of them with RDS's secret on its standard input
 * (as `npm run ops -- <stack> db-setup` sends it), makes the app's account; the app's password comes from
 * Parameter Store (moto's server, through the machine's real AWS CLI). One import, one creation of the app
 * user, both hosts' .env reach the same rows, every SQL call of theirs as the app's account.
 */
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { spawn, spawnSync } from "child_process";
import { randomBytes } from "crypto";
import { parse } from "dotenv";
import { existsSync, readFileSync } from "fs";
import { join } from "path";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { CLIENT_PACKAGES, renderProvisioningScript, ScaleOutValues, STEP_FUNCTIONS } from "../../userdata";
import { SecretParameterNames } from "../../settings/provisioning-settings";
import { DatabaseServer, databaseServerToolsMissing } from "../support/database-server";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(240_000);

const REGION = "us-east-1";
const { appDbPassword, sourceHostToken } = secretParameterNames("CrmHostStack");
const NAMES: SecretParameterNames = { region: REGION, appDbPassword, sourceHostToken };
const suffix = randomBytes(5).toString("hex");
const MASTER = { username: "admin", password: `Master '"$(id) \`x\` %{y} ${suffix}` };
const APP_PASSWORD = `App pass'; DROP DATABASE crm_test; -- ${suffix}`;
const TOKEN = `ghp_ScaleOut${suffix}/+=`;
const LOAD_BALANCER = "crm-host-alb-1234567890.us-east-1.elb.amazonaws.com";
const RELEASE = "v1";
const forms = (...values: string[]) =>
  values.flatMap((value) => [
    value,
    encodeURIComponent(value),
    Buffer.from(value).toString("base64"),
    Buffer.from(value).toString("hex"),
  ]);

const awsMissing = spawnSync("bash", ["-c", "command -v aws"]).status === 0 ? [] : ["the AWS CLI (aws)"];
const motoServer = findMotoServer();

describeWithTools(
  "scale-out topology: two hosts provisioning at once against one database over TCP (an RDS stand-in)",
  [
    ...ProvisioningHarness.toolsMissing(),
    ...databaseServerToolsMissing(),
    ...(motoServer ? [] : ["moto_server"]),
    ...awsMissing,
  ],
  () => {
    let moto: MotoServer;
    let db: DatabaseServer;
    let hosts: ProvisioningHarness[] = [];
    let scripts: string[];
    let runs: RunResult[];
    let releases: string[];
    let setup: RunResult;

    const values = (): ScaleOutValues => ({
      databaseHost: "127.0.0.1",
      databasePort: String(db.port),
      loadBalancerName: LOAD_BALANCER,
      releaseRef: RELEASE,
    });
    const env = (host: ProvisioningHarness) => parse(readFileSync(join(host.settings.appDir, ".env")));
    const count = (pattern: RegExp) =>
      runs.map((run) => (run.output.match(pattern) ?? []).length).reduce((a, b) => a + b, 0);
    /** db-setup on a host, with RDS's secret (its JSON) on standard input, as the local command sends it. */
    const dbSetup = (host: ProvisioningHarness, secret = JSON.stringify(MASTER)) =>
      host.runCommand(host.opsCommand, ["db-setup"], { input: secret });

    beforeAll(async () => {
      moto = await MotoServer.start(motoServer!);
      const credentials = { accessKeyId: "moto", secretAccessKey: "moto" };
      const ssm = new SSMClient({ region: REGION, endpoint: moto.endpoint, credentials });
      db = await DatabaseServer.start({ masterUser: MASTER.username, masterPassword: MASTER.password });
      for (const [name, value] of [
        [appDbPassword, APP_PASSWORD],
        [sourceHostToken, TOKEN],
      ]) {
        await ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));
      }
      ssm.destroy();
      hosts = await Promise.all(
        ["crm-one", "crm-two"].map((appName) =>
          ProvisioningHarness.start({
            appName,
            sourceHostToken: TOKEN,
            awsEndpoint: moto.endpoint,
            remoteDatabase: true,
          }),
        ),
      );
      releases = await Promise.all(
        hosts.map((host) => host.pushCommit({ RELEASE: `${RELEASE}\n` }, `release ${RELEASE}`, `refs/tags/${RELEASE}`)),
      );
      scripts = hosts.map((host) => renderProvisioningScript(host.settings, NAMES, "", "", values()));
      const running = Promise.all(hosts.map((host, i) => host.run(scripts[i], { timeoutMs: 180_000 })));
      // The hosts wait at step 4 for the account db-setup makes, holding the ops lock: db-setup (its tool installed
      // beside the first boot, as `npm run ops` does first) once the first says so in its log.
      const deadline = Date.now() + 60_000;
      const waiting = () =>
        existsSync(hosts[0].settings.logFile) &&
        readFileSync(hosts[0].settings.logFile, "utf8").includes("waiting for `npm run ops");
      while (!waiting() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      setup = await dbSetup(hosts[0]);
      runs = await running;
      for (const run of [setup, ...runs]) if (run.exitCode !== 0) console.error(run.output);
    });

    afterAll(async () => {
      await Promise.all(hosts.map((host) => host.stop()));
      await db?.stop();
      await moto?.stop();
    }, TEARDOWN_MS);

    test("both hosts wait at step 4 for db-setup, then provision, every step done, as the app's account", () => {
      expect(setup.exitCode).toBe(0);
      expect(setup.output).toContain(
        "db-setup: the database crm_test and its account crm_app@% for app_db_password are in place",
      );
      for (const run of runs) {
        expect(run.exitCode).toBe(0);
        for (const step of STEP_FUNCTIONS) expect(run.output).toContain(`DONE ${step}`);
        expect(run.output).toContain(
          `secrets read from Parameter Store (${REGION}): ${appDbPassword} ${sourceHostToken}`,
        );
        expect(run.output).toContain("the app's account crm_app logs in to 127.0.0.1");
        expect(run.output).toContain("the database user crm_app@% is db-setup's: this host logs in as it");
      }
      // At least one host booted before db-setup had run, and waited for it.
      expect(
        count(
          /no account of the app \(crm_app, crm_app_b\) takes app_db_password yet: waiting for `npm run ops -- <stack> db-setup --host <a host>`/g,
        ),
      ).toBeGreaterThanOrEqual(1);
    });

    test("db-setup creates the app user, one host imports export.sql, the other finds it: each under the database lock", async () => {
      expect(setup.output).toContain("created the database user crm_app@%");
      expect(setup.output).toContain("create_app_account: the database lock crm-provisioning:crm_test is ours");
      expect(count(/created the database user/g)).toBe(0);
      expect(count(/was imported before; not importing it again/g)).toBe(1);
      expect(count(/step_09_import_database: the database lock crm-provisioning:crm_test is ours/g)).toBe(2);
      expect(await db.query("SELECT COUNT(*) FROM crm_test.customers")).toBe("3");
      expect(
        await db.query("SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'crm_test'"),
      ).toBe("crm-provisioning: export.sql imported");
      expect(await db.query("SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User = 'crm_app'")).toBe("crm_app@%");
      // Every privilege on its one database that RDS's master user may grant (all but DELETE HISTORY).
      const grants = await db.query("SHOW GRANTS FOR 'crm_app'@'%'");
      expect(grants).toContain(
        "CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER ON `crm\\\\_test`.* TO `crm_app`@`%`",
      );
    });

    test("each host's .env names the database and the load balancer, and reaches the same rows with it", async () => {
      const rows: string[] = [];
      for (const host of hosts) {
        const values = env(host);
        expect(values).toMatchObject({
          DB_HOST: "127.0.0.1",
          DB_PORT: String(db.port),
          DB_USER: "crm_app",
          DB_NAME: "crm_test",
          DB_PASSWORD: APP_PASSWORD,
          FRONTENDURI: `http://${LOAD_BALANCER}`,
          BACKENDURI: `http://${LOAD_BALANCER}:3000`,
          SESSION_SECRET: "keep-me",
        });
        const result = await db.queryAs(
          values.DB_USER,
          values.DB_PASSWORD,
          `SELECT id, name FROM ${values.DB_NAME}.customers ORDER BY id`,
        );
        expect(result.code).toBe(0);
        rows.push(result.stdout);
      }
      expect(rows[0]).toBe("1\tAda\n2\tGrace\n3\tLinus\n");
      expect(rows[1]).toBe(rows[0]);
    });

    test("no database server of their own, and no administrator: the client package, no mariadb unit, every SQL call as the app's account", () => {
      const users = new Set<string | undefined>();
      for (const run of runs) {
        expect(run.calls).toContain(`dnf -y install ${CLIENT_PACKAGES.join(" ")}`);
        expect(run.calls.filter((call) => /^systemctl .*mariadb/.test(call))).toEqual([]);
        // The harness logs every call on the host while the run lasts: db-setup's, which ran on host one meanwhile, are not the run's.
        for (const call of run.calls.filter((line) => /^(mariadb|mysql) /.test(line) && !setup.calls.includes(line)))
          users.add(/--user=(\S+)/.exec(call)?.[1]);
      }
      // The app's two accounts (app_login tries both); the master user only in db-setup, which the operator runs with RDS's secret.
      expect([...users].filter((user) => user !== "crm_app_b")).toEqual(["crm_app"]);
      expect(
        setup.calls.filter((line) => /^(mariadb|mysql) /.test(line)).map((call) => /--user=(\S+)/.exec(call)?.[1]),
      ).toContain("admin");
    });

    test("each host deploys the release the launch template names (release_ref), and the public name stays the load balancer's", () => {
      hosts.forEach((host, i) => {
        const head = spawnSync("git", ["-C", host.settings.appDir, "rev-parse", "HEAD"], {
          encoding: "utf8",
        }).stdout.trim();
        expect(head).toBe(releases[i]);
        expect(runs[i].output).toContain(`release ${RELEASE}: ${releases[i]}`);
        expect(runs[i].output).toContain(`public name: ${LOAD_BALANCER}`);
        // No metadata read for the public name: only the role's credentials, for the AWS CLI.
        expect(host.metadataRequests.filter((request) => /public-(hostname|ipv4)/.test(request.path))).toEqual([]);
      });
    });

    test("no secret (the master password, the app's, the token) in the user data, the output, the log or a command line", () => {
      const all = forms(MASTER.password, APP_PASSWORD, TOKEN);
      hosts.forEach((host, i) => {
        const texts = [
          scripts[i],
          runs[i].output,
          readFileSync(host.settings.logFile, "utf8"),
          ...runs[i].calls,
          setup.output,
          ...setup.calls,
        ];
        expect(all.filter((form) => texts.some((text) => text.includes(form)))).toEqual([]);
      });
    });

    test("a second run of a host (reprovision) changes nothing", async () => {
      const again = await hosts[0].run(scripts[0]);
      expect(again.exitCode).toBe(0);
      expect(again.output).toContain("the app's account crm_app logs in to");
      expect(again.output).toContain("was imported before; not importing it again");
      expect(again.output).toContain("is there: keeping it");
      const setupAgain = await dbSetup(hosts[1]);
      expect(setupAgain.exitCode).toBe(0);
      expect(setupAgain.output).toContain("the database user crm_app@% exists");
      expect(await db.query("SELECT COUNT(*) FROM crm_test.customers")).toBe("3");
    });

    test("a host waits for the database lock while another session holds it", async () => {
      // A session of the master user holds the lock, as a host's import would, for HOLD_MS.
      const HOLD_MS = 6_000;
      const session = spawn(
        "mariadb",
        [
          "--no-defaults",
          "--host=127.0.0.1",
          `--port=${db.port}`,
          `--user=${MASTER.username}`,
          "--batch",
          "--skip-column-names",
          "--unbuffered",
        ],
        { env: { PATH: process.env.PATH, MYSQL_PWD: MASTER.password }, stdio: ["pipe", "pipe", "inherit"] },
      );
      const held = new Promise<string>((resolve) =>
        session.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString().trim())),
      );
      session.stdin.write("SELECT GET_LOCK('crm-provisioning:crm_test', 10);\n");
      expect(await held).toBe("1");
      // The run is compared with the moment the lock was let go, not with a duration: the run starts after
      // the hold's clock does, so its own duration may fall short of HOLD_MS by that gap at any load. A host
      // that did not wait would finish before the release and leave releasedAt unset.
      let releasedAt: number | undefined;
      const release = setTimeout(() => {
        releasedAt = Date.now();
        session.stdin.end();
      }, HOLD_MS);
      try {
        const waited = await hosts[1].run(scripts[1]);
        const finishedAt = Date.now();
        expect(waited.exitCode).toBe(0);
        expect(releasedAt).toBeDefined();
        expect(finishedAt).toBeGreaterThanOrEqual(releasedAt ?? Infinity);
      } finally {
        clearTimeout(release);
        session.stdin.end();
        await new Promise((resolve) =>
          session.exitCode === null ? session.once("exit", resolve) : resolve(undefined),
        );
      }
    });

    test("the ops command refuses a release or a rotation on one host of the group", async () => {
      for (const action of [["release", "main"], ["rotate-secrets"]]) {
        const result = await hosts[1].runCommand(hosts[1].opsCommand, action);
        expect(result.exitCode).not.toBe(0);
        expect(result.output).toMatch(
          new RegExp(`ERROR: ${action[0]}: .*instance refresh.* \\(docs/scale-out\\.md\\)`),
        );
      }
    });

    test("ops db on one host of the group: the app's database on the shared server, as the app user; db dump of it", async () => {
      const session = await hosts[1].runCommand(hosts[1].opsCommand, ["db"], {
        input: "SELECT CURRENT_USER(), COUNT(*) FROM customers;\n",
      });
      expect(session.exitCode).toBe(0);
      expect(session.output).toMatch(/^crm_app@%\t\d+$/m);
      const dump = await hosts[1].runCommand(hosts[1].opsCommand, ["db", "dump"]);
      expect(dump.exitCode).toBe(0);
      expect(dump.output).toContain("INSERT INTO `customers`");
    });

    test("db-setup refuses what is not RDS's secret, and a master password the database refuses, changing nothing", async () => {
      for (const input of ["", "admin:password", JSON.stringify({ username: "admin; DROP", password: "x" })]) {
        const refused = await dbSetup(hosts[1], input);
        expect(refused.exitCode).not.toBe(0);
        expect(refused.output).toContain(
          "ERROR: db-setup reads the database's master secret on standard input, as RDS keeps it in Secrets Manager",
        );
      }
      const wrong = await dbSetup(hosts[1], JSON.stringify({ ...MASTER, password: `not-it ${suffix}` }));
      expect(wrong.exitCode).not.toBe(0);
      expect(wrong.output).toContain("ERROR: the database refuses its master user admin with that secret's password");
      expect(wrong.output).not.toContain(`not-it ${suffix}`);
    });

    test("a host whose app_db_password no account takes (no db-setup) stops at step 4 after the wait, naming db-setup", async () => {
      const ssm = new SSMClient({
        region: REGION,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      const put = (value: string) =>
        ssm.send(new PutParameterCommand({ Name: appDbPassword, Value: value, Type: "SecureString", Overwrite: true }));
      try {
        await put(`Not set up ${suffix}`);
        const stopped = await hosts[1].run(scripts[1], { header: { DATABASE_SETUP_WAIT_SECONDS: 3 } });
        expect(stopped.exitCode).toBe(1);
        expect(stopped.output).toContain(
          "no account of the app (crm_app, crm_app_b) takes app_db_password after 3 s: run `npm run ops -- <stack> db-setup --host <a host>`",
        );
        expect(stopped.output).toContain("FAILED: step_04_set_root_password");
        expect(stopped.output).not.toContain("START step_05");
      } finally {
        await put(APP_PASSWORD);
        ssm.destroy();
      }
    });

    test("moving the data from a single host (docs/scale-out.md): its mariadb-dump, imported as the master user, replaces export.sql's rows", async () => {
      // The single host: its own server, the database as its app left it, dumped as root through the socket (sudo mariadb-dump).
      const single = await DatabaseServer.start({
        masterUser: "unused",
        masterPassword: randomBytes(8).toString("hex"),
      });
      try {
        await single.query(`CREATE DATABASE crm_test; CREATE TABLE crm_test.customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);
INSERT INTO crm_test.customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus'), (4, 'Written on the single host: it''s "quoted"');
CREATE TABLE crm_test.notes (id INT PRIMARY KEY, body TEXT); INSERT INTO crm_test.notes VALUES (1, 'only on the single host');`);
        const dump = spawnSync(
          "mariadb-dump",
          ["--no-defaults", `--socket=${single.socket}`, "--user=root", "--single-transaction", "crm_test"],
          { encoding: "utf8", timeout: 60_000 },
        );
        expect(dump.status).toBe(0);
        const imported = spawnSync(
          "mariadb",
          ["--no-defaults", "--host=127.0.0.1", `--port=${db.port}`, `--user=${MASTER.username}`, "crm_test"],
          {
            input: dump.stdout,
            encoding: "utf8",
            timeout: 60_000,
            env: { PATH: process.env.PATH, MYSQL_PWD: MASTER.password },
          },
        );
        expect({ status: imported.status, stderr: imported.stderr }).toEqual({ status: 0, stderr: "" });
      } finally {
        await single.stop();
      }
      const values = env(hosts[0]);
      const read = await db.queryAs(
        values.DB_USER,
        values.DB_PASSWORD,
        "SELECT COUNT(*), MAX(name) FROM crm_test.customers WHERE id = 4; SELECT body FROM crm_test.notes",
      );
      expect(read).toMatchObject({
        code: 0,
        stdout: '1\tWritten on the single host: it\'s "quoted"\nonly on the single host\n',
      });
      // The hosts' import mark stays: a new host does not import export.sql over the moved data.
      const again = await hosts[1].run(scripts[1]);
      expect(again.output).toContain("was imported before; not importing it again");
      expect(await db.query("SELECT COUNT(*) FROM crm_test.customers")).toBe("4");
    });

    test("a new app_db_password reaches the group as new hosts and locks out none still serving: each rotation takes the other account (alternating users)", async () => {
      const ssm = new SSMClient({
        region: REGION,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      const rotate = (value: string) =>
        ssm.send(new PutParameterCommand({ Name: appDbPassword, Value: value, Type: "SecureString", Overwrite: true }));
      const logsIn = async (host: ProvisioningHarness) =>
        (await db.queryAs(env(host).DB_USER, env(host).DB_PASSWORD, "SELECT COUNT(*) FROM crm_test.customers")).code ===
        0;
      try {
        const [serving, fresh] = hosts;
        // Rotation 1: db-setup gives the new value to crm_app_b; the new host (a run with the new value, as an
        // instance refresh's host does) takes it.
        await rotate(`Rotated once ${suffix}`);
        expect((await dbSetup(serving)).output).toContain("created the database user crm_app_b@%");
        const first = await fresh.run(scripts[1]);
        expect(first.exitCode).toBe(0);
        expect(first.output).toContain("the app's account crm_app_b logs in to");
        // ops db follows the password to its account.
        const session = await fresh.runCommand(fresh.opsCommand, ["db"], { input: "SELECT CURRENT_USER();\n" });
        expect({ code: session.exitCode, user: /^crm_app(_b)?@%$/m.exec(session.output)?.[0] }).toEqual({
          code: 0,
          user: "crm_app_b@%",
        });
        expect(env(fresh)).toMatchObject({ DB_USER: "crm_app_b", DB_PASSWORD: `Rotated once ${suffix}` });
        expect({ serving: await logsIn(serving), fresh: await logsIn(fresh) }).toEqual({ serving: true, fresh: true });
        // The old host replaced too (its rerun): it takes crm_app_b, the account that has the new password.
        expect((await serving.run(scripts[0])).output).toContain("the app's account crm_app_b logs in to");
        expect(env(serving).DB_USER).toBe("crm_app_b");
        // Rotation 2: back to crm_app, whose password changed first; the hosts on crm_app_b still serve.
        await rotate(`Rotated twice ${suffix}`);
        expect((await dbSetup(serving)).output).toContain(
          "the password of crm_app@% was not app_db_password: changed it to app_db_password",
        );
        const second = await fresh.run(scripts[1]);
        expect(second.output).toContain("the app's account crm_app logs in to");
        expect(env(fresh).DB_USER).toBe("crm_app");
        expect({ serving: await logsIn(serving), fresh: await logsIn(fresh) }).toEqual({ serving: true, fresh: true });
      } finally {
        ssm.destroy();
      }
    });
  },
);
