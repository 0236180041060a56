/**
 * The ops command (userdata/ops.sh) under the faults of real use, run for real as root against the
 * harness's parts (MariaDB, the git server over https, the app unit running server.js, the
 * systemd-run stand-in that starts each action in a session of its own, as a transient unit):
 * a dropped session (SIGHUP) and a closed output during a bad release's health check, signals to the
 * action itself, SIGKILL at each phase (and at each line of the first release's adoption), SIGTERM during
 * a build, a reboot after a cut-off switch, a cut-off switch whose release answers, pruning and rollback targets,
 * an argument that would forge audit lines, an empty .env, and a full file system (a small tmpfs).
 * Each time: the previous good release serves, and the audit log and `status` tell what happened.
 */
import { ChildProcess, spawn, spawnSync } from "child_process";
import { randomBytes } from "crypto";
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "fs";
import { AddressInfo, createServer, Socket } from "net";
import { join } from "path";
import { opsPaths, refreshScriptPath, renderProvisioningScript } from "../../userdata";
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { secretParameterNames } from "../../constructs/secret-parameters";
import { ScriptSecrets, SecretParameterNames } from "../../settings/provisioning-settings";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { answer } from "../support/app-answer";
import { actionAuditLines, nativePasswordHash, ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";
import { until } from "../support/until";

jest.setTimeout(240_000);

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const TOKEN = "ghp_FaultsT0ken/+=";
const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: b64("root 'faults' pass"),
  appDbPasswordBase64: b64("app faults pass"),
  sourceHostTokenBase64: b64(TOKEN),
};
const server = (answer: string) =>
  `require('http').createServer((q, r) => r.end('${answer}')).listen(process.env.PORT);\n`;
/** A server that runs and never listens: the health check waits out HEALTH_SECONDS. */
const SILENT_SERVER = "setInterval(() => undefined, 1000);\n";
/** Short limits, so that a test waits seconds, not minutes. */
const HEADER = { HEALTH_SECONDS: 6, KEEP_RELEASES: 2, GIT_SECONDS: 8, ATTEMPTS: 2 };

/** One harness with the app, provisioned, and the test's view of the ops command's files. */
class Host {
  readonly ops: ReturnType<typeof opsPaths>;
  readonly outputs: string[] = [];
  constructor(readonly h: ProvisioningHarness) {
    this.ops = opsPaths(h.settings);
  }

  run(args: string[], control?: (child: ChildProcess) => void): Promise<RunResult> {
    return this.h.runCommand(this.ops.command, args, { env: { SUDO_USER: "alice" }, control }).then((result) => {
      this.outputs.push(result.output);
      return result;
    });
  }

  /** `run` with the harness's `fault` armed for this run only (disarmed whatever the run does). */
  async runWithFault(fault: NonNullable<ProvisioningHarness["fault"]>, args: string[]): Promise<RunResult> {
    this.h.fault = fault;
    try {
      return await this.run(args);
    } finally {
      this.h.fault = undefined;
    }
  }

  current(): string {
    return readlinkSync(this.h.settings.appDir).split("/").pop() ?? "";
  }

  releases(): string[] {
    return readdirSync(this.ops.releasesDirectory)
      .filter((name) => /^\d{4}-/.test(name))
      .sort();
  }

  /** Everything in the releases directory that is not a release (a build's or a prune's leftover). */
  leftovers(): string[] {
    return readdirSync(this.ops.releasesDirectory).filter((name) => !/^\d{4}-[0-9a-f]{7}$/.test(name));
  }

  audit(): string[] {
    return actionAuditLines(this.ops.auditLog).map((line) => line.replace(/^\S+Z /, ""));
  }

  state(): string {
    return existsSync(this.ops.stateFile) ? readFileSync(this.ops.stateFile, "utf8") : "";
  }

  front(): string {
    return this.h.frontState();
  }

  async body(): Promise<string | undefined> {
    return (await answer(this.h.appPort))?.body;
  }

  /** Waits (bounded) until the action's unit has ended, after its local command was cut off. */
  async actionEnded(): Promise<void> {
    if (!(await this.h.unitsEnded(60_000))) throw new Error("the action's unit still runs");
  }
}

async function startHost(
  header: Record<string, number>,
  beforeProvisioning?: (h: ProvisioningHarness) => void,
): Promise<Host> {
  const h = await ProvisioningHarness.start({ sourceHostToken: TOKEN, app: true });
  try {
    beforeProvisioning?.(h);
    const first = await h.run(renderProvisioningScript(h.settings, SECRETS), { header, retryPauseSeconds: 0 });
    if (first.exitCode !== 0) throw new Error(first.output);
  } catch (error) {
    await h.stop();
    throw error;
  }
  return new Host(h);
}

