/**
 * The ops command in the boot test (host A, after the original stack's checks and kill -9, before the reboot),
 * driven the way an operator drives it: `npm run ops -- <stack> <action>` on this machine, over ssh
 * to the VM's forwarded port as ec2-user (a key of its own, authorized as EC2 does for the key
 * pair), host key checked against the keys cloud-init printed on the console, then sudo.
 * New commits of the test app go to the stand-in git server: a tag v2 whose page says so, and a
 * branch `broken` whose server exits at start. main stays as it was, for the hosts booted later.
 */
import { spawn } from "child_process";
import { createHash } from "crypto";
import { readFileSync, writeFileSync } from "fs";
import { dirname, join } from "path";
import { loadStackSettings } from "../../settings/stack-settings";
import { opsPaths } from "../../userdata/ops";
import { OPS_INSTALLER, renderOpsTool, renderOpsToolBody, shellQuote, stampOpsTool } from "../../userdata";
import { underLoad } from "./load";
import { CommandResult, run, Vm } from "./vm";
import { HOST_FILES } from "../../settings/host-layout";

const SETTINGS_FILE = join(__dirname, "settings.json");
/** What release v2 adds to the app's page. */
const V2_LINE = "RELEASE v2";

export interface OpsScenarioContext {
  readonly vm: Vm;
  /** The test's private directory (the stand-in repositories are in its repos/). */
  readonly work: string;
  /** Records a row of the test's figures; throws when it is not ok. */
  readonly figure: (name: string, value: string, ok: boolean) => void;
  /** Every form of every test secret. */
  readonly secretForms: () => string[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** A run's whole output. */
const all = (result: CommandResult) => `${result.stdout}\n${result.stderr}`;
/** The last line of a run's output, but sudo's own warnings (the VM's hostname has no DNS). */
const lastLine = (result: CommandResult) =>
  all(result)
    .trim()
    .split("\n")
    .filter((line) => line && !line.startsWith("sudo:"))
    .pop() ?? "";

/** git in a clone of the stand-in repository. */
async function git(args: string[], cwd?: string): Promise<string> {
  const result = await run("git", [
    ...(cwd ? ["-C", cwd] : []),
    "-c",
    "user.name=Boot Test",
    "-c",
    "user.email=boot@example.com",
    ...args,
  ]);
  if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout.trim();
}

/** The local command as the boot test runs it against the VM: `npm run ops -- <stack> --host … --identity … --known-hosts … <args>`. */
export type OpsCommand = (args: string[], env?: NodeJS.ProcessEnv) => Promise<CommandResult>;
/** The operator's side of one VM: `npm run ops` with these arguments (argv) and environment, or run at once. */
export interface Operator {
  readonly argv: (args: string[]) => string[];
  readonly env: NodeJS.ProcessEnv;
  readonly run: OpsCommand;
}

/**
 * The local command against `vm`, as an operator runs it: ec2-user's key, as EC2 installs the key pair's
 * public half, and the host's keys as cloud-init printed them, written into `work` (host A's scenarios, and
 * host D's db-setup); `settingsFile` is the command's CRM_SETTINGS.
 */
export async function operatorCommand(
  vm: Vm,
  work: string,
  settingsFile: string,
  figure: OpsScenarioContext["figure"],
  label = "ops",
): Promise<Operator> {
  const stack = loadStackSettings(settingsFile);
  const settings = stack.provisioning;
  const key = join(work, "ops-key");
  const keygen = await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "crm-ops-boot-test", "-f", key]);
  if (keygen.code !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr}`);
  const home = settings.loginHome;
  await vm.sshOk(
    `install -d -m 700 -o ${settings.loginUser} -g ${settings.loginUser} ${home}/.ssh && ` +
      `cat >>${home}/.ssh/authorized_keys && chown ${settings.loginUser}: ${home}/.ssh/authorized_keys && chmod 600 ${home}/.ssh/authorized_keys`,
    { input: readFileSync(`${key}.pub`) },
  );
  const printed = vm
    .consoleText()
    .match(/-----BEGIN SSH HOST KEY KEYS-----\r?\n([\s\S]*?)-----END SSH HOST KEY KEYS-----/);
  const hostKeys = printed
    ? printed[1].split(/\r?\n/).filter((line) => /^(ssh|ecdsa)-\S+ \S+/.test(line))
    : (await vm.sshOk("cat /etc/ssh/ssh_host_*_key.pub")).trim().split("\n");
  const knownHosts = join(work, "ops-known-hosts");
  writeFileSync(
    knownHosts,
    hostKeys.map((line) => `[127.0.0.1]:${vm.hostPort(22)} ${line.split(" ").slice(0, 2).join(" ")}\n`).join(""),
  );
  figure(
    `${label}: host keys for known_hosts`,
    `${hostKeys.length} from ${printed ? "the console (cloud-init)" : "the host's files (not on the console)"}`,
    hostKeys.length > 0,
  );
  const argv = (args: string[]) => [
    "run",
    "--silent",
    "ops",
    "--",
    stack.stackName,
    // The options before the action: what follows `run --` is the operator's command, options and all.
    "--host",
    "127.0.0.1",
    "--port",
    String(vm.hostPort(22)),
    "--identity",
    key,
    "--known-hosts",
    knownHosts,
    ...args,
  ];
  const env = { ...process.env, CRM_SETTINGS: settingsFile };
  return {
    argv,
    env,
    run: (args, extra = {}) => run("npm", argv(args), { env: { ...env, ...extra }, timeoutMs: 15 * 60_000 }),
  };
}

/** The scenarios; resolves with the local command, ready for the everyday rows (everyday-scenarios.ts). */
export async function opsScenarios({ vm, work, figure, secretForms }: OpsScenarioContext): Promise<OpsCommand> {
  const stack = loadStackSettings(SETTINGS_FILE);
  const settings = stack.provisioning;
  const ops = opsPaths(settings);
  const outputs: string[] = [];

  const operator = await operatorCommand(vm, work, SETTINGS_FILE, figure);
  /** The local command, as an operator runs it; every output kept for the secrets row. */
  const command: OpsCommand = async (args, env = {}) => {
    const result = await operator.run(args, env);
    outputs.push(result.stdout + result.stderr);
    return result;
  };
  const opsCommand = (...args: string[]) => command(args);
  const page = async (port: number) => (await vm.httpGet(port, "/", 10_000))?.body ?? "";
  const current = async () =>
    (await vm.sshOk(`readlink ${settings.appDir} || echo plain`)).trim().split("/").pop() ?? "";

  // The new commits, pushed to the stand-in server's repository (main untouched).
  const clone = join(work, "ops-clone");
  await git(["clone", "--quiet", join(work, "repos", new URL(settings.repoUrl).pathname), clone]);
  const serverJs = readFileSync(join(clone, "server.js"), "utf8");
  writeFileSync(join(clone, "server.js"), serverJs.replace('...rows, ""', `...rows, "${V2_LINE}", ""`));
  if (!readFileSync(join(clone, "server.js"), "utf8").includes(V2_LINE))
    throw new Error("the test app's page could not be changed");
  await git(["commit", "--quiet", "-am", "v2: the page says so"], clone);
  await git(["tag", "v2"], clone);
  await git(["checkout", "--quiet", "-b", "broken", "main"], clone);
  writeFileSync(join(clone, "server.js"), `console.error("crm: cannot start"); process.exit(3);\n${serverJs}`);
  await git(["commit", "--quiet", "-am", "broken: exits at start"], clone);
  // A branch whose server runs and never listens: its health check waits out HEALTH_SECONDS.
  await git(["checkout", "--quiet", "-b", "silent", "main"], clone);
  writeFileSync(join(clone, "server.js"), "setInterval(() => undefined, 1000);\n");
  await git(["commit", "--quiet", "-am", "silent: never answers"], clone);
  await git(["push", "--quiet", "origin", "v2", "broken", "silent"], clone);

  const status = await opsCommand("status");
  figure(
    "ops status (local command, ssh, sudo)",
    `exit ${status.code}, ${status.stdout.split("\n").find((l) => l.startsWith("answer:")) ?? lastLine(status)}`,
    status.code === 0 && /answer: HTTP 200/.test(status.stdout),
  );
  await upgradeRows(vm, ops, opsCommand, figure);

  // The host was launched without the front (its user data has none without a domain): the tool's first changing
  // action installs it (ensure_front), here a restart with no load (connections opened straight to the app before it
  // end at that restart: docs/operations.md). From then on every request from outside passes through Caddy.
  const first = await opsCommand("restart");
  const frontStatus = await opsCommand("status");
  await page(3000);
  const counted = await vm.sshOk(
    `nft list chain inet ${settings.appName}_front to_front | grep -o 'packets [0-9]*' | paste -sd, - || true`,
  );
  const caddyActive = (await vm.ssh("systemctl is-active caddy.service")).stdout.trim();
  figure(
    "front: installed by the tool's first action (restart)",
    `exit ${first.code}, caddy ${caddyActive}, ` +
      `${frontStatus.stdout.split("\n").find((l) => l.startsWith("front:")) ?? "no front line"}, redirect ${counted.trim() || "none"}`,
    first.code === 0 &&
      caddyActive === "active" &&
      /^front: open$/m.test(frontStatus.stdout) &&
      /packets [1-9]/.test(counted),
  );

  // The same load with no action running: what the emulated host serves by itself, against which the actions' rows read.
  await underLoad(vm, "no action, 15 s", figure, () => new Promise((resolve) => setTimeout(resolve, 15_000)));

  // A good release, what users saw of it from outside, and a second release refused while it runs.
  const before = await current();
  const started = Date.now();
  let refused: CommandResult | undefined;
  // The gap is the front's hold: the app's stop and start after the switch (7.3 s with the VM alone on the machine,
  // 23.1 s beside the other phases of npm test). The bound is no timing goal: it fails a release that takes the app
  // down before its build (over a minute here: the requests would wait as long, or fail after 60 s).
  const released = await underLoad(
    vm,
    "release v2",
    figure,
    async () => {
      const release = opsCommand("release", "v2");
      const deadline = Date.now() + 10 * 60_000;
      while (Date.now() < deadline) {
        const holder = await vm.ssh(`cat ${ops.lockFile}`);
        if (holder.stdout.startsWith("release v2 by ")) {
          refused = await opsCommand("release", "main");
          break;
        }
        if (await Promise.race([release.then(() => true), new Promise((r) => setTimeout(() => r(false), 500))])) break;
      }
      return release;
    },
    (seen) => seen.longestGapMs <= 45_000,
  );
  const took = Date.now() - started;
  const after = await current();
  figure(
    "ops release v2",
    `exit ${released.code} in ${seconds(took)}, ${before} -> ${after}: ${lastLine(released)}`,
    released.code === 0 && before === "plain" && /^0002-[0-9a-f]{7}$/.test(after),
  );
  figure(
    "concurrent release refused",
    refused ? `exit ${refused.code}: ${lastLine(refused)}` : "the release ended before a second could be tried",
    refused?.code === 75 && /busy: release v2 by ec2-user/.test(all(refused)),
  );
  for (const port of [3000, 80]) {
    const body = await page(port);
    figure(
      `release v2 served on port ${port}`,
      body.includes(V2_LINE) ? "new content" : "old content",
      body.includes(V2_LINE) && body.includes("customer 1"),
    );
  }

  // A release whose server exits at start: rolled back by itself.
  const broken = await underLoad(vm, "release broken", figure, () => opsCommand("release", "broken"));
  const v2Body = await page(3000);
  figure(
    "ops release broken (server exits at start)",
    `exit ${broken.code}: ${all(broken)
      .split("\n")
      .filter((l) => /exited|did not answer/.test(l))
      .map((l) => l.replace(/^\S+ \S+ /, ""))
      .join("; ")}`,
    broken.code === 3 &&
      /the server exited with status 3/.test(all(broken)) &&
      /did not answer; 0002-\w{7} serves again/.test(all(broken)) &&
      (await current()) === after &&
      v2Body.includes(V2_LINE),
  );

  const releases = await opsCommand("releases");
  const listed = releases.stdout.split("\n").filter(Boolean);
  figure(
    "ops releases",
    listed.join(" | "),
    releases.code === 0 &&
      listed.length === 2 &&
      listed[1].startsWith(`* ${after} `) &&
      listed[0].startsWith("  0001-"),
  );

  const back = await underLoad(vm, "rollback", figure, () => opsCommand("rollback"));
  const backBody = await page(80);
  const forward = await underLoad(vm, "rollback <release>", figure, () => opsCommand("rollback", after));
  figure(
    "ops rollback, then rollback <release>",
    `exit ${back.code} (v2 ${backBody.includes(V2_LINE) ? "still" : "no longer"} served), exit ${forward.code} (${(await page(80)).includes(V2_LINE) ? "v2" : "not v2"} served)`,
    back.code === 0 &&
      !backBody.includes(V2_LINE) &&
      backBody.includes("customer 1") &&
      forward.code === 0 &&
      (await current()) === after,
  );

  // Memory: what runs at once during a switch beside MariaDB: Caddy and one app (the restart stops the old
  // server before it starts the new one; the build's yarn ends before the switch). Peak resident sizes since each
  // process started (VmHWM): Caddy's through every action above, the app's and MariaDB's of the current processes.
  const peaks = await vm.sshOk(
    "for p in caddy node mariadbd; do pid=$(pgrep -o -x $p) && echo \"$p $(awk '/^VmHWM/ {print $2}' /proc/$pid/status)\"; done; " +
      "awk '/^MemTotal/ {print \"total\", $2}' /proc/meminfo",
  );
  const kib = Object.fromEntries(
    peaks
      .trim()
      .split("\n")
      .map((line) => line.split(" "))
      .map(([name, value]) => [name, Number(value)]),
  );
  const mib = (name: string) => `${((kib[name] ?? 0) / 1024).toFixed(0)} MiB`;
  figure(
    "memory: peak resident size (VmHWM) of what runs during a switch",
    `caddy ${mib("caddy")}, node ${mib("node")}, mariadbd ${mib("mariadbd")}, ` +
      `together ${(((kib.caddy ?? 0) + (kib.node ?? 0) + (kib.mariadbd ?? 0)) / 1024).toFixed(0)} MiB of the t3.micro's 1024 (this VM: ${mib("total")})`,
    kib.caddy > 0 && kib.node > 0 && kib.mariadbd > 0 && kib.caddy + kib.node + kib.mariadbd < 1024 * 1024,
  );

  await vm.sshOk(": >/var/log/dnf-shim.log");
  const patch = await opsCommand("patch");
  const dnf = (await vm.sshOk("cat /var/log/dnf-shim.log"))
    .trim()
    .split("\n")
    .map((line) => line.replace(/^\S+ /, ""));
  figure(
    "ops patch: dnf stand-in calls",
    `exit ${patch.code}: ${dnf.join("; ")}`,
    patch.code === 0 &&
      dnf.join("; ") === "dnf check-release-update; dnf -y upgrade --releasever=latest; dnf needs-restarting -r" &&
      (await page(3000)).includes(V2_LINE),
  );

  // reprovision on a healthy host: what the first run settled stays (.env, rows, unit, release).
  const settled =
    `sha256sum ${settings.appDir}/.env ${HOST_FILES.unitDirectory}/${settings.appName}.service | cut -d' ' -f1; ` +
    `readlink ${settings.appDir}; mariadb --batch ${settings.databaseName} -e 'SELECT * FROM customers ORDER BY id' | sha256sum`;
  const settledBefore = await vm.sshOk(settled);
  const reprovision = await opsCommand("reprovision");
  const settledAfter = await vm.sshOk(settled);
  figure(
    "ops reprovision on a healthy host",
    `exit ${reprovision.code}, ${all(reprovision).includes("not pulling") ? "release kept (not pulling)" : "PULLED"}, ` +
      `.env, unit, release and rows ${settledAfter === settledBefore ? "unchanged" : "CHANGED"}`,
    reprovision.code === 0 &&
      settledAfter === settledBefore &&
      all(reprovision).includes(`${settings.appDir} is a release of ${ops.command}: not pulling`),
  );

  const auditLog = await vm.sshOk(`cat ${ops.auditLog}`);
  // The actions' lines (the installs of the tool are upgradeRows'), each naming the tool that wrote it.
  const actions = auditLog
    .trim()
    .split("\n")
    .filter((line) => !/ install-tool: /.test(line));
  figure(
    "ops audit log",
    `${actions.length} action lines, last: ${actions[actions.length - 1].replace(/^\S+ /, "")}`,
    actions.length === 8 &&
      actions.every((line) => / ec2-user /.test(line) && / \(tool [0-9a-f]{12}\)$/.test(line)) &&
      /reprovision: 0002-\w{7} -> 0002-\w{7}: ok \(tool [0-9a-f]{12}\)$/.test(actions[7]),
  );
  // A bad release whose ssh session drops during its health check: the local command (npm run ops, ssh) killed once
  // the switch is recorded; the action goes on in its unit, puts the previous release back, and says so (its output
  // gone with the session, its next write may end it with SIGPIPE first: the same outcome, said so).
  const beforeSilent = await current();
  const auditBefore = auditLog.trim().split("\n").length;
  const session = spawn("npm", operator.argv(["release", "silent"]), {
    env: operator.env,
    stdio: "ignore",
    detached: true,
  });
  let dropped = false;
  try {
    const until = Date.now() + 10 * 60_000;
    while (Date.now() < until && session.exitCode === null) {
      if (/^unverified /m.test((await vm.ssh(`cat ${ops.stateFile}`)).stdout)) {
        process.kill(-session.pid!, "SIGKILL");
        dropped = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    if (session.exitCode === null && !dropped) process.kill(-session.pid!, "SIGKILL");
  }
  let silentLine = "";
  for (const until = Date.now() + 10 * 60_000; Date.now() < until;) {
    const lines = (await vm.sshOk(`cat ${ops.auditLog}`)).trim().split("\n");
    if (lines.length > auditBefore) {
      silentLine = lines[lines.length - 1].replace(/^\S+ /, "");
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  const silentBody = await page(3000);
  figure(
    "ops release silent, its ssh session dropped during the health check",
    `${dropped ? "session killed at the switch" : "the switch never came"}; ` +
      `${silentLine || "no audit line"}; ${await current()} serves ${silentBody.includes(V2_LINE) ? "v2" : "NOT v2"}`,
    dropped &&
      new RegExp(
        `release silent: ${beforeSilent} -> ${beforeSilent}: \\d{4}-\\w{7} (did not answer|was interrupted by SIG(PIPE|HUP)); ${beforeSilent} serves again \\(exit 3\\) \\(tool [0-9a-f]{12}\\)$`,
      ).test(silentLine) &&
      (await current()) === beforeSilent &&
      silentBody.includes(V2_LINE),
  );

  const forms = secretForms();
  const leaked = [...outputs, auditLog].some((text) => forms.some((form) => text.includes(form)));
  figure(
    "ops: secrets in the local command's output and the audit log",
    leaked
      ? "found"
      : `none (${outputs.length} runs, sha256 of the outputs ${createHash("sha256").update(outputs.join("")).digest("hex").slice(0, 12)})`,
    !leaked,
  );
  return command;
}

/**
 * The ops tool's upgrade path on the booted host: an older rendering of the tool (this one without `releases`) installed
 * through the installer, then the current CLI's `releases`, which installs its own tool first; then two updates
 * that fail (the tool's copy cut off half way, its file system full) leave the older tool answering `status`,
 * and the next CLI call updates it.
 */
async function upgradeRows(
  vm: Vm,
  ops: ReturnType<typeof opsPaths>,
  opsCommand: (...args: string[]) => Promise<CommandResult>,
  figure: OpsScenarioContext["figure"],
): Promise<void> {
  const current = renderOpsTool();
  const olderBody = renderOpsToolBody().replace("\nops_releases() {", "\nops_releases_removed() {");
  const older = { text: stampOpsTool(olderBody), version: stampOpsTool(olderBody).split("\n")[1].split("=")[1] };
  const install = (text: string, version: string) =>
    vm.ssh(
      `bash -c ${shellQuote(OPS_INSTALLER)} ops-install ${version} ${ops.command} ${ops.lockFile} ` +
        `${ops.auditLog} root`,
      { input: text, timeoutMs: 60_000 },
    );
  const hostTool = async () => /^tool: (\S+)$/m.exec((await vm.ssh(`${ops.command} status`)).stdout)?.[1] ?? "none";
  const short = (version: string) => version.slice(0, 12);

  const installed = await install(older.text, older.version);
  const oldRuns = await vm.ssh(`${ops.command} releases`);
  figure(
    "upgrade: an older tool (no releases action) installed",
    `exit ${installed.code}, host tool ${await hostTool()}, its releases: exit ${oldRuns.code}`,
    installed.code === 0 && (await hostTool()) === short(older.version) && oldRuns.code !== 0,
  );
  const releases = await opsCommand("releases");
  const audit = (await vm.sshOk(`cat ${ops.auditLog}`)).trim().split("\n").pop() ?? "";
  figure(
    "upgrade: the current CLI's releases on it",
    `exit ${releases.code}, ${
      releases.stderr
        .trim()
        .split("\n")
        .find((l) => l.includes("host tool")) ?? "no update said"
    }; ` + `audit: ${audit.replace(/^\S+ /, "")}`,
    releases.code === 0 &&
      releases.stderr.includes(`ops: host tool ${short(older.version)} -> ${short(current.version)}`) &&
      /^\* /m.test(releases.stdout) &&
      audit.includes(`install-tool: ${short(older.version)} -> ${short(current.version)}: ok`),
  );

  await install(older.text, older.version);
  const cut = await install(current.text.slice(0, Math.floor(current.text.length / 2)), current.version);
  figure(
    "upgrade: the tool's copy cut off half way",
    `exit ${cut.code}, ${cut.stderr.trim()}; host tool ${await hostTool()}`,
    cut.code === 1 && (await hostTool()) === short(older.version),
  );
  // The tool's file system full (16 KiB left, less than the tool), then freed. Not the root file system filled: space
  // comes back there when a write meets the full disk (XFS's speculative preallocation; the logs' writers), and in two
  // runs the tool's copy then fitted, once even after a first write had made XFS give its preallocation back. A tmpfs
  // over the tool's directory, holding what it holds and then filled, runs out for the installer; unmounted, the
  // directory is as it was.
  const directory = dirname(ops.command);
  await vm.sshOk(
    `set -e; copy=$(mktemp -d); cp -a ${directory}/. "$copy"; mount -t tmpfs -o size=$(( $(du -sk "$copy" | cut -f1) + 1024 ))k,mode=755 ops-full ${directory}; ` +
      `cp -a "$copy"/. ${directory}; rm -rf "$copy"; fallocate -l $(( $(df --output=avail -B1 ${directory} | tail -n 1) - 16384 )) ${directory}/.ops-fill`,
    { timeoutMs: 60_000 },
  );
  const full = await opsCommand("status");
  const kept = await hostTool();
  // Lazily: a script of the directory may be running (the telemetry timer's), and keeps its copy until it ends.
  await vm.sshOk(`umount --lazy ${directory}`);
  const next = await opsCommand("status");
  figure(
    "upgrade: a full disk, then the next call",
    `full: exit ${full.code}, ${lastLine(full)}, host tool ${kept}; freed: exit ${next.code}, host tool ${await hostTool()}`,
    full.code !== 0 &&
      /No space left on device/.test(full.stderr) &&
      kept === short(older.version) &&
      next.code === 0 &&
      (await hostTool()) === short(current.version),
  );
}
