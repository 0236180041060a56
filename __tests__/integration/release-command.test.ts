/**
 * A release's build and release commands (the settings buildCommand, releaseCommand and releaseCommandTimeoutSeconds,
 * which `npm run ops` sends with the ref: scripts/ops.ts, releaseWords), run for real by the ops tool (userdata/ops.sh:
 * release_args, app_command) as root against the harness's parts: in the new release's directory, as the login user,
 * with the unit's environment and the release's .env, before the switch; a failure, the bound and a signal to the
 * action each leave the serving release serving, and the audit line says so.
 */
import { ChildProcess } from "child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from "fs";
import { join } from "path";
import { opsPaths, renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { answer } from "../support/app-answer";
import { actionAuditLines, ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";
import { until } from "../support/until";

jest.setTimeout(240_000);

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const TOKEN = "ghp_ReleaseCmdT0ken/+=";
const APP_PASSWORD = "app release-command pass";
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("root release-command pass"),
  appDbPasswordBase64: b64(APP_PASSWORD),
  sourceHostTokenBase64: b64(TOKEN),
};
const server = (answer: string) =>
  `require('http').createServer((q, r) => r.end('${answer}')).listen(process.env.PORT);\n`;
/** Short limits, so that a test waits seconds, not minutes. */
const HEADER = { HEALTH_SECONDS: 6, KEEP_RELEASES: 3, GIT_SECONDS: 8, ATTEMPTS: 2 };

/** A process that still runs: there, and not a zombie waiting to be reaped by whoever inherited it. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

/** A signalled process ends within seconds, not at once: a busy machine schedules it later. */
const ended = (pid: number) => until(`process ${pid} to end`, () => !alive(pid), 10_000).then(() => true);

describeWithTools("a release's build and release commands, run for real", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;
  let ops: ReturnType<typeof opsPaths>;
  let v1 = "";
  const outputs: string[] = [];

  function run(args: string[], control?: (child: ChildProcess) => void): Promise<RunResult> {
    return h.runCommand(ops.command, args, { env: { SUDO_USER: "alice" }, control }).then((result) => {
      outputs.push(result.output);
      return result;
    });
  }
  const current = () => readlinkSync(h.settings.appDir).split("/").pop() ?? "";
  const audit = () => actionAuditLines(ops.auditLog).map((line) => line.replace(/^\S+Z /, ""));
  /** The lines of the ops log that are an app command's output (app_output), without their time. */
  const outputLines = () =>
    readFileSync(ops.auditLog, "utf8")
      .split("\n")
      .filter((line) => /^\S+Z \| /.test(line))
      .map((line) => line.replace(/^\S+Z \| /, ""));
  const leftovers = () => readdirSync(ops.releasesDirectory).filter((name) => !/^\d{4}-[0-9a-f]{7}$/.test(name));

  /** The release that served before the case serves still: the same link, its answer, nothing left of the build, no lock. */
  async function expectV1Serves(): Promise<void> {
    expect(current()).toBe(v1);
    expect((await answer(h.appPort))?.body).toBe("crm v1");
    expect(h.frontState()).toBe("open");
    expect(leftovers()).toEqual([]);
    expect((await run(["status"])).output).not.toMatch(/^(lock|unverified):/m);
  }

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: TOKEN, app: true });
    ops = opsPaths(h.settings);
    const first = await h.run(renderProvisioningScript(h.settings, SECRETS), { header: HEADER, retryPauseSeconds: 0 });
    if (first.exitCode !== 0) throw new Error(first.output);
    await h.pushCommit({ "server.js": server("crm v1") }, "v1", "refs/heads/v1");
    const released = await run(["release", "v1"]);
    if (released.exitCode !== 0) throw new Error(released.output);
    v1 = current();
    await h.pushCommit(
      {
        "server.js": server("crm v2"),
        // What the release command sees, for the test to read in the release it ran in.
        "build.sh": "echo built >built.txt\necho 'the build ran'\n",
        "migrate.sh":
          [
            "test -f built.txt || { echo 'no build before the release command' >&2; exit 9; }",
            '{ echo "pwd=$PWD"; echo "user=$(id -un)"; echo "home=$HOME"; echo "args=$*"; echo "node_env=${NODE_ENV:-}"; echo "path=$PATH";',
            "  grep -q '^DB_PASSWORD=.' .env && echo env=yes; env | sort | sed 's/^/environment: /'; } >ran.txt",
            "echo 'migrated 3 tables'",
            // A secret the command prints (its .env's password) is redacted on the way to the operator and the ops log.
            "sed -n 's/^DB_PASSWORD=/password: /p' .env",
            "echo 'to stderr' >&2",
          ].join("\n") + "\n",
      },
      "v2 with a migration",
      "refs/heads/v2",
    );
  });

  // Each case starts from v1 serving, whatever the case before it left.
  afterEach(async () => {
    if (v1 !== "" && current() !== v1) await run(["rollback", v1]);
  });

  afterAll(async () => {
    if (process.env.OPS_DEBUG) console.log(outputs.join("\n----\n"));
    await h?.stop();
  }, TEARDOWN_MS);

  test("the build command, then the release command, in the new release before the switch, as the app's user with the unit's environment and the .env; their output to the operator and the ops log", async () => {
    const released = await run([
      "release",
      "v2",
      "--build-command=bash build.sh",
      "--release-command=bash migrate.sh 'one arg' $HOME",
      "--command-timeout=60",
    ]);
    expect(released.exitCode).toBe(0);
    const name = current();
    expect(name).toMatch(/^0003-[0-9a-f]{7}$/);
    expect((await answer(h.appPort))?.body).toBe("crm v2");
    const ran = readFileSync(join(ops.releasesDirectory, name, "ran.txt"), "utf8");
    // In the build's directory, before it became the release (and before the switch).
    expect(ran).toContain(`pwd=${join(ops.releasesDirectory, ".new")}\n`);
    expect(ran).toContain(`user=${h.settings.loginUser}\n`);
    expect(ran).toContain(`home=${h.settings.loginHome}\n`);
    // bash -c runs the line: its words and expansions are the shell's, as in a terminal.
    expect(ran).toContain(`args=one arg ${h.settings.loginHome}\n`);
    expect(ran).toContain("node_env=production\n");
    expect(ran).toMatch(/^path=\S*\.nvm\/versions\/node\/v[\d.]+\/bin:/m);
    expect(ran).toContain("env=yes\n");
    // The unit's environment and the login's own variables, nothing of root's (the action's, its secrets').
    const names = ran
      .split("\n")
      .filter((line) => line.startsWith("environment: "))
      .map((line) => line.replace(/^environment: ([^=]*)=.*$/, "$1"));
    expect(
      names.filter(
        (variable) =>
          !["HOME", "USER", "LOGNAME", "NODE_ENV", "PATH", "PWD", "SHLVL", "_", "OLDPWD"].includes(variable),
      ),
    ).toEqual([]);
    expect(ran).not.toContain(TOKEN);
    // The order: the build, the build command, the release command, then the switch.
    expect(released.output).toMatch(
      /building v2 [^]*\$ bash build\.sh\nthe build ran\n[^]*\$ bash migrate\.sh 'one arg' \$HOME\nmigrated 3 tables\n[^]*requests held at the front/,
    );
    // The .env's password, which the command printed, redacted (quoted as the .env holds it).
    expect(released.output).toMatch(/^password: '?\[REDACTED\]'?$/m);
    expect(released.output).toContain("to stderr");
    expect(released.output).not.toContain(APP_PASSWORD);
    expect(outputLines()).toEqual([
      "release v2, build command: $ bash build.sh",
      "release v2, build command: the build ran",
      "release v2, release command: $ bash migrate.sh 'one arg' $HOME",
      "release v2, release command: migrated 3 tables",
      expect.stringMatching(/^release v2, release command: password: '?\[REDACTED\]'?$/),
      "release v2, release command: to stderr",
    ]);
    expect(readFileSync(ops.auditLog, "utf8")).not.toContain(APP_PASSWORD);
    expect(audit().pop()).toBe(`alice release v2: ${v1} -> ${name}: ok`);
    // status's last actions are the audit lines, not the commands' output.
    expect((await run(["status"])).output).not.toMatch(/ \| release v2/);
    expect((await run(["rollback", v1])).exitCode).toBe(0);
    expect(current()).toBe(v1);
  });

  test("a release command that fails: the release ends before its switch, the serving release serves, the audit line says so", async () => {
    const released = await run(["release", "v2", "--release-command=echo 'half a migration'; exit 3"]);
    expect(released.exitCode).toBe(1);
    expect(released.output).toContain(`ERROR: the release command failed (exit 3); ${v1} still serves`);
    expect(released.output).not.toContain("requests held at the front");
    await expectV1Serves();
    expect(audit().pop()).toBe(
      `alice release v2: ${v1} -> -: the release command failed (exit 3); ${v1} still serves (exit 1)`,
    );
    expect(outputLines().slice(-1)).toEqual(["release v2, release command: half a migration"]);
  });

  test("a build command that fails: the release command does not run, the serving release serves", async () => {
    const released = await run(["release", "v2", "--build-command=false", "--release-command=touch /tmp/never-run"]);
    expect(released.exitCode).toBe(1);
    expect(released.output).not.toContain("$ touch");
    await expectV1Serves();
    expect(audit().pop()).toBe(
      `alice release v2: ${v1} -> -: the build command failed (exit 1); ${v1} still serves (exit 1)`,
    );
  });

  test("a release command that outlives its bound: its whole process group ends, the serving release serves, the audit line names the bound", async () => {
    const sleeper = join(h.dir, "sleeper.pid");
    rmSync(sleeper, { force: true });
    const started = Date.now();
    const released = await run([
      "release",
      "v2",
      `--release-command=sleep 300 & echo $! >${sleeper}; wait`,
      "--command-timeout=10",
    ]);
    expect(released.exitCode).toBe(1);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(released.output).toContain(
      `ERROR: the release command did not end within 10 s (releaseCommandTimeoutSeconds); ${v1} still serves`,
    );
    // The command's child too: timeout ends the group.
    expect(await ended(parseInt(readFileSync(sleeper, "utf8"), 10))).toBe(true);
    await expectV1Serves();
    expect(audit().pop()).toBe(
      `alice release v2: ${v1} -> -: the release command did not end within 10 s (releaseCommandTimeoutSeconds); ${v1} still serves (exit 1)`,
    );
  });

  test("SIGTERM to the action during the release command: it ends at once with the command's group, the serving release serves, recorded as it was", async () => {
    const sleeper = join(h.dir, "sleeper.pid");
    rmSync(sleeper, { force: true });
    const release = run(["release", "v2", `--release-command=sleep 300 & echo $! >${sleeper}; wait`]);
    await until(
      "the release command",
      () => existsSync(sleeper) && readFileSync(sleeper, "utf8").trim() !== "",
      60_000,
    );
    const holder = /^lock: release v2 by alice \(pid (\d+), since \S+\)$/m.exec((await run(["status"])).output);
    expect(holder).not.toBeNull();
    const termAt = Date.now();
    process.kill(parseInt(holder![1], 10), "SIGTERM");
    const result = await release;
    expect(Date.now() - termAt).toBeLessThan(15_000);
    expect(result.exitCode).toBe(1);
    if (!(await h.unitsEnded(60_000))) throw new Error("the action's unit still runs");
    expect(await ended(parseInt(readFileSync(sleeper, "utf8"), 10))).toBe(true);
    await expectV1Serves();
    expect(audit().pop()).toBe(
      `alice release v2: ${v1} -> -: interrupted by SIGTERM during the release command; ${v1} still serves (exit 1)`,
    );
  });

  test.each([
    [
      "a line break",
      "--release-command=yarn migrate\nrm -rf /",
      "a build or release command must be one line of 1 to 1000 printable characters; got 'yarn migrate\\nrm -rf /'",
    ],
    [
      "a tab",
      "--build-command=yarn\tbuild",
      "a build or release command must be one line of 1 to 1000 printable characters; got 'yarn?build'",
    ],
    [
      "only spaces",
      "--release-command=   ",
      "a build or release command must be one line of 1 to 1000 printable characters; got '   '",
    ],
    [
      "a bound below the least",
      "--command-timeout=5",
      "--command-timeout must be a whole number of seconds from 10 to 7200; got '5'",
    ],
    [
      "a bound that is no number",
      "--command-timeout=1e3",
      "--command-timeout must be a whole number of seconds from 10 to 7200; got '1e3'",
    ],
    ["a snapshot that is none", "--snapshot=snap-x; id", "--snapshot must be a snapshot id (snap-…); got 'snap-x; id'"],
  ])("the tool refuses %s in one line, before the lock or a clone", async (_what, word, message) => {
    const refused = await run(["release", "v2", word]);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain(`ERROR: ${message}\n`);
    expect(refused.output).not.toContain("building");
    await expectV1Serves();
  });
});