describeWithTools("the ops command under faults, run for real", ProvisioningHarness.toolsMissing(), () => {
  let host: Host;
  let h: ProvisioningHarness;
  let v2 = "";

  beforeAll(async () => {
    host = await startHost(HEADER);
    h = host.h;
    await h.pushCommit({ "server.js": server("crm v2") }, "v2", "refs/tags/v2");
    await h.pushCommit({ "server.js": SILENT_SERVER }, "never answers", "refs/heads/silent");
    await h.pushCommit({ "server.js": server("crm v3") }, "v3", "refs/heads/v3");
    const released = await host.run(["release", "v2"]);
    if (released.exitCode !== 0) throw new Error(released.output);
    v2 = host.current();
  });

  afterAll(async () => {
    if (process.env.OPS_DEBUG) {
      console.log(host?.outputs.join("\n----\n"));
      spawnSync("cp", ["-a", h.dir, "/tmp/ops-faults-debug"]);
    }
    await h?.stop();
  }, TEARDOWN_MS);

  /** After each case: v2 serves, the front holds no request, nothing is left unverified, no lock, no leftover. */
  async function expectV2Serves(): Promise<void> {
    expect(host.front()).toBe("open");
    expect(host.current()).toBe(v2);
    expect(await host.body()).toBe("crm v2");
    expect(host.state()).not.toMatch(/^unverified /m);
    expect(host.leftovers()).toEqual([]);
  }

  test("a dropped session (SIGHUP to the local command) during a bad release's health check: the action goes on in its unit and puts v2 back", async () => {
    const before = host.releases();
    let hungUp = false;
    const release = await host.run(["release", "silent"], (child) => {
      void until("the switch", () => /^unverified /m.test(host.state())).then(() => {
        hungUp = true;
        process.kill(-child.pid!, "SIGHUP");
      });
    });
    expect(hungUp).toBe(true);
    expect(release.exitCode).toBeNull();
    await host.actionEnded();
    await expectV2Serves();
    expect(host.releases()).toEqual(before);
    expect(host.audit().pop()).toMatch(
      new RegExp(`^alice release silent: ${v2} -> ${v2}: 0003-\\w{7} did not answer; ${v2} serves again \\(exit 3\\)$`),
    );
    expect(host.state()).toMatch(/^failed 0003-\w{7}$/m);
  });

  test("a closed output (the local command's pipe gone) during a bad release's health check: v2 is put back all the same", async () => {
    const release = await host.run(["release", "silent"], (child) => {
      void until("the switch", () => /^unverified /m.test(host.state())).then(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      });
    });
    expect(release.exitCode).not.toBe(0);
    await host.actionEnded();
    await expectV2Serves();
    // The action's next write got SIGPIPE (or its health check ended first).
    expect(host.audit().pop()).toMatch(
      new RegExp(
        `^alice release silent: ${v2} -> ${v2}: 0003-\\w{7} (did not answer|was interrupted by SIGPIPE); ${v2} serves again \\(exit 3\\)$`,
      ),
    );
  });

  test.each(["HUP", "INT", "PIPE", "TERM"])(
    "SIG%s to the action itself at the health check of a good release: v2 serves again, and the audit line says why",
    async (signal) => {
      const release = await host.runWithFault(`ops:${signal.toLowerCase()}-health` as NonNullable<typeof h.fault>, [
        "release",
        "v3",
      ]);
      expect(release.exitCode).toBe(3);
      expect(release.output).toContain(`ERROR: 0003-`);
      await expectV2Serves();
      expect(host.audit().pop()).toMatch(
        new RegExp(
          `^alice release v3: ${v2} -> ${v2}: 0003-\\w{7} was interrupted by SIG${signal}; ${v2} serves again \\(exit 3\\)$`,
        ),
      );
    },
  );

  test("SIGKILL during the build: nothing switched; the next action removes the build", async () => {
    const killed = await host.runWithFault("ops:kill-build", ["release", "v3"]);
    expect(killed.exitCode).toBe(137);
    expect(host.current()).toBe(v2);
    expect(host.leftovers()).toEqual([".new"]);
    const status = await host.run(["status"]);
    expect(status.exitCode).toBe(0);
    expect(status.output).not.toMatch(/^(unverified|lock):/m);
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
    expect(host.audit().pop()).toBe(`alice rollback ${v2}: ${v2} -> ${v2}: ok`);
  });

  test("SIGKILL at the restart after the switch: status says unverified; a reboot starts v2, not the unverified release", async () => {
    const killed = await host.runWithFault("ops:kill-restart", ["release", "v3"]);
    expect(killed.exitCode).toBe(137);
    const unverified = host.current();
    expect(unverified).toMatch(/^0003-/);
    const status = await host.run(["status"]);
    expect(status.output).toContain(
      `unverified: ${unverified}; the next action keeps it if it answers, else puts ${v2} back, as a boot does`,
    );
    // The kill left the front holding (its element expires by itself on a host, not with this stand-in).
    expect(host.front()).toBe("held");
    // The boot: nftables loads the saved ruleset (the front open), then the refresh unit runs before the app.
    h.firewallAtBoot();
    const boot = await h.runCommand(refreshScriptPath(h.settings), []);
    expect(boot.exitCode).toBe(0);
    expect(host.current()).toBe(v2);
    await h.runCommand(join(h.dir, "stand-ins", "app-unit.sh"), ["restart"]);
    await until("v2 answering", async () => (await host.body()) === "crm v2");
    expect(host.audit().pop()).toBe(
      `alice release v3: ${v2} -> ${v2}: cut off; at boot ${v2} serves, not ${unverified}`,
    );
    rmSync(join(host.ops.releasesDirectory, unverified), { recursive: true, force: true });
    await expectV2Serves();
  });

  test("SIGKILL during the health check of a release that does not answer: the next action checks it, puts v2 back and marks it failed", async () => {
    const killed = await host.runWithFault("ops:kill-health", ["release", "silent"]);
    expect(killed.exitCode).toBe(137);
    const unverified = host.current();
    expect(host.state()).toMatch(new RegExp(`^unverified ${unverified} ${v2} alice release silent$`, "m"));
    const patch = await host.run(["patch"]);
    expect(patch.exitCode).toBe(0);
    await expectV2Serves();
    expect(host.state()).toMatch(new RegExp(`^failed ${unverified}$`, "m"));
    expect(host.audit().slice(-2)).toEqual([
      `alice release silent: ${v2} -> ${v2}: cut off; ${v2} serves, not ${unverified}`,
      expect.stringMatching(/^alice patch: .* -> .*: ok$/),
    ]);
  });

  test("pruning keeps the current, the previous and the good release before it; a plain rollback goes to that one, never to a failed one", async () => {
    // KEEP_RELEASES is 2 here. v2 serves; the newest release is a v3 that was rolled back from.
    const rolledBackFrom = host.releases().pop() ?? "";
    expect(host.current()).toBe(v2);
    expect((await host.run(["release", "v3"])).exitCode).toBe(0);
    const newest = host.current();
    // By number only the two newest stay; v2, which served before newest (and is the last known good), stays too.
    expect(host.releases()).toEqual([v2, rolledBackFrom, newest]);
    // A plain rollback goes to v2, the last known good, not to the newest before newest (rolledBackFrom).
    expect((await host.run(["rollback"])).exitCode).toBe(0);
    expect(host.current()).toBe(v2);
    expect(await host.body()).toBe("crm v2");
    // A release that does not answer as a rollback target is marked failed; v2 serves again.
    writeFileSync(join(host.ops.releasesDirectory, rolledBackFrom, "server.js"), "process.exit(4);\n");
    const bad = await host.run(["rollback", rolledBackFrom]);
    expect(bad.exitCode).toBe(3);
    expect(host.current()).toBe(v2);
    expect(host.state()).toMatch(new RegExp(`^failed ${rolledBackFrom}$`, "m"));
    // From newest, a plain rollback skips the failed release before it.
    expect((await host.run(["rollback", newest])).exitCode).toBe(0);
    expect((await host.run(["rollback"])).exitCode).toBe(0);
    expect(host.current()).toBe(v2);
    expect(host.audit().slice(-2)).toEqual([
      `alice rollback ${newest}: ${v2} -> ${newest}: ok`,
      `alice rollback: ${newest} -> ${v2}: ok`,
    ]);
  });

  test("an argument with a line break is one audit line, escaped", async () => {
    const forged = `${v2}\n2030-01-01T00:00:00Z mallory release evil: - -> -: ok`;
    const before = host.audit().length;
    const result = await host.run(["rollback", forged]);
    expect(result.exitCode).toBe(1);
    const lines = host.audit();
    expect(lines.length).toBe(before + 1);
    expect(lines.pop()).toBe(
      `alice rollback ${v2}\\n2030-01-01T00:00:00Z mallory release evil: - -> -: ok: ${v2} -> ${v2}\\n2030-01-01T00:00:00Z mallory release evil: - -> -: ok: no release ${v2}\\n2030-01-01T00:00:00Z mallory release evil: - -> -: ok (exit 1)`,
    );
  });

  test("an empty .env is never copied: the rollback is refused and the other release's .env stays", async () => {
    const env = join(h.settings.appDir, ".env");
    const kept = readFileSync(env, "utf8");
    const first = host.releases().find((name) => name !== v2) ?? "";
    const target = join(host.ops.releasesDirectory, first, ".env");
    const targetBefore = readFileSync(target, "utf8");
    writeFileSync(env, "");
    try {
      const refused = await host.run(["rollback", first]);
      expect(refused.exitCode).toBe(1);
      expect(refused.output).toContain(
        `ERROR: ${join(host.ops.releasesDirectory, v2, ".env")} holds no DB_PASSWORD; not copying it`,
      );
      expect(readFileSync(target, "utf8")).toBe(targetBefore);
      expect(host.current()).toBe(v2);
    } finally {
      writeFileSync(env, kept);
    }
    expect(targetBefore).toContain("DB_PASSWORD=");
  });

  test("a process the build leaves behind holds no lock: the next action runs at once", async () => {
    const release = await host.runWithFault("ops:leave-child", ["release", "v3"]);
    const leftover = parseInt(readFileSync(join(h.dir, "leftover.pid"), "utf8"), 10);
    try {
      expect(release.exitCode).toBe(0);
      expect(() => process.kill(leftover, 0)).not.toThrow();
      const status = await host.run(["status"]);
      expect(status.output).not.toMatch(/^lock:/m);
      const back = await host.run(["rollback", v2]);
      expect({ code: back.exitCode, output: back.output }).toEqual({
        code: 0,
        output: expect.not.stringContaining("busy"),
      });
    } finally {
      process.kill(leftover, "SIGKILL");
    }
    await expectV2Serves();
  });

  test("status reads the lock without taking it; a second action is refused naming the holder, recorded with the lock", async () => {
    h.gitDelayMs = 700;
    const release = host.run(["release", "v3"]);
    const seen = h.calls().length;
    let status: RunResult, second: RunResult, statusCalls: string[];
    try {
      await until("the release's lock", () =>
        h
          .calls()
          .slice(seen)
          .some((call) => call.startsWith("flock ")),
      );
      const before = h.calls().length;
      status = await host.run(["status"]);
      statusCalls = h.calls().slice(before);
      second = await host.run(["rollback"]);
    } finally {
      h.gitDelayMs = 0;
      await release;
    }
    const holder = /^lock: (release v3 by alice \(pid \d+, since \S+Z\))$/m.exec(status.output);
    expect(holder).not.toBeNull();
    expect(statusCalls.filter((call) => call.startsWith("flock "))).toEqual([]);
    expect(second.exitCode).toBe(75);
    expect(second.output).toContain(`ERROR: busy: ${holder?.[1]}`);
    expect((await release).exitCode).toBe(0);
    expect((await host.run(["status"])).output).not.toMatch(/^lock:/m);
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
  });

  test("the token is held by no process of the login user during a release: git runs as root, the build never sees it", async () => {
    /** Every process holding the token in its environment or arguments, with its ancestors' names. */
    const holders = new Map<number, string[]>();
    const read = (file: string) => {
      try {
        return readFileSync(file);
      } catch {
        return Buffer.alloc(0);
      }
    };
    const ancestry = (pid: number): string[] => {
      const names: string[] = [];
      // Up to the action's unit (the systemd-run stand-in starts it; systemd does on a host).
      for (let p = pid; p > 1 && names.length < 40;) {
        const stat = read(`/proc/${p}/stat`).toString();
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        if (name === "systemd-run") break;
        names.push(name);
        p = parseInt(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1], 10);
      }
      return names;
    };
    let sampling = true;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
          const pid = parseInt(name, 10);
          if (holders.has(pid) || pid === process.pid) continue;
          if ([read(`/proc/${pid}/environ`), read(`/proc/${pid}/cmdline`)].some((data) => data.includes(TOKEN)))
            holders.set(pid, ancestry(pid));
        }
        samples++;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    h.gitDelayMs = 300;
    let release: RunResult;
    try {
      release = await host.run(["release", "v3"]);
    } finally {
      h.gitDelayMs = 0;
      sampling = false;
      await sampler;
    }
    expect(release.exitCode).toBe(0);
    const seen = [...holders.values()];
    // The sampler saw the clone's git holding the token, so it would have seen any other holder.
    expect(seen.some((names) => names[0].startsWith("git"))).toBe(true);
    // None of them runs as the login user: nothing under runuser (as_login, as_node), no build step.
    expect(seen.filter((names) => names.some((n) => /^(runuser|yarn|node|npm)$/.test(n)))).toEqual([]);
    expect(samples).toBeGreaterThan(10);
    expect(host.releases().length).toBeGreaterThan(0);
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
  });

  test("a source that accepts and never answers holds no action: each try of the clone ends at GIT_SECONDS, the release fails, v2 serves", async () => {
    const stuck = createServer(() => undefined);
    const sockets: Socket[] = [];
    stuck.on("connection", (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => stuck.listen(0, "127.0.0.1", resolve));
    const conf = `${host.ops.command}.conf`;
    const command = readFileSync(conf, "utf8");
    const url = h.settings.repoUrl;
    // The tool's configuration's copy of the setting (readonly -p), as a source host that moved would have it.
    const line = `declare -r REPO_URL="${url}"`;
    expect(command).toContain(line);
    writeFileSync(
      conf,
      command.replace(
        line,
        `declare -r REPO_URL="https://127.0.0.1:${(stuck.address() as AddressInfo).port}/crm-app.git"`,
      ),
    );
    let release: RunResult;
    try {
      release = await host.run(["release", "v3"]);
    } finally {
      writeFileSync(conf, command);
      sockets.forEach((socket) => socket.destroy());
      stuck.close();
    }
    expect(sockets.length).toBe(2);
    expect(release.exitCode).toBe(1);
    expect(release.output).toContain("git clone failed 2 times");
    // Two tries of GIT_SECONDS (8 s) each, and the rest.
    expect(release.durationMs).toBeLessThan(30_000);
    expect(host.audit().pop()).toBe(`alice release v3: ${v2} -> -: failed (exit 1)`);
    await host.actionEnded();
    await expectV2Serves();
  });

  test("a lock held by anything but an action (a leftover of an older version) is reported stale, with the way to clear it", async () => {
    const leftover = spawn("flock", [host.ops.lockFile, "sleep", "300"], { stdio: "ignore", detached: true });
    try {
      await until("the leftover's lock", () => spawnSync("flock", ["-n", host.ops.lockFile, "true"]).status !== 0);
      // flock holds the lock before its child has become sleep: the child's name is waited for too.
      const sleeperOf = () =>
        spawnSync("pgrep", ["-P", String(leftover.pid), "-x", "sleep"], { encoding: "utf8" }).stdout.trim();
      await until("the leftover's sleep", () => sleeperOf() !== "");
      const sleeper = sleeperOf();
      const status = await host.run(["status"]);
      expect(status.output).toMatch(
        new RegExp(
          `^lock: stale: no action holds it but pid ${leftover.pid} ${sleeper} \\(flock .*\\); end it with sudo kill ${leftover.pid} ${sleeper}$`,
          "m",
        ),
      );
      const refused = await host.run(["rollback", v2]);
      expect(refused.exitCode).toBe(75);
      expect(refused.output).toContain(`busy: stale: no action holds it but pid ${leftover.pid} ${sleeper}`);
    } finally {
      process.kill(-leftover.pid!, "SIGKILL");
    }
    await until("the leftover's end", () => spawnSync("flock", ["-n", host.ops.lockFile, "true"]).status === 0);
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
  });
  test("SIGKILL during the health check of a release that answers: status says unverified until the next action, which checks it, keeps it and writes the cut-off action's audit line", async () => {
    const killed = await host.runWithFault("ops:kill-health", ["release", "v3"]);
    expect(killed.exitCode).toBe(137);
    await host.actionEnded();
    const unverified = host.current();
    const lines = host.audit().length;
    const status = await host.run(["status"]);
    expect(status.output).toContain(
      `unverified: ${unverified}; the next action keeps it if it answers, else puts ${v2} back, as a boot does`,
    );
    expect(host.audit()).toHaveLength(lines);
    const patch = await host.run(["patch"]);
    expect(patch.exitCode).toBe(0);
    expect(host.current()).toBe(unverified);
    expect(await host.body()).toBe("crm v3");
    expect(host.state()).toMatch(new RegExp(`^good ${unverified}$`, "m"));
    expect(host.state()).not.toMatch(new RegExp(`^(unverified .*|failed ${unverified})$`, "m"));
    expect(host.audit().slice(-2)).toEqual([
      `alice release v3: ${v2} -> ${unverified}: cut off after its switch; ${unverified} answered: kept`,
      expect.stringMatching(/^alice patch: .* -> .*: ok$/),
    ]);
    expect((await host.run(["status"])).output).not.toMatch(/^unverified:/m);
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
  });

  test("SIGTERM to the pid the lock message names, during a build: the action ends at once, not when yarn does; the build goes, v2 serves", async () => {
    const buildPid = join(h.dir, "build.pid");
    rmSync(buildPid, { force: true });
    h.fault = "ops:slow-build";
    let release: Promise<RunResult> | undefined;
    let termAt: number | undefined;
    try {
      release = host.run(["release", "v3"]);
      await until("the build", () => existsSync(buildPid));
      const holder = /^lock: release v3 by alice \(pid (\d+), since \S+\)$/m.exec((await host.run(["status"])).output);
      expect(holder).not.toBeNull();
      termAt = Date.now();
      process.kill(parseInt(holder![1], 10), "SIGTERM");
    } finally {
      h.fault = undefined;
    }
    const result = await release!;
    // The build sleeps 30 s; the action ends within a few (its end_build: TERM to the build's group).
    expect(Date.now() - termAt!).toBeLessThan(10_000);
    expect(result.exitCode).toBe(1);
    await host.actionEnded();
    expect(() => process.kill(parseInt(readFileSync(buildPid, "utf8"), 10), 0)).toThrow();
    expect(host.audit().pop()).toBe(`alice release v3: ${v2} -> -: interrupted by SIGTERM (exit 1)`);
    expect((await host.run(["status"])).output).not.toMatch(/^(lock|unverified):/m);
    await expectV2Serves();
  });

  test("a plain rollback goes to the good release before the current one, further back each time, never forward; with none left it is refused", async () => {
    expect((await host.run(["release", "v3"])).exitCode).toBe(0);
    const newest = host.current();
    const path: string[] = [newest];
    for (let i = 0; i < 10; i++) {
      const back = await host.run(["rollback"]);
      if (back.exitCode !== 0) {
        expect(back.exitCode).toBe(1);
        expect(back.output).toContain(`ERROR: no good release before ${host.current()}: nothing to roll back to`);
        break;
      }
      path.push(host.current());
    }
    // Each step older than the one before (by number): after one rollback, the next does not go forward to newest.
    expect(path.length).toBeGreaterThanOrEqual(3);
    expect([...path].sort().reverse()).toEqual(path);
    expect(new Set(path).size).toBe(path.length);
    expect(path).toContain(v2);
    expect(host.audit().pop()).toMatch(
      new RegExp(`^alice rollback: ${path[path.length - 1]} -> -: no good release before .* \\(exit 1\\)$`),
    );
    expect((await host.run(["rollback", v2])).exitCode).toBe(0);
    await expectV2Serves();
  });
});

