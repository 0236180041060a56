/**
 * Host B of the boot test in parameter-store mode: the migration of a running stack from secrets in
 * the user data to Parameter Store by host replacement (docs/secrets.md), its user data read back from
 * moto's EC2 (user-data.ts). moto's server on loopback
 * stands in for SSM, KMS and STS; the stand-in HTTPS server passes the guest's requests for the AWS
 * endpoints on to it, and the metadata stand-in serves the role's credentials; the guest runs the
 * real AWS CLI (Debian's awscli). The scenario:
 *
 *   1. the parameters hold host A's values but one: host B's first boot stops before any step, naming it;
 *   2. the test puts it; the documented repair, `crm-ops reprovision` (the ops tool, installed beside the configuration written before
 *      the secrets are read), provisions the host on host A's data volume;
 *   3. a rotation on the running host: new values in Parameter Store, then `npm run ops -- <stack> rotate-secrets`
 *      as the operator runs it (over ssh as the login user, then sudo crm-ops rotate-secrets);
 *   4. no secret, old or new, in the user data, the console, the journal, cloud-init's logs or the provisioning log.
 */
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { createHash, randomBytes } from "crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { gunzipSync } from "zlib";
import { ProvisioningUserData } from "../../constructs/provisioning-user-data";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { nodeBinDir, OPS_INSTALLER, opsPaths, renderOpsTool, shellQuote } from "../../userdata";
import { ProvisioningSettings, SecretParameterNames } from "../../settings/provisioning-settings";
import { MotoServer } from "../support/moto-server";
import { underLoad } from "./load";
import { StandInServer } from "./stand-ins";
import { appliedUserData, bootModulePath, ReadBackUserData, UserDataTarget } from "./user-data";
import { BOOT_REGION, CommandResult, run, Vm } from "./vm";

/** Where cloud-init keeps the user data's script: the repair runs it again. */
const STORED_SCRIPT = "/var/lib/cloud/instance/scripts/part-001";

/** The secrets by their variable names (as the user-data mode's TF_VAR_s). */
export interface BootSecrets {
  readonly db_root_password: string;
  readonly app_db_password: string;
  readonly source_host_token: string;
}

type Figure = (name: string, value: string, ok: boolean) => void;
type AppSql = (host: Vm, sql: string) => Promise<CommandResult>;

