/**
 * A stand-in instance for running the provisioning script (userdata/) for real, as root, without
 * touching the machine: a private MariaDB server, a private git repository served over https with
 * basic auth by `git http-backend`, a stand-in IMDSv2 metadata service, and recording stand-ins on
 * PATH for dnf, systemctl, the swap commands, curl (only for the nvm installer) and the mariadb client
 * (and yarn, which fails on a package.json that is not JSON, as the real one does): shell files in
 * __tests__/support/stand-ins, which shellcheck reads. The host's own paths (HOST_FILES) lie under the
 * harness's directory too (relocateHostFiles).
 *
 * This file composes the parts, one stand-in per module of __tests__/support/harness/ (the TypeScript; the
 * shell files the commands' stand-in copies are in __tests__/support/stand-ins/): metadata-service.ts,
 * source-host.ts, database.ts, journal.ts, stand-in-commands.ts; faults.ts, host-files.ts and shared.ts
 * (tools, child processes, servers) beside them. It re-exports what the tests import.
 *
 *   const h = await ProvisioningHarness.start({ sourceHostToken });
 *   const result = await h.run(renderProvisioningScript(h.settings, secrets));
 *   await h.query("SELECT 1"); await h.canLogin(user, password);
 *   await h.stop();
 *
 * Faults: `h.fault = "step_05_create_database"` makes the stand-in that step relies on fail (until
 * `h.fault = undefined`); `h.fault = "kill:step_09_import_database"` kills the whole script, with
 * SIGKILL, in the middle of that step (steps 8, 9 and 11). See FAULTS.
 *
 * The ops command (`{ app: true }`): the app's unit runs the checkout's server.js for real (with this
 * Node.js, on `h.appPort`), restarting it as systemd's Restart=always does; `h.runCommand(h.opsCommand,
 * ["release", "v2"])` runs the command the script installed, as root, with the same stand-ins.
 */
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { ChildProcess, spawn, spawnSync } from "child_process";
import { randomBytes } from "crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "fs";
import { tmpdir, userInfo } from "os";
import { delimiter, dirname, join } from "path";
import { gzipSync } from "zlib";
import { APP_PORT } from "../../settings/ports";
import { NETWORK_RETRY_PAUSE_SECONDS, USER_DATA_COPY } from "../../userdata/constants";
import { opsPaths } from "../../userdata/ops";
import { OPS_INSTALLER, renderOpsToolBody, stampOpsTool } from "../../userdata/ops-tool";
import { HOST_FILE_VARIABLES } from "../../userdata/script";
import { HostFiles } from "../../settings/host-layout";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { gitExecPath } from "./git-http";
import { HarnessDatabase } from "./harness/database";
import { Fault } from "./harness/faults";
import { hostFilesUnder, relocateHostFiles } from "./harness/host-files";
import { Journal } from "./harness/journal";
import { MetadataService, TEST_REGION } from "./harness/metadata-service";
import { modulesNamed, namedModule } from "./harness/module-parameters";
import { exec, findTool, killGroup, RecordedRequest, ReservedPort, reservedPort, shq, tool } from "./harness/shared";
import { SourceHost, SourceHostRequest } from "./harness/source-host";
import { STAND_IN_CADDY_URL, StandInCommands } from "./harness/stand-in-commands";

// What the tests import from here.
export { nativePasswordHash } from "./harness/database";
export { FAULTS } from "./harness/faults";
export type { Fault } from "./harness/faults";
export { hostFilesUnder, relocateHostFiles } from "./harness/host-files";
export { JOURNAL_REMOTE } from "./harness/journal";
export {
  TEST_INSTANCE_ID,
  TEST_PUBLIC_HOSTNAME,
  TEST_PUBLIC_IP,
  TEST_REGION,
  TEST_ROLE_NAME,
} from "./harness/metadata-service";
export { findTool, tool } from "./harness/shared";
export { startedUnitCalls } from "./harness/stand-in-commands";
export type { RecordedRequest } from "./harness/shared";