describeWithTools(
  "the first release's adoption of the first boot's checkout, killed at each line",
  ProvisioningHarness.toolsMissing(),
  () => {
    let host: Host;
    let h: ProvisioningHarness;

    beforeAll(async () => {
      host = await startHost(HEADER);
      h = host.h;
      await h.pushCommit({ "server.js": server("crm v2") }, "v2", "refs/tags/v2");
    });

    afterAll(async () => {
      await h?.stop();
    }, TEARDOWN_MS);

    /** The first boot's layout again: its checkout (release 0001, whatever moved it) a plain <app_dir>, no releases, no state. */
    async function firstBootLayout(): Promise<void> {
      const appDir = h.settings.appDir;
      const first = existsSync(host.ops.releasesDirectory)
        ? readdirSync(host.ops.releasesDirectory).find((name) => name.startsWith("0001-"))
        : undefined;
      if (first) {
        rmSync(appDir, { force: true });
        spawnSync("mv", ["-T", join(host.ops.releasesDirectory, first), appDir]);
      }
      rmSync(host.ops.releasesDirectory, { recursive: true, force: true });
      rmSync(`${appDir}.ops-link`, { force: true });
      rmSync(host.ops.stateFile, { force: true });
      await h.runCommand(join(h.dir, "stand-ins", "app-unit.sh"), ["restart"]);
      await until("the checkout answering", async () => (await host.body()) === "crm");
    }

    // Each as_login line of adopt_first_checkout and of its point_app_dir, and the first line after it.
    const lines = (appDir: string, releases: string) => [
      ["mkdir -p", `mkdir -p ${releases}`],
      ["rev-parse", `git -C ${appDir} rev-parse HEAD`],
      ["the move", `mv -T ${appDir} `],
      ["the link", "ln -sfn "],
      ["the link's rename", `mv -fT ${appDir}.ops-link ${appDir} `],
      ["the build's checkout", `git -C ${releases}/.new rev-parse`],
    ];

    test.each([0, 1, 2, 3, 4, 5])(
      "killed at line %i: the next action finds the app's directory, and the release works",
      async (index) => {
        await firstBootLayout();
        const [, words] = lines(h.settings.appDir, host.ops.releasesDirectory)[index];
        const killed = await host.runWithFault(`ops:kill-at:${words}`, ["release", "v2"]);
        expect(killed.exitCode).toBe(137);
        await host.actionEnded();
        const release = await host.run(["release", "v2"]);
        expect({ code: release.exitCode, output: release.output }).toEqual({
          code: 0,
          output: expect.not.stringContaining("ERROR"),
        });
        expect(await host.body()).toBe("crm v2");
        expect(host.releases()).toEqual([expect.stringMatching(/^0001-/), expect.stringMatching(/^0002-/)]);
        expect(host.state()).toMatch(/^good 0001-\w{7}$/m);
        expect(host.state()).not.toMatch(/^(adopting|unverified) /m);
        expect(host.leftovers()).toEqual([]);
      },
    );

    test("killed between the move and the link: status says so, the boot links the checkout as release 0001, the app comes back, the next release works", async () => {
      await firstBootLayout();
      const killed = await host.runWithFault(`ops:kill-at:ln -sfn `, ["release", "v2"]);
      expect(killed.exitCode).toBe(137);
      await host.actionEnded();
      expect(existsSync(h.settings.appDir)).toBe(false);
      expect((await host.run(["status"])).output).toMatch(
        /^adopting: the first boot's checkout as 0001-\w{7}; the next action or a boot finishes it$/m,
      );
      const boot = await h.runCommand(refreshScriptPath(h.settings), []);
      expect(boot.exitCode).toBe(0);
      const first = host.current();
      expect(first).toMatch(/^0001-/);
      expect(host.audit().pop()).toBe(
        `alice release v2: - -> ${first}: cut off; the first boot's checkout is release ${first}`,
      );
      await h.runCommand(join(h.dir, "stand-ins", "app-unit.sh"), ["restart"]);
      await until("the checkout answering again", async () => (await host.body()) === "crm");
      expect((await host.run(["release", "v2"])).exitCode).toBe(0);
      expect(await host.body()).toBe("crm v2");
      expect(host.state()).toMatch(new RegExp(`^good ${first}$`, "m"));
    });
  },
);