/** Every form in which a secret could leak: raw, URL-encoded, base64, hex. */
function forms(secrets: BootSecrets[]): string[] {
  return secrets
    .flatMap((s) => Object.values(s))
    .flatMap((value: string) => [
      value,
      encodeURIComponent(value),
      Buffer.from(value).toString("base64"),
      Buffer.from(value).toString("hex"),
    ]);
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

export class ParameterStoreHost {
  /**
   * Builds the parameter-store mode's user data (the Terraform engine, an instance in the target's EC2, read back
   * from there); the target's moto (the boot test's, which stops it) also holds the parameters.
   */
  static async start(
    target: UserDataTarget,
    settings: ProvisioningSettings,
    stackName: string,
    dataVolumeId: string,
  ): Promise<ParameterStoreHost> {
    const names = { region: BOOT_REGION, ...secretParameterNames(stackName) } satisfies SecretParameterNames;
    const readBack = await appliedUserData(
      target,
      (scope) =>
        new ProvisioningUserData(scope, "user_data", {
          settings: { ...settings, secrets: "parameter-store" },
          secrets: names,
          dataVolumeId,
          modulePath: bootModulePath("host-b"),
        }),
    );
    return new ParameterStoreHost(settings, names, readBack, target.moto);
  }

  private readonly ssm: SSMClient;
  /** Values put into Parameter Store so far (host A's, then the rotated ones). */
  private readonly putValues: BootSecrets[] = [];

  /** The user data host B boots: gzip, as EC2 returns it, holding the parameters' names and no secret. */
  get userData(): Buffer {
    return this.readBack.bytes;
  }

  private constructor(
    private readonly settings: ProvisioningSettings,
    readonly names: Required<SecretParameterNames>,
    /** Host B's user data as EC2 (moto) keeps it, and as the engine rendered it. */
    readonly readBack: ReadBackUserData,
    readonly moto: MotoServer,
  ) {
    this.ssm = new SSMClient({
      region: BOOT_REGION,
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "boot-test", secretAccessKey: "boot-test" },
    });
  }

  private async put(secrets: Partial<BootSecrets>): Promise<void> {
    const byName: Record<keyof BootSecrets, string> = {
      db_root_password: this.names.dbRootPassword,
      app_db_password: this.names.appDbPassword,
      source_host_token: this.names.sourceHostToken,
    };
    for (const [key, value] of Object.entries(secrets) as [keyof BootSecrets, string][]) {
      await this.ssm.send(
        new PutParameterCommand({ Name: byName[key], Value: value, Type: "SecureString", Overwrite: true }),
      );
    }
  }

  /** Step 1's set-up: host A's secrets in Parameter Store, all but the app's password. */
  async putAllButAppPassword(hostA: BootSecrets): Promise<void> {
    this.putValues.push(hostA);
    await this.put({ db_root_password: hostA.db_root_password, source_host_token: hostA.source_host_token });
  }

  /**
   * Steps 1 and 2: the first boot stops before any step, naming the missing parameter; then the test
   * puts it and runs cloud-init's stored script again, which provisions the host.
   */
  async stopsThenRepairs(host: Vm, hostA: BootSecrets, figure: Figure, limitMs: number): Promise<void> {
    await host.waitForSsh(limitMs);
    await host.ssh("timeout 600 cloud-init status --wait", { timeoutMs: 620_000 });
    const [status, log, output] = await Promise.all([
      host.ssh("cloud-init status"),
      host.ssh(`cat ${this.settings.logFile}`),
      host.ssh("cat /var/log/cloud-init-output.log"),
    ]);
    const message = `missing in Parameter Store (${BOOT_REGION}): ${this.names.appDbPassword}; put them`;
    const stopped =
      /status: error/.test(status.stdout) &&
      log.stdout.includes(message) &&
      output.stdout.includes(message) &&
      !log.stdout.includes("START step_01");
    const mounted = (await host.ssh(`findmnt -n ${this.settings.dataMount}`)).stdout.trim();
    const answer = await host.httpGet(3000);
    figure(
      "host B: a missing parameter stops the first boot",
      stopped
        ? `before step 1, naming ${this.names.appDbPassword}; data volume ` +
            `${mounted ? "MOUNTED" : "untouched"}, ${answer ? "an app ANSWERS" : "no app"}`
        : `${status.stdout.trim()}; log: ${log.stdout.trim().split("\n").slice(-2).join(" / ")}`,
      stopped && mounted === "" && answer === undefined,
    );

    await this.put({ app_db_password: hostA.app_db_password });
    const started = Date.now();
    // The documented repair: the ops tool (installed by its installer as npm run ops installs it, beside the configuration
    // the first boot wrote before the secrets were read) runs the user data again.
    const ops = opsPaths(this.settings);
    const tool = renderOpsTool();
    await host.sshOk(
      `bash -c ${shellQuote(OPS_INSTALLER)} ops-install ${tool.version} ${ops.command} ${ops.lockFile} ${ops.auditLog} root`,
      { input: tool.text },
    );
    const repair = await host.ssh(`${ops.command} reprovision 2>&1`, { timeoutMs: limitMs });
    figure(
      "host B: the repair (crm-ops reprovision) provisions it",
      `exit ${repair.code} after ${((Date.now() - started) / 1000).toFixed(1)} s`,
      repair.code === 0 && /provisioning \S+: done/.test(repair.stdout),
    );
  }

  /**
   * The local command as an operator runs it, `npm run ops -- <stack> <action> --host …`: over ssh to the
   * guest's forwarded port as the login user (a key of its own, authorized as EC2 does for the key pair;
   * the host key trusted on first contact), then sudo, the host's ops command.
   */
  private async opsCommand(host: Vm, settingsFile: string, stackName: string, action: string): Promise<CommandResult> {
    const dir = mkdtempSync(join(tmpdir(), "crm-boot-ops-"));
    try {
      const key = join(dir, "key");
      const keygen = await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "crm-ops-boot-test", "-f", key]);
      if (keygen.code !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr}`);
      const { loginUser, loginHome } = this.settings;
      await host.sshOk(
        `install -d -m 700 -o ${loginUser} -g ${loginUser} ${loginHome}/.ssh && cat >>${loginHome}/.ssh/authorized_keys && ` +
          `chown ${loginUser}: ${loginHome}/.ssh/authorized_keys && chmod 600 ${loginHome}/.ssh/authorized_keys`,
        { input: readFileSync(`${key}.pub`) },
      );
      // An empty known_hosts file of its own: the command takes the host's key on this first contact.
      const knownHosts = join(dir, "known_hosts");
      writeFileSync(knownHosts, "", { mode: 0o600 });
      return await run(
        "npm",
        [
          "run",
          "--silent",
          "ops",
          "--",
          stackName,
          action,
          "--host",
          "127.0.0.1",
          "--port",
          String(host.hostPort(22)),
          "--identity",
          key,
          "--known-hosts",
          knownHosts,
          "--accept-new-host-key",
        ],
        { env: { ...process.env, CRM_SETTINGS: settingsFile }, timeoutMs: 300_000 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Step 3: new values in Parameter Store, then `npm run ops -- <stack> rotate-secrets` for the running host. */
  async rotates(
    host: Vm,
    standIns: StandInServer,
    figure: Figure,
    appSql: AppSql,
    settingsFile: string,
    stackName: string,
  ): Promise<void> {
    const [before] = this.putValues.slice(-1);
    const suffix = randomBytes(5).toString("hex");
    const rotated: BootSecrets = {
      db_root_password: `New root '"$(id) ${suffix}`,
      app_db_password: `New app pass; -- ${suffix}`,
      source_host_token: `ghp_Rotated${suffix}`,
    };
    await this.put(rotated);
    this.putValues.push(rotated);
    standIns.token = rotated.source_host_token;
    const unit = `${this.settings.appName}.service`;
    const pid = (await host.sshOk(`systemctl show -p MainPID --value ${unit}`)).trim();
    const gitBefore = standIns.requests.length;
    const ops = await underLoad(host, "host B: rotate-secrets", figure, () =>
      this.opsCommand(host, settingsFile, stackName, "rotate-secrets"),
    );
    const result = { code: ops.code, stdout: `${ops.stdout}\n${ops.stderr}` };
    figure(
      "host B: npm run ops -- <stack> rotate-secrets on the running host",
      `exit ${result.code}${result.code ? `: ${result.stdout.trim().split("\n").slice(-2).join(" / ")}` : ""}`,
      result.code === 0 && result.stdout.includes("secrets rotated"),
    );
    const tokenUsed = standIns.requests
      .slice(gitBefore)
      .some((request) => request.host === "github.com" && request.authorized);
    figure("host B: the new token opens the repository", tokenUsed ? "authorized" : "not used", tokenUsed);

    await host.waitForHttp(3000, 180_000);
    const newPid = (await host.sshOk(`systemctl show -p MainPID --value ${unit}`)).trim();
    const login = await appSql(host, "SELECT CURRENT_USER()");
    figure(
      "host B: after the rotation the app logs in with the new password (from .env)",
      `${login.code === 0 ? login.stdout.trim() : `refused: ${login.stderr.trim()}`}, ` +
        `the app restarted: ${newPid !== pid}`,
      login.code === 0 && newPid !== pid,
    );
    const env = (
      await host.sshOk(
        `cd ${this.settings.appDir} && ${nodeBinDir(this.settings.loginHome)}/node -e ` +
          `"process.stdout.write(require('dotenv').parse(require('fs').readFileSync('.env')).DB_PASSWORD)" | sha256sum`,
      )
    ).split(" ")[0];
    figure(
      "host B: .env holds the new password",
      env === sha256(rotated.app_db_password) ? "yes" : "no",
      env === sha256(rotated.app_db_password),
    );

    // Each password through standard input, never on a command line; root through its password, as the login user.
    const tryLogin = (user: string, password: string) =>
      host.ssh(
        `IFS= read -r p; export MYSQL_PWD=$p; runuser -u ${this.settings.loginUser} -- ` +
          `mariadb --user=${user} --batch --skip-column-names -e 'SELECT CURRENT_USER()'`,
        { input: `${password}\n` },
      );
    const logins = {
      "app, old": await tryLogin(this.settings.appDbUser, before.app_db_password),
      "app, new": await tryLogin(this.settings.appDbUser, rotated.app_db_password),
      "root, old": await tryLogin("root", before.db_root_password),
      "root, new": await tryLogin("root", rotated.db_root_password),
    };
    const outcome = Object.entries(logins).map(
      ([who, r]) =>
        `${who}: ${r.code === 0 ? "in" : /Access denied/.test(r.stderr) ? "refused" : `error ${r.stderr.trim()}`}`,
    );
    figure(
      "host B: old passwords refused, new ones accepted",
      outcome.join(", "),
      logins["app, old"].code !== 0 &&
        /Access denied/.test(logins["app, old"].stderr) &&
        logins["app, new"].code === 0 &&
        logins["root, old"].code !== 0 &&
        /Access denied/.test(logins["root, old"].stderr) &&
        logins["root, new"].code === 0,
    );
  }

  /**
   * Step 3b: an interrupted rotation, run again. New values in Parameter Store; `<app>-ops rotate-secrets` started on
   * the host and its unit killed (SIGKILL, as a power cut leaves it) as soon as .env holds the new password; then
   * `npm run ops -- <stack> rotate-secrets` again, as docs/secrets.md says: it completes, and the app logs in with
   * the new password.
   */
  async rotationInterruptedThenRerun(
    host: Vm,
    standIns: StandInServer,
    figure: Figure,
    appSql: AppSql,
    settingsFile: string,
    stackName: string,
  ): Promise<void> {
    const suffix = randomBytes(5).toString("hex");
    const rotated: BootSecrets = {
      db_root_password: `Cut root ${suffix}`,
      app_db_password: `Cut app ${suffix}`,
      source_host_token: `ghp_Cut${suffix}`,
    };
    await this.put(rotated);
    this.putValues.push(rotated);
    standIns.token = rotated.source_host_token;
    const { appName, appDir } = this.settings;
    const command = opsPaths(this.settings).command;
    // On the host, so that no ssh round trip delays the kill: the action's unit is <app>-ops-<pid>.
    const cut = await host.ssh(
      `old=$(sha256sum <${appDir}/.env); ${command} rotate-secrets >/dev/null 2>&1 & ` +
        `for i in $(seq 1200); do [ "$(sha256sum <${appDir}/.env)" != "$old" ] && break; sleep 0.05; done; ` +
        `systemctl kill --signal=KILL '${appName}-ops-*'; wait $!; echo "exit $?"`,
      { timeoutMs: 300_000 },
    );
    figure(
      "host B: rotate-secrets killed once .env holds the new password",
      `${cut.stdout.trim().split("\n").pop()} (0: it ended before the kill)`,
      /exit [1-9]\d*$/.test(cut.stdout.trim()),
    );
    const again = await this.opsCommand(host, settingsFile, stackName, "rotate-secrets");
    const output = `${again.stdout}\n${again.stderr}`;
    figure(
      "host B: the interrupted rotation run again (npm run ops -- <stack> rotate-secrets)",
      `exit ${again.code}${again.code ? `: ${output.trim().split("\n").slice(-2).join(" / ")}` : ""}`,
      again.code === 0 && output.includes("secrets rotated"),
    );
    await host.waitForHttp(3000, 180_000);
    const login = await appSql(host, "SELECT CURRENT_USER()");
    const env = (
      await host.sshOk(
        `cd ${appDir} && ${nodeBinDir(this.settings.loginHome)}/node -e ` +
          `"process.stdout.write(require('dotenv').parse(require('fs').readFileSync('.env')).DB_PASSWORD)" | sha256sum`,
      )
    ).split(" ")[0];
    figure(
      "host B: after the re-run the app logs in with the new password (from .env)",
      `${login.code === 0 ? login.stdout.trim() : `refused: ${login.stderr.trim()}`}, ` +
        `.env ${env === sha256(rotated.app_db_password) ? "holds" : "does NOT hold"} the new password`,
      login.code === 0 && env === sha256(rotated.app_db_password),
    );
  }

  /** Step 4: no form of any secret put (host A's, the rotated ones) anywhere a secret could leak. */
  async leaksNothing(host: Vm, figure: Figure): Promise<void> {
    const sources: Record<string, string> = {
      "user data": gunzipSync(this.userData).toString("utf8"),
      "stored user data": (await host.ssh(`cat ${STORED_SCRIPT}; gunzip -cf /var/lib/cloud/instance/user-data.txt`))
        .stdout,
      console: host.consoleText(),
      journal: (await host.ssh("journalctl --no-pager -o cat", { timeoutMs: 180_000 })).stdout,
      "cloud-init.log": (await host.ssh("cat /var/log/cloud-init.log")).stdout,
      "cloud-init-output.log": (await host.ssh("cat /var/log/cloud-init-output.log")).stdout,
      "provisioning log": (await host.ssh(`cat ${this.settings.logFile}`)).stdout,
      "ops command": (await host.ssh(`cat ${opsPaths(this.settings).command}`)).stdout,
    };
    const all = forms(this.putValues);
    const leaks = Object.entries(sources)
      .filter(([, text]) => all.some((form) => text.includes(form)))
      .map(([name]) => name);
    const read =
      sources["user data"].includes(this.names.appDbPassword) &&
      sources["provisioning log"].includes("secrets read from Parameter Store");
    figure(
      "host B: secrets (host A's and the rotated ones) anywhere",
      leaks.length
        ? `found in ${leaks.join(", ")}`
        : `none in ${Object.keys(sources).join(", ")}; the user data names the parameters`,
      leaks.length === 0 && read && sources.journal.length > 0,
    );
  }

  /** Closes the SSM client; moto is the boot test's to stop. */
  async stop(): Promise<void> {
    this.ssm.destroy();
  }
}