/** Commands the harness needs from the machine (mariadbd lives in /usr/sbin on Debian). */
const TOOLS = [
  "bash",
  "mariadbd",
  "mariadb-install-db",
  "mariadb",
  "mariadb-dump",
  "git",
  "openssl",
  "curl",
  "runuser",
  "base64",
  "od",
  "cmp",
  "mkswap",
  "blkid",
  "flock",
  "python3",
];

export interface RunResult {
  /** Exit code of the script (null when it was killed). */
  readonly exitCode: number | null;
  /** stdout and stderr of the script, interleaved as written. */
  readonly output: string;
  /** All stand-in calls recorded so far (all runs), one line each: `<command> <args…>`. */
  readonly calls: string[];
  /** The stand-in calls recorded during this run only. */
  readonly newCalls: string[];
  readonly durationMs: number;
}

export interface HarnessOptions {
  /** The token the git server accepts (as the password of basic auth). Default: a random one. */
  readonly sourceHostToken?: string;
  /** Application name used in the settings. Default: `crm-test`. */
  readonly appName?: string;
  /**
   * The database as on an instance with a data volume: not started by the harness, but by the
   * script's `systemctl start mariadb` (the stand-in starts the real server on `host.databaseDir`,
   * creating a data directory only when there is none, as the distribution's unit does), and the
   * script runs in a private mount namespace, where its mounts live as long as that server.
   * Default: false (the harness starts the server on a directory of its own before the script).
   */
  readonly databaseOnDataVolume?: boolean;
  /** `dataVolumeWaitSeconds` of the settings. Default: 5. */
  readonly dataVolumeWaitSeconds?: number;
  /**
   * Parameter Store mode (`"secrets": "parameter-store"`): the AWS service endpoint (moto's server) that the
   * `aws` stand-in hands to the machine's real AWS CLI, which gets its credentials from the metadata stand-in.
   * Default: none (the secrets are in the user data).
   */
  readonly awsEndpoint?: string;
  /**
   * The scale-out topology (`"topology": "scale-out"`, which needs `awsEndpoint`): no server of the
   * harness's own; the script's mariadb calls reach the database it is given, such as a DatabaseServer
   * standing in for RDS, over TCP (the script's own MYSQL_HOST and MYSQL_TCP_PORT, from its header).
   * Default: false (a server of the harness's own, on a Unix socket).
   */
  readonly remoteDatabase?: boolean;
  /**
   * The app runs: `systemctl start|restart|stop <app>.service` (and `enable --now`) run the checkout's
   * server.js with this Node.js on `appPort` (the script's APP_PORT is rewritten to it), restarted
   * RESTART_SEC after it exits as Restart=always does; `systemctl show` reports its state. The script's
   * cloud-init copy of the user data (USER_DATA_COPY) is rewritten to `userDataCopy`. Default: false.
   */
  readonly app?: boolean;
}

/** Name of the database unit the script starts (userdata/constants.ts). */
const DATABASE_UNIT = "mariadb";

/**
 * The actions' lines of an audit log (ops.sh: audit_line), each without the version of the tool that wrote it, which
 * every line must end with (`(tool <12 hex digits>)`); the installer's lines (install-tool) left out.
 */
export function actionAuditLines(file: string): string[] {
  // An app command's output (a release's build and release commands: userdata/ops.sh, app_output) is no action's line.
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter((line) => !/ install-tool: /.test(line) && !/^\S+ \| /.test(line))
    .map((line) => {
      if (!/ \(tool [0-9a-f]{12}\)$/.test(line))
        throw new Error(`the audit line does not name its tool's version: ${line}`);
      return line.replace(/ \(tool [0-9a-f]{12}\)$/, "");
    });
}

export class ProvisioningHarness {
  /** Commands this harness needs that are missing on this machine (empty when it can run). */
  static toolsMissing(): string[] {
    const missing = TOOLS.filter((name) => !findTool(name));
    if (findTool("git") && !existsSync(join(gitExecPath(), "git-http-backend"))) missing.push("git-http-backend");
    return missing;
  }

