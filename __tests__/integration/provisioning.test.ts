/**
 * Runs the rendered provisioning script for real (bash, as root) against the harness's private
 * MariaDB server, https git server and metadata stand-in, twice, with adversarial secrets.
 */
import { spawnSync } from "child_process";
import { existsSync, readFileSync, statSync } from "fs";
import { join } from "path";
import {
  nativePasswordHash,
  ProvisioningHarness,
  RunResult,
  startedUnitCalls,
  TEST_PUBLIC_HOSTNAME,
} from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import {
  NODE_MAJOR,
  NODE_VERSION,
  NVM_INSTALL_URL,
  PACKAGES,
  renderProvisioningScript,
  renderServiceUnit,
  STEP_FUNCTIONS,
  SWAP_SIZE,
} from "../../userdata";
import { hostModules } from "../../userdata/script";
import { ScriptSecrets, validateProvisioningSettings } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(120_000);

const ROOT_PASSWORD = `r00t '"$HOME \`id\` \\ %s {x} $(touch /tmp/pwned-root)`;
// All three quote characters, so .env holds it bare; no "#", which dotenv would cut there (the plan refuses that).
const APP_PASSWORD = `it's "$USER" \`whoami\` \\n 100% {}'; DROP DATABASE crm_test; -- $(touch /tmp/pwned-app) é`;
const TOKEN = `ghp_T0k€n:/?#[]@!$&'()*+,;= %{x}${"$"}{y} \`z\``;
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64(ROOT_PASSWORD),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64(TOKEN),
};
/** Every form in which a secret could leak into a log. */
const percentEncoded = (text: string) =>
  [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9._~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
const SECRET_FORMS = [
  ROOT_PASSWORD,
  APP_PASSWORD,
  TOKEN,
  encodeURIComponent(TOKEN),
  percentEncoded(TOKEN),
  Buffer.from(APP_PASSWORD).toString("hex"),
  Buffer.from(ROOT_PASSWORD).toString("hex"),
];

describeWithTools("provisioning script, run for real", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;
  let first: RunResult;

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: TOKEN });
    validateProvisioningSettings(h.settings);
    first = await h.run(renderProvisioningScript(h.settings, SECRETS));
    if (first.exitCode !== 0) console.error(first.output);
  });

  afterAll(async () => {
    await h?.stop();
  }, TEARDOWN_MS);

  test("the first run succeeds and logs every step", () => {
    expect(first.exitCode).toBe(0);
    for (const step of STEP_FUNCTIONS) {
      expect(first.output).toContain(`START ${step}`);
      expect(first.output).toContain(`DONE ${step}`);
    }
    expect(first.output).toContain(`public hostname: ${TEST_PUBLIC_HOSTNAME}`);
    expect(existsSync("/tmp/pwned-root") || existsSync("/tmp/pwned-app")).toBe(false);
  });

  test("the log file holds the same output and no secret, in no form", () => {
    const log = readFileSync(h.settings.logFile, "utf8");
    expect(log).toContain("DONE step_15_install_service");
    for (const form of SECRET_FORMS) {
      expect(log).not.toContain(form);
      expect(first.output).not.toContain(form);
    }
    // Nothing even tried to print a secret: the filter had nothing to hide.
    expect(log).not.toContain("[REDACTED]");
    expect(statSync(h.settings.logFile).mode & 0o777).toBe(0o600);
  });

  test("the database, the app user with the exact password and its grants exist", async () => {
    const { databaseName, appDbUser } = h.settings;
    expect(await h.query(`SHOW DATABASES LIKE '${databaseName}'`)).toBe(databaseName);
    expect(await h.canLogin(appDbUser, APP_PASSWORD)).toBe(true);
    expect(await h.canLogin(appDbUser, `${APP_PASSWORD} `)).toBe(false);
    expect(await h.canLogin(appDbUser, "")).toBe(false);
    const grants = await h.query(`SHOW GRANTS FOR '${appDbUser}'@'localhost'`);
    // On the one database: its _ escaped, which the client's batch output writes as \\_.
    expect(grants).toContain(
      `GRANT ALL PRIVILEGES ON \`${databaseName.replace(/_/g, "\\\\_")}\`.* TO \`${appDbUser}\`@\`localhost\``,
    );
    expect(grants.split("\n")).toHaveLength(2);
  });

  test("root has the exact password and keeps its unix_socket login", async () => {
    const priv = await h.query("SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'");
    expect(priv).toContain(nativePasswordHash(ROOT_PASSWORD));
    expect(priv).toContain("unix_socket");
  });

  test("export.sql was imported as the app user", async () => {
    expect(await h.query(`SELECT id, name FROM ${h.settings.databaseName}.customers ORDER BY id`)).toBe(
      "1\tAda\n2\tGrace\n3\tLinus",
    );
  });

  test("the checkout is there, with a credential-free remote and no token anywhere in .git", () => {
    const { appDir, repoUrl } = h.settings;
    expect(existsSync(join(appDir, "server.js"))).toBe(true);
    const config = readFileSync(join(appDir, ".git", "config"), "utf8");
    expect(config).toContain(`url = ${repoUrl}\n`);
    const patterns = ["ghp_", "x-access-token:", ...SECRET_FORMS].flatMap((form) => ["-e", form]);
    const grep = spawnSync("grep", ["-rlF", ...patterns, join(appDir, ".git")], { encoding: "utf8" });
    expect(grep.stdout).toBe("");
    expect(grep.status).toBe(1);
    // The server saw the token: an authorized request by the expected user.
    expect(h.gitRequests.some((r) => r.authorized)).toBe(true);
    expect(h.gitRequests.filter((r) => r.status !== 401).every((r) => r.authorized)).toBe(true);
  });

  test("git identity of the login user is set", () => {
    const gitconfig = readFileSync(join(h.settings.loginHome, ".gitconfig"), "utf8");
    expect(gitconfig).toContain("name = CRM 'Deploy' Bot");
    expect(gitconfig).toContain("email = deploy@example.com");
  });

  test(".env has the five settings, the other lines intact, mode 600", () => {
    const file = join(h.settings.appDir, ".env");
    expect(readFileSync(file, "utf8")).toBe(
      [
        "# settings of the CRM server",
        "PORT=3000",
        `FRONTENDURI=http://${TEST_PUBLIC_HOSTNAME}`,
        "SESSION_SECRET=keep-me",
        `DB_USER=${h.settings.appDbUser}`,
        `DB_PASSWORD=${APP_PASSWORD}`,
        `DB_NAME=${h.settings.databaseName}`,
        `BACKENDURI=http://${TEST_PUBLIC_HOSTNAME}:3000`,
        "",
      ].join("\n"),
    );
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The real dotenv package, both of its parsers, reads back exactly what was given.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const dotenv = require("dotenv");
    for (const fast of [false, true]) {
      expect(dotenv.parse(readFileSync(file, "utf8"), { fast })).toEqual({
        PORT: "3000",
        FRONTENDURI: `http://${TEST_PUBLIC_HOSTNAME}`,
        SESSION_SECRET: "keep-me",
        DB_USER: h.settings.appDbUser,
        DB_PASSWORD: APP_PASSWORD,
        DB_NAME: h.settings.databaseName,
        BACKENDURI: `http://${TEST_PUBLIC_HOSTNAME}:3000`,
      });
    }
  });

  test("the metadata service saw, each after a token request, the Region (for the modules) and the hostname, with the token", () => {
    expect(h.metadataRequests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      "PUT /latest/api/token 200",
      "GET /latest/meta-data/placement/region 200",
      "PUT /latest/api/token 200",
      "GET /latest/meta-data/public-hostname 200",
    ]);
    expect(h.metadataRequests[0].headers["x-aws-ec2-metadata-token-ttl-seconds"]).toBe("21600");
  });

  test("the unit file is renderServiceUnit(settings)", () => {
    const unit = join(h.host.unitDirectory, `${h.settings.appName}.service`);
    expect(readFileSync(unit, "utf8")).toBe(renderServiceUnit(h.settings));
  });

  test("the stand-ins were called as expected, in order", () => {
    const { appDir, swapFile, loginHome, appName } = h.settings;
    const relevant = first.newCalls
      .filter((line) => !/^(mariadb|mysql|curl -fsS|chown|flock) /.test(line))
      .map((line) => line.replace(/ -o \S+ /, " -o <temporary file> "));
    expect(relevant).toEqual([
      // First, the modules, in one call (provision.sh, load_modules); then, before step 1, the telemetry timer (userdata/telemetry.sh).
      `aws ssm get-parameters --region us-east-1 --names ${hostModules(h.settings)
        .map((m) => `/${appName}/modules/${m.module}`)
        .join(" ")} ` + "--query Parameters[].[Name,Value] --output text",
      // Units systemd has not loaded: read from their files, no reload (load_units, enable_unit).
      ...startedUnitCalls(
        [`${appName}-telemetry.service`, `${appName}-telemetry.timer`],
        `${appName}-telemetry.timer`,
        false,
      ),
      "dnf -y upgrade",
      "dnf -y groupinstall Development Tools",
      `dnf -y install ${PACKAGES.join(" ")}`,
      "nft -f /dev/stdin",
      "systemctl is-enabled --quiet nftables",
      "systemctl enable --no-reload nftables",
      ...startedUnitCalls([], "mariadb", false),
      `curl -fsSL --max-time 120 -o <temporary file> ${NVM_INSTALL_URL}`,
      `nvm-installer HOME=${loginHome} user=${h.settings.loginUser}`,
      `nvm install ${NODE_MAJOR}`,
      `nvm alias default ${NODE_MAJOR}`,
      `nvm install ${NODE_VERSION}`,
      `nvm use ${NODE_VERSION}`,
      "swapon --show=NAME --noheadings",
      `fallocate -l ${SWAP_SIZE} ${swapFile}.partial`,
      `mkswap ${swapFile}.partial`,
      `swapon ${swapFile}`,
      "npm install -g yarn",
      `yarn install --ignore-engines (in ${appDir}, NODE_ENV=production)`,
      // Step 15: the original stack's reload of the service manager, then no other.
      "systemctl daemon-reload",
      ...startedUnitCalls([], `${appName}.service`, false),
    ]);
    expect(first.newCalls.filter((line) => line.startsWith("mariadb ")).length).toBeGreaterThanOrEqual(5);
    expect(statSync(swapFile).mode & 0o777).toBe(0o600);
  });

  describe("a second run", () => {
    let second: RunResult;

    beforeAll(async () => {
      await h.query(`INSERT INTO ${h.settings.databaseName}.customers VALUES (4, 'Added between runs')`);
      await h.commitToRepository({ "CHANGELOG.md": "second release\n" }, "second release");
      second = await h.run(renderProvisioningScript(h.settings, SECRETS));
      if (second.exitCode !== 0) console.error(second.output);
    });

    test("succeeds, pulls the new commit and keeps the token out of .git", () => {
      expect(second.exitCode).toBe(0);
      expect(readFileSync(join(h.settings.appDir, "CHANGELOG.md"), "utf8")).toBe("second release\n");
      expect(readFileSync(join(h.settings.appDir, ".git", "config"), "utf8")).not.toContain("x-access-token");
      for (const form of SECRET_FORMS) expect(second.output).not.toContain(form);
    });

    test("defines the modules from the copies the first run kept, without asking Parameter Store again", () => {
      expect(second.newCalls.filter((line) => line.startsWith("aws "))).toEqual([]);
    });

    test("loses and duplicates no row and keeps the user and its password", async () => {
      expect(second.output).toContain("export.sql was imported before; not importing it again");
      expect(await h.query(`SELECT COUNT(*), MAX(id) FROM ${h.settings.databaseName}.customers`)).toBe("4\t4");
      expect(await h.canLogin(h.settings.appDbUser, APP_PASSWORD)).toBe(true);
    });

    test("leaves the active swap alone and re-enables the service idempotently", () => {
      const calls = second.newCalls.filter((line) => /^(fallocate|mkswap|swapon|npm|systemctl|yarn) /.test(line));
      const { appName } = h.settings;
      expect(calls).toEqual([
        // Enabled by the first run: asked, not enabled again.
        ...startedUnitCalls(
          [`${appName}-telemetry.service`, `${appName}-telemetry.timer`],
          `${appName}-telemetry.timer`,
          true,
        ),
        "systemctl is-enabled --quiet nftables",
        ...startedUnitCalls([], "mariadb", true),
        "swapon --show=NAME --noheadings",
        `yarn install --ignore-engines (in ${h.settings.appDir}, NODE_ENV=production)`,
        "systemctl daemon-reload",
        ...startedUnitCalls([], `${appName}.service`, true),
      ]);
      expect(readFileSync(join(h.settings.appDir, ".env"), "utf8").match(/^DB_PASSWORD=/gm)).toHaveLength(1);
    });

    test("keeps one swap line in the file system table and one block of rules in the nftables file", () => {
      expect(readFileSync(h.host.fstabFile, "utf8")).toBe(`${h.settings.swapFile} none swap defaults 0 0\n`);
      const rules = readFileSync(h.host.nftablesConfig, "utf8");
      expect(rules.match(/^# BEGIN crm-test \(provisioning script\)$/gm)).toHaveLength(1);
      expect(rules).toContain("ip daddr 127.0.0.1 meta skuid != 0 counter reject");
      expect(rules).toContain("tcp dport 80 counter redirect to :3000");
    });

    test("after a reboot, a third run turns the existing swap file on again without re-creating it", async () => {
      h.deactivateSwaps();
      const third = await h.run(renderProvisioningScript(h.settings, SECRETS));
      expect(third.exitCode).toBe(0);
      expect(third.newCalls.filter((line) => /^(fallocate|mkswap|swapon) /.test(line))).toEqual([
        "swapon --show=NAME --noheadings",
        `swapon ${h.settings.swapFile}`,
      ]);
    });
  });

  test("a secret with a control character stops the script before any step, naming the secret", async () => {
    const bad = { ...SECRETS, appDbPasswordBase64: b64("line one\nline two") };
    const result = await h.run(renderProvisioningScript(h.settings, bad));
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain(
      "ERROR: the secret application database password (APP_DB_PASSWORD_B64) contains control characters",
    );
    expect(result.output).not.toContain("line one");
    expect(result.output).not.toContain("START step_01");
    expect(result.newCalls).toEqual([]);
  });
});