describeWithTools(
  "the ops command on a full disk (a small tmpfs as the login user's home)",
  ProvisioningHarness.toolsMissing(),
  () => {
    let host: Host;
    let h: ProvisioningHarness;
    let home = "";
    const freeKiB = () =>
      parseInt(
        spawnSync("df", ["--output=avail", "-k", home], { encoding: "utf8" }).stdout.trim().split("\n").pop() ?? "0",
        10,
      );

    beforeAll(async () => {
      host = await startHost({ ...HEADER, FREE_MARGIN_MB: 4 }, (harness) => {
        home = harness.settings.loginHome;
        const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=24m,mode=755", "tmpfs", home], {
          encoding: "utf8",
        });
        if (mounted.status !== 0) throw new Error(`mount tmpfs: ${mounted.stderr}`);
      });
      h = host.h;
      await h.pushCommit({ "server.js": server("crm v2") }, "v2", "refs/tags/v2");
      expect((await host.run(["release", "v2"])).exitCode).toBe(0);
    });

    afterAll(async () => {
      if (h) {
        await h.runCommand(join(h.dir, "stand-ins", "app-unit.sh"), ["stop"]);
        spawnSync("umount", ["--lazy", home]);
        await h.stop();
      }
    }, TEARDOWN_MS);

    test("less free space than the current release's size and FREE_MARGIN_MB: refused before the clone, nothing fetched, v2 serves", async () => {
      const v2 = host.current();
      const filler = join(home, "filler");
      writeFileSync(filler, Buffer.alloc((freeKiB() - 2048) * 1024));
      const requests = h.gitRequests.length;
      let refused: RunResult;
      try {
        refused = await host.run(["release", "main"]);
      } finally {
        rmSync(filler);
      }
      expect(refused.exitCode).toBe(1);
      expect(refused.output).toMatch(
        new RegExp(
          `ERROR: \\d MiB free on ${host.ops.releasesDirectory}, a build needs [4-9] \\(the current release's size and 4\\); ${v2} still serves`,
        ),
      );
      expect(h.gitRequests.length).toBe(requests);
      expect(host.leftovers()).toEqual([]);
      expect(host.audit().pop()).toMatch(
        new RegExp(`^alice release main: ${v2} -> -: \\d MiB free on .* \\(exit 1\\)$`),
      );
      expect(await host.body()).toBe("crm v2");
    });

    test("a release too big for the disk fails in its clone; its leftovers go, the free space comes back, v2 serves", async () => {
      const v2 = host.current();
      const free = freeKiB();
      // Incompressible, and more than half the free space: the pack and the checkout together do not fit.
      const big = randomBytes(Math.ceil(free * 1024 * 0.6));
      await h.pushCommit(
        { "server.js": server("crm big"), "big.bin": big.toString("base64") },
        "big",
        "refs/heads/big",
      );
      const result = await host.run(["release", "big"]);
      expect(result.exitCode).not.toBe(0);
      expect(host.current()).toBe(v2);
      expect(host.leftovers()).toEqual([]);
      expect(Math.abs(freeKiB() - free)).toBeLessThan(256);
      expect(await host.body()).toBe("crm v2");
    });

    test("the disk fills during the build: the .env copy fails before the switch, the new release goes, the live .env is whole", async () => {
      const v2 = host.current();
      const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
      const full = await host.runWithFault("ops:fill-build", ["release", "main"]);
      expect(full.exitCode).toBe(1);
      expect(host.current()).toBe(v2);
      expect(host.releases()).toHaveLength(2);
      expect(readFileSync(join(h.settings.appDir, ".env"), "utf8")).toBe(env);
      expect(host.audit().pop()).toMatch(new RegExp(`^alice release main: ${v2} -> -: .* \\(exit 1\\)$`));
      rmSync(join(home, "filler"));
      expect((await host.run(["release", "main"])).exitCode).toBe(0);
      expect(await host.body()).toBe("crm");
    });
  },
);