  /**
   * What the data-volume mode needs besides the usual tools: util-linux's namespace, loop-device
   * and mount tools, mkfs.xfs, and a loop device this machine lets root attach.
   */
  static dataVolumeToolsMissing(): string[] {
    const missing = ["unshare", "losetup", "blkid", "mountpoint", "findmnt", "mkfs.xfs", "mkfs.ext4"].filter(
      (name) => !findTool(name),
    );
    if (missing.length === 0 && spawnSync(tool("losetup"), ["--find"]).status !== 0)
      missing.push("a free loop device (losetup --find)");
    return missing;
  }

  /** Starts everything; on failure, stops what was started and rethrows. */
  static async start(options: HarnessOptions = {}): Promise<ProvisioningHarness> {
    const harness = new ProvisioningHarness(options);
    try {
      await harness.startAll();
    } catch (error) {
      await harness.stop();
      throw error;
    }
    return harness;
  }

  /** Temporary directory holding everything (removed by stop()). */
  readonly dir: string;
  /** The stand-ins: the metadata service, the source host, the database, the journal and the commands on PATH. */
  private readonly metadata: MetadataService;
  private readonly source: SourceHost;
  private readonly database: HarnessDatabase;
  private readonly journal: Journal;
  private readonly commands: StandInCommands;

  private readonly appName: string;
  private readonly databaseOnDataVolume: boolean;
  private readonly dataVolumeWaitSeconds: number;
  private readonly awsEndpoint?: string;
  /** moto's Parameter Store, for the modules (with `awsEndpoint`). */
  private ssm?: SSMClient;
  private readonly remoteDatabase: boolean;
  private readonly app: boolean;
  /** The port the app listens on (app mode). */
  appPort = 0;
  /** The app's port, held for this harness (reservedPort): the app leaves it at each restart. */
  private appPortHold?: ReservedPort;
  private readonly socket: string;
  /** Private temporary directory of this harness's MariaDB and scripts: nothing shares the machine's /tmp. */
  private readonly tmp: string;
  private stopped = false;
  private scriptPid?: number;
  /** The numbers of the header the last run() shortened (its `header` option): the tool's constants take them too. */
  private header: Record<string, number> = {};