const motoServer = findMotoServer();
const awsMissing = spawnSync("bash", ["-c", "command -v aws"]).status === 0 ? [] : ["the AWS CLI (aws)"];

describeWithTools(
  "rotate-secrets under faults (Parameter Store on moto), run for real",
  [...ProvisioningHarness.toolsMissing(), ...(motoServer ? [] : ["moto_server"]), ...awsMissing],
  () => {
    const names = { region: "us-east-1", ...secretParameterNames("CrmHostStack") } satisfies SecretParameterNames;
    let moto: MotoServer;
    let ssm: SSMClient;
    let h: ProvisioningHarness;
    let host: Host;
    let n = 0;
    const put = (name: string, value: string) =>
      ssm.send(new PutParameterCommand({ Name: name, Value: value, Type: "SecureString", Overwrite: true }));
    /** New values in Parameter Store (as `npm run secrets -- <stack> rotate` puts them), the token too. */
    async function newValues(): Promise<{ root: string; app: string }> {
      n++;
      const values = {
        root: `root-${n}-${Date.now()}`,
        app: `app-${n}-${Date.now()}`,
        token: `ghp_Rotated${n}x${Date.now()}`,
      };
      await put(names.dbRootPassword, values.root);
      await put(names.appDbPassword, values.app);
      await put(names.sourceHostToken, values.token);
      h.sourceHostToken = values.token;
      return values;
    }
    /** The app logs in as it would: with the .env's DB_USER and DB_PASSWORD. */
    async function appLogsIn(password: string): Promise<boolean> {
      const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
      return (
        env.includes(`\nDB_PASSWORD=${password}\n`) && h.canLogin(/^DB_USER=(.*)$/m.exec(env)?.[1] ?? "", password)
      );
    }
    /** The .env's credentials log in: what the app uses when it (re)starts. */
    async function envLogsIn(): Promise<boolean> {
      const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
      return h.canLogin(/^DB_USER=(.*)$/m.exec(env)?.[1] ?? "", /^DB_PASSWORD=(.*)$/m.exec(env)?.[1] ?? "");
    }
    const rootHash = () => h.query("SELECT Priv FROM mysql.global_priv WHERE User = 'root' AND Host = 'localhost'");

    beforeAll(async () => {
      moto = await MotoServer.start(motoServer!);
      ssm = new SSMClient({
        region: names.region,
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      h = await ProvisioningHarness.start({ sourceHostToken: TOKEN, app: true, awsEndpoint: moto.endpoint });
      await put(names.dbRootPassword, "first root");
      await put(names.appDbPassword, "first-app");
      await put(names.sourceHostToken, TOKEN);
      const first = await h.run(renderProvisioningScript(h.settings, names), { header: HEADER, retryPauseSeconds: 0 });
      if (first.exitCode !== 0) throw new Error(first.output);
      host = new Host(h);
    });

    afterAll(async () => {
      await h?.stop();
      ssm?.destroy();
      await moto?.stop();
    }, TEARDOWN_MS);

    test("a value .env cannot carry is refused before anything changes: the app keeps logging in with the old password", async () => {
      const before = await rootHash();
      const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
      await put(names.dbRootPassword, "never root");
      await put(names.appDbPassword, "x'y\"z`w #1");
      const refused = await host.run(["rotate-secrets"]);
      expect(refused.exitCode).toBe(1);
      expect(refused.output).toContain(
        `the value of ${names.appDbPassword} cannot be written to .env; nothing changed`,
      );
      expect(readFileSync(join(h.settings.appDir, ".env"), "utf8")).toBe(env);
      expect(await rootHash()).toBe(before);
      expect(await appLogsIn("first-app")).toBe(true);
    });

    test.each([
      ["before .env is replaced", "kill:step_11_write_env_file"],
      ["once the app user's password is set", "ops:kill-after-app-password"],
      ["at the app's restart", "ops:kill-restart"],
      ["before the root password", "ops:kill-before-root-password"],
    ] as const)("killed %s, run again: it converges, the app logs in with the new password", async (_phase, fault) => {
      const values = await newValues();
      const killed = await host.runWithFault(fault, ["rotate-secrets"]);
      expect(killed.exitCode).toBe(137);
      await host.actionEnded();
      // Cut off, the app can still connect: its .env (read at its next start) holds a password that logs in.
      expect(await envLogsIn()).toBe(true);
      const again = await host.run(["rotate-secrets"]);
      expect({ code: again.exitCode, output: again.output }).toEqual({
        code: 0,
        output: expect.stringContaining("secrets rotated"),
      });
      expect(await appLogsIn(values.app)).toBe(true);
      expect(await h.canLogin(h.settings.appDbUser, "first-app")).toBe(false);
      expect(await rootHash()).toContain(nativePasswordHash(values.root));
      // The rotation restarts the app and does not wait for it.
      await until("the app answering", async () => (await host.body()) === "crm");
      expect(host.audit().pop()).toBe("alice rotate-secrets: - -> -: ok");
    });
  },
);