  private constructor(options: HarnessOptions) {
    // Not under /tmp: settings refuse a swap file there (a tmpfs on Amazon Linux 2023), and the
    // harness's settings must be valid ones.
    this.dir = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "crm-provision-"));
    this.appName = options.appName ?? "crm-test";
    this.databaseOnDataVolume = options.databaseOnDataVolume ?? false;
    this.dataVolumeWaitSeconds = options.dataVolumeWaitSeconds ?? 5;
    this.awsEndpoint = options.awsEndpoint;
    this.remoteDatabase = options.remoteDatabase ?? false;
    if (this.remoteDatabase && !this.awsEndpoint)
      throw new Error("remoteDatabase needs awsEndpoint: the scale-out topology reads its secrets from AWS");
    this.app = options.app ?? false;
    this.socket = join(this.dir, "mysqld.sock");
    this.tmp = join(this.dir, "tmp");
    this.commands = new StandInCommands(this.dir);
    const fault = () => this.commands.fault;
    this.metadata = new MetadataService(fault);
    this.source = new SourceHost({
      dir: this.dir,
      token: options.sourceHostToken ?? randomBytes(16).toString("hex"),
      fault,
      killScript: () => this.killScript(),
    });
    this.database = new HarnessDatabase({
      dir: this.dir,
      socket: this.socket,
      tmp: this.tmp,
      onDataVolume: this.databaseOnDataVolume,
    });
    this.journal = new Journal(this.dir);
  }

  /** The token the git server accepts (a test may change it: a rotated token). */
  get sourceHostToken(): string {
    return this.source.token;
  }

  set sourceHostToken(token: string) {
    this.source.token = token;
  }

  /** Requests the metadata stand-in received, in order. */
  get metadataRequests(): RecordedRequest[] {
    return this.metadata.requests;
  }

  /** Requests the git server received, in order, with the basic-auth user name (or "" when none). */
  get gitRequests(): SourceHostRequest[] {
    return this.source.requests;
  }

  /** Milliseconds the git server waits before answering each request (to watch a clone in progress). */
  get gitDelayMs(): number {
    return this.source.delayMs;
  }

  set gitDelayMs(ms: number) {
    this.source.delayMs = ms;
  }

  /** What the metadata stand-in reports as public-hostname and public-ipv4 (an Elastic IP's association changes both). */
  get publicHostname(): string {
    return this.metadata.publicHostname;
  }

  set publicHostname(hostname: string) {
    this.metadata.publicHostname = hostname;
  }

  get publicIpv4(): string {
    return this.metadata.publicIpv4;
  }

  set publicIpv4(address: string) {
    this.metadata.publicIpv4 = address;
  }

  /** The user data the metadata stand-in serves (`/latest/user-data`): the gzip of the last script run. */
  get userData(): Buffer | undefined {
    return this.metadata.userData;
  }

  set userData(userData: Buffer | undefined) {
    this.metadata.userData = userData;
  }

  /** The host's own paths (HOST_FILES) on this stand-in host: under its temporary directory (see run()). */
  get host(): HostFiles {
    return hostFilesUnder(this.dir);
  }

  /** Settings pointing every instance path into the temporary directory and every address to the stand-ins. */
  get settings(): ProvisioningSettings {
    return {
      appName: this.appName,
      appDir: join(this.dir, "home", "crm-app"),
      repoUrl: this.source.repoUrl,
      databaseName: "crm_test",
      appDbUser: "crm_app",
      gitUser: "CRM 'Deploy' Bot",
      gitEmail: "deploy@example.com",
      loginUser: userInfo().username,
      loginHome: join(this.dir, "home"),
      swapFile: join(this.dir, "swapfile"),
      logFile: join(this.dir, "log", "provisioning.log"),
      metadataEndpoint: this.metadata.endpoint,
      dataMount: join(this.dir, "var", "lib", "crm-data"),
      dataVolumeWaitSeconds: this.dataVolumeWaitSeconds,
      scriptDirectory: join(this.dir, "usr", "local", "sbin"),
      redirectHttpPort: true,
      secrets: this.awsEndpoint ? "parameter-store" : "user-data",
      topology: this.remoteDatabase ? "scale-out" : "single-host",
      healthCheckPath: "/",
      caddyUrl: STAND_IN_CADDY_URL,
      caddySha512: this.commands.caddyRelease.sha512,
    };
  }

  /** The front's set `held`, as the nft stand-in keeps it: none (no front installed), held (an element in it) or open. */
  frontState(): "none" | "held" | "open" {
    const file = this.commands.frontHeldFile;
    if (!existsSync(file)) return "none";
    return readFileSync(file, "utf8").includes("elements = ") ? "held" : "open";
  }

  /** What a boot's nftables service does to the front: it loads the saved ruleset, whose set `held` is empty. */
  firewallAtBoot(): void {
    const file = this.commands.frontHeldFile;
    if (existsSync(file)) writeFileSync(file, "");
  }

  /** The ops command the script installs (app mode or not). */
  get opsCommand(): string {
    return opsPaths(this.settings).command;
  }

  /** Where the script looks for cloud-init's copy of the user data (app mode; absent until a test writes it). */
  get userDataCopy(): string {
    return join(this.dir, "cloud", "user-data.txt");
  }

  /**
   * Makes a block device appear as the EBS volume `volumeId` does on a Nitro instance
   * (`<host.deviceDirectory>/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol…`), as a VM's virtio disk
   * with that serial, or under the attachment's device name (`sdf`) as on Xen instances.
   */
  linkDataVolume(device: string, volumeId: string, as: "nvme" | "virtio" | "sdf" = "nvme"): string {
    const serial = volumeId.replace("-", "");
    const byId = join(this.host.deviceDirectory, "disk", "by-id");
    const link = {
      nvme: join(byId, `nvme-Amazon_Elastic_Block_Store_${serial}`),
      // A VM's virtio disk whose serial is the volume id, as udev names it.
      virtio: join(byId, `virtio-${serial}`),
      sdf: join(this.host.deviceDirectory, "sdf"),
    }[as];
    mkdirSync(join(link, ".."), { recursive: true });
    symlinkSync(device, link);
    return link;
  }

  /** Process id of the database server the script started (databaseOnDataVolume), if it runs. */
  databasePid(): number | undefined {
    return this.database.pid();
  }

  /** A path as the script's mount namespace sees it (through the database server's root). */
  seenByDatabase(path: string): string {
    const pid = this.databasePid();
    if (pid === undefined) throw new Error("the database server is not running");
    return `/proc/${pid}/root${path}`;
  }

  /** The armed fault (see FAULTS), or undefined. */
  get fault(): Fault | undefined {
    return this.commands.fault;
  }

  set fault(fault: Fault | undefined) {
    this.commands.fault = fault;
  }

  /** The private temporary directory (TMPDIR of the scripts run). */
  get tmpDir(): string {
    return this.tmp;
  }

  /** Path of the private MariaDB server's socket. */
  get socketPath(): string {
    return this.socket;
  }

  /**
   * Runs a script with bash as a child process, stand-ins first on PATH; a rendered provisioning script
   * with the host's own paths moved under this harness's directory (relocateHostFiles). `retryPauseSeconds`
   * replaces the pause between the tries of a network step (10 s), for tests whose faults make
   * every try fail.
   */
  async run(
    script: string,
    options: {
      timeoutMs?: number;
      retryPauseSeconds?: number;
      header?: Record<string, number>;
      keepParameters?: boolean;
    } = {},
  ): Promise<RunResult> {
    const { timeoutMs = 90_000, retryPauseSeconds, header = {}, keepParameters = false } = options;
    if (script.includes(`\nreadonly ${HOST_FILE_VARIABLES.unitDirectory}=`)) this.header = header;
    const file = join(this.dir, "provision.sh");
    const rewrite = (from: string, to: string) => {
      if (!script.includes(from)) throw new Error(`the script does not hold ${from.trim()}`);
      script = script.replace(from, to);
    };
    // A rendered provisioning script (not one it installed, such as the refresh script): its host paths move here.
    if (script.includes(`\nreadonly ${HOST_FILE_VARIABLES.unitDirectory}=`))
      script = relocateHostFiles(script, this.dir);
    if (retryPauseSeconds !== undefined)
      rewrite(`PAUSE=${NETWORK_RETRY_PAUSE_SECONDS}\n`, `PAUSE=${retryPauseSeconds}\n`);
    // Numbers of the header (limits and waits) a test shortens: `NAME=<digits>` on a readonly line.
    for (const [name, value] of Object.entries(header)) {
      const found = new RegExp(`^(readonly .*\\b${name}=)[0-9]+\\b`, "m");
      if (!found.test(script)) throw new Error(`the script's header sets no ${name}`);
      script = script.replace(found, `$1${value}`);
    }
    if (this.app) {
      rewrite(`readonly APP_PORT=${APP_PORT} `, `readonly APP_PORT=${this.appPort} `);
      rewrite(`USER_DATA_COPY='${USER_DATA_COPY}'`, `USER_DATA_COPY=${shq(this.userDataCopy)}`);
    }
    if (!keepParameters) await this.putModules(script);
    writeFileSync(file, script, { mode: 0o700 });
    // The instance's user data, as the metadata service serves it: the gzip of the script (base64gzip).
    this.userData = gzipSync(script);
    return this.spawnScript([file], timeoutMs);
  }

  /**
   * Runs a command the script installed as root, with the stand-ins first on PATH; `env` adds variables (SUDO_USER, as
   * sudo sets it). The ops command is the ops tool, which the real installer installs first, as `npm run ops` does
   * (installTool); an install that fails throws.
   */
  async runCommand(
    file: string,
    args: string[],
    options: {
      timeoutMs?: number;
      env?: NodeJS.ProcessEnv;
      control?: (child: ChildProcess) => void;
      input?: string;
    } = {},
  ): Promise<RunResult> {
    if (file === this.opsCommand) {
      const installed = await this.installTool();
      if (installed.exitCode !== 0)
        throw new Error(`the ops tool was not installed (exit ${installed.exitCode}): ${installed.output}`);
    }
    return this.spawnScript([file, ...args], options.timeoutMs ?? 90_000, options.env, options.control, options.input);
  }

  /**
   * This code's ops tool (with the numbers the last run's `header` shortened), or `text`, sent to the real installer
   * (userdata/ops-install.sh) on this host's paths, as `npm run ops` runs it before a host action.
   */
  installTool(
    text = this.opsTool(),
    options: { who?: string; control?: (child: ChildProcess) => void } = {},
  ): Promise<RunResult> {
    const ops = opsPaths(this.settings);
    const version = /^OPS_TOOL_VERSION=([0-9a-f]{64})$/m.exec(text)?.[1] ?? "";
    return this.spawnScript(
      ["-c", OPS_INSTALLER, "ops-install", version, ops.command, ops.lockFile, ops.auditLog, options.who ?? "root"],
      60_000,
      {},
      options.control,
      text,
    );
  }

  /** The ops tool of this code, with the numbers of the last run's `header` (a test's shorter waits and limits). */
  opsTool(body = renderOpsToolBody()): string {
    for (const [name, value] of Object.entries(this.header)) {
      const found = new RegExp(`^(readonly .*\\b${name}=)[0-9]+\\b`, "m");
      if (found.test(body)) body = body.replace(found, `$1${value}`);
    }
    return stampOpsTool(body);
  }

  /**
   * A command line run by bash as root on the stand-in host, as sshd runs the one ssh sends (the ops
   * command's workstation side, scripts/ops-everyday.ts: HostShell): its streams are pipes. The caller
   * bounds its wait.
   */
  shell(command: string): ChildProcess {
    return spawn("bash", ["-c", command], { env: this.scriptEnv(), cwd: "/", stdio: "pipe" });
  }

  /** The environment the scripts and commands run with on the stand-in host. */
  scriptEnv(extraEnv: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      PATH: `${this.commands.binDir}${delimiter}${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: process.env.HOME ?? "/root",
      LANG: "C.UTF-8",
      // mktemp and friends write here, so a test can see what a run leaves behind.
      TMPDIR: this.tmp,
      // The only test-specific variable: git must trust the local server's self-signed certificate.
      GIT_SSL_CAINFO: this.source.certFile,
      ...extraEnv,
    };
  }

  /** Process ids of the transient units the systemd-run stand-in started (each the leader of its own group), by unit name. */
  units(): Map<string, number> {
    return this.commands.units();
  }

  /** Waits (bounded) until no process of any transient unit runs; false when one still runs at the deadline. */
  unitsEnded(timeoutMs = 60_000): Promise<boolean> {
    return this.commands.unitsEnded(timeoutMs);
  }

  private async spawnScript(
    argv: string[],
    timeoutMs: number,
    extraEnv: NodeJS.ProcessEnv = {},
    control?: (child: ChildProcess) => void,
    input?: string,
  ): Promise<RunResult> {
    const env = this.scriptEnv(extraEnv);
    const started = Date.now();
    // With a data volume, the script's mounts stay in a namespace of their own, not on this machine
    // (unshare without --fork execs bash: the same process, the same group).
    const [command, args] = this.databaseOnDataVolume
      ? [tool("unshare"), ["--mount", "--propagation", "private", "bash", ...argv]]
      : ["bash", argv];
    // Its own process group, so that a kill fault (or the timeout) ends the script and everything it started.
    const child = spawn(command, args, {
      env,
      cwd: "/",
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true,
    });
    if (input !== undefined) {
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(input);
    }
    this.scriptPid = child.pid;
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
    control?.(child);
    const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
    const exitCode = await new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    clearTimeout(timer);
    this.scriptPid = undefined;
    const { calls, newCalls } = this.commands.takeCalls();
    return {
      exitCode,
      output: Buffer.concat(chunks).toString("utf8"),
      calls,
      newCalls,
      durationMs: Date.now() - started,
    };
  }

  /** The journal file that the journalctl stand-in reads (created by the first appendJournal). */
  get journalFile(): string {
    return this.journal.file;
  }

  /**
   * Appends entries to the harness's journal as journald writes them (real journal file format, through
   * systemd-journal-remote): each message (one line) from `unit`, one microsecond apart from now on.
   */
  appendJournal(unit: string, messages: readonly string[]): Promise<void> {
    return this.journal.append(unit, messages);
  }

  /** SIGKILL to the running script's process group (a power cut, as far as the script can tell). */
  private killScript(): void {
    killGroup(this.scriptPid);
  }

  /**
   * Back to the state before any run, keeping the servers: no database or app user, no root
   * password (the unix_socket login only, as after installation), an empty home,
   * no unit, swap file, log, temporary file, recorded call or request, and no fault.
   */
  async reset(): Promise<void> {
    await this.query(
      "DROP DATABASE IF EXISTS crm_test; DROP USER IF EXISTS 'crm_app'@'localhost'; " +
        "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket;",
    );
    for (const path of ["home", "etc", "log", "tmp"]) {
      rmSync(join(this.dir, path), { recursive: true, force: true });
      if (path !== "etc") mkdirSync(join(this.dir, path));
    }
    for (const file of ["swapfile", "swapfile.partial"]) {
      rmSync(join(this.dir, file), { force: true });
    }
    // A new host keeps no module (load_modules); the parameters are the deploy's, put again by the next run.
    rmSync(this.host.moduleDirectory, { recursive: true, force: true });
    rmSync(this.parametersDir, { recursive: true, force: true });
    this.commands.reset();
    this.metadata.reset();
    this.source.reset();
  }

  /** Every stand-in call recorded so far. */
  calls(): string[] {
    return this.commands.calls();
  }

  /** Runs SQL as root on the private server (unix socket) and returns the tab-separated rows. */
  query(sql: string): Promise<string> {
    return this.database.query(sql);
  }

  /** True when `user`@localhost can log in with exactly `password` (given through MYSQL_PWD, never argv). */
  canLogin(user: string, password: string): Promise<boolean> {
    return this.database.canLogin(user, password);
  }

  /** Runs SQL as `user` with `password` (through MYSQL_PWD, never argv), as the application does. */
  queryAs(user: string, password: string, sql: string): Promise<string> {
    return this.database.queryAs(user, password, sql);
  }

  /**
   * A reboot of an instance with a data volume (databaseOnDataVolume): the server stops cleanly,
   * its mount namespace goes; then, in a new one, only what the instance keeps acts: the file
   * system table is mounted (`mount --all`, as systemd does at boot) and the database unit starts.
   * The script does not run again. Returns the boot's output.
   */
  async reboot(): Promise<{ code: number; output: string }> {
    if (!this.databaseOnDataVolume) throw new Error("reboot() needs databaseOnDataVolume");
    await this.stopManagedDatabase();
    const boot =
      'set -e; mount --all --fstab "$1"; for m in "$3" "$4"; do findmnt --noheadings --output TARGET,SOURCE,FSTYPE --mountpoint "$m"; done; exec "$2" start';
    const result = await exec(tool("unshare"), [
      "--mount",
      "--propagation",
      "private",
      "bash",
      "-c",
      boot,
      "boot",
      this.host.fstabFile,
      this.commands.databaseControl,
      this.settings.dataMount,
      this.host.databaseDir,
    ]);
    return { code: result.code, output: result.stdout + result.stderr };
  }

  /** Adds a commit to the served repository (to prove that a rerun pulls). */
  commitToRepository(files: Record<string, string>, message: string): Promise<void> {
    return this.source.commitToRepository(files, message);
  }

  /**
   * Adds a commit on top of `base` and pushes it as `ref` (refs/heads/… or refs/tags/…), leaving main
   * as it is; returns its id.
   */
  pushCommit(files: Record<string, string>, message: string, ref: string, base = "main"): Promise<string> {
    return this.source.pushCommit(files, message, ref, base);
  }

  /** Forgets the active swap areas, as a reboot does (the script adds no fstab entry). */
  deactivateSwaps(): void {
    this.commands.deactivateSwaps();
  }

  /** Stops the servers and removes the temporary directory; safe to call twice and after a failed start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.commands.killAll();
    this.ssm?.destroy();
    await this.database.stop();
    await this.source.stop();
    await this.metadata.stop();
    await this.appPortHold?.release();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Stops the server the script started (databaseOnDataVolume) as a stopping instance does:
   * SIGTERM, a clean shutdown, bounded; its mount namespace, and the mounts in it, go with it.
   */
  stopManagedDatabase(): Promise<void> {
    return this.database.stopManaged();
  }

  /** Where the aws stand-in keeps this host's Parameter Store without moto: a file per parameter, by its name. */
  get parametersDir(): string {
    return join(this.dir, "parameters");
  }

  /**
   * Puts the modules the script's header names (HostModules's parameters, as a deploy puts them) in this host's
   * Parameter Store: moto's with `awsEndpoint`, else the aws stand-in's files. A module it does not know throws. `run`
   * puts them first, unless `keepParameters` (a test that changed them after putModules).
   */
  async putModules(script: string): Promise<void> {
    for (const named of modulesNamed(script)) {
      const { name } = named;
      const module = namedModule(named);
      if (this.awsEndpoint) {
        // The SDK, in this process: an AWS CLI per parameter would take seconds from the run's own timing.
        this.ssm ??= new SSMClient({
          region: TEST_REGION,
          endpoint: this.awsEndpoint,
          credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
        });
        await this.ssm.send(
          new PutParameterCommand({ Name: name, Value: module.value, Type: "String", Overwrite: true }),
        );
      } else {
        mkdirSync(dirname(join(this.parametersDir, name)), { recursive: true });
        writeFileSync(join(this.parametersDir, name), module.value);
      }
    }
  }

  private async startAll(): Promise<void> {
    const missing = ProvisioningHarness.toolsMissing();
    if (missing.length > 0) throw new Error(`The provisioning harness needs: ${missing.join(", ")}`);
    for (const sub of ["home", "repos", "tls", "log", "tmp", "etc"]) mkdirSync(join(this.dir, sub));
    if (this.app) {
      this.appPortHold = await reservedPort();
      this.appPort = this.appPortHold.port;
    }
    // Let the runuser'd login user (root here, ec2-user on an instance) reach its home.
    chmodSync(this.dir, 0o755);
    const database = this.databaseOnDataVolume || this.remoteDatabase ? Promise.resolve() : this.database.start();
    await Promise.all([this.source.start(), this.metadata.start()]);
    this.writeStandIns();
    await database;
  }

  /** The stand-in commands, with this harness's paths, ports, tools and modes (their config.sh). */
  private writeStandIns(): void {
    this.commands.write({
      // The scale-out topology's client talks to the database the script names, over TCP.
      DB_SOCKET: this.remoteDatabase ? "" : this.socket,
      DATABASE_UNIT,
      // The data-volume mode: the database's unit starts and stops the real server on the volume's mount.
      DATABASE_CONTROL: this.databaseOnDataVolume ? this.commands.databaseControl : "",
      DATABASE_DIR: this.host.databaseDir,
      PID_FILE: this.database.pidFile,
      DB_ERROR_LOG: this.database.errorLog,
      TMP_DIR: this.tmp,
      REAL_MARIADB_INSTALL_DB: this.databaseOnDataVolume ? tool("mariadb-install-db") : "",
      REAL_MARIADBD: this.databaseOnDataVolume ? tool("mariadbd") : "",
      // The app mode: the app's unit runs server.js for real.
      APP_SERVICE: `${this.appName}.service`,
      UNIT_DIRECTORY: this.host.unitDirectory,
      APP_CONTROL: this.app ? this.commands.appControl : "",
      APP_DIR: this.settings.appDir,
      APP_PORT: this.appPort,
      REAL_AWS: this.awsEndpoint ? tool("aws") : "",
      JOURNAL_FILE: this.journal.file,
      AWS_ENDPOINT: this.awsEndpoint ?? "",
      METADATA_URL: `${this.metadata.endpoint}/`,
      PARAMETERS: this.parametersDir,
    });
  }
}
