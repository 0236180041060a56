/**
 * userdata/ops-tool.ts and userdata/ops-install.sh: the ops tool as the CLI renders it, and its installer run for
 * real (bash, flock, sha256sum) on paths of a temporary directory: an install, one that changes nothing, a copy cut
 * off, a write that fails, a busy lock, and an older host's command (its format kept in legacy/crm-ops, written by
 * install_command as it was before the tool: ec77b10) whose settings become the configuration.
 */
import { spawn, spawnSync } from "child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import {
  OPS_INSTALLER,
  opsToolVersion,
  renderOpsTool,
  renderOpsToolBody,
  renderScriptHeader,
  stampOpsTool,
} from "../../userdata";
import { hostFunction, HOST_ACTIONS, OPS_ACTION_LIST } from "../../userdata/ops-actions";
import { TOPOLOGIES } from "../../settings/provisioning-settings";
import { PRODUCTION_SETTINGS, SECRETS } from "./fixtures";

const tool = renderOpsTool();
let dir: string;
let paths: { command: string; lock: string; log: string };

/** Runs the installer as the CLI does (`bash -c <installer> ops-install …`), `input` on its standard input; `before`: shell code first. */
function install(input: string, version = tool.version, before = "") {
  const script = before ? `${before}\n${OPS_INSTALLER}` : OPS_INSTALLER;
  return spawnSync("bash", ["-c", script, "ops-install", version, paths.command, paths.lock, paths.log, "alice"], {
    input,
    encoding: "utf8",
    timeout: 30_000,
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-ops-tool-"));
  mkdirSync(join(dir, "sbin"));
  mkdirSync(join(dir, "log"));
  paths = {
    command: join(dir, "sbin", "crm-ops"),
    lock: join(dir, "log", "crm-ops.lock"),
    log: join(dir, "log", "crm-ops.log"),
  };
  // The configuration the first boot writes (first-boot.sh); the installer installs no tool where there is none.
  writeFileSync(`${paths.command}.conf`, 'declare -r APP_NAME="crm"\n', { mode: 0o600 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the ops tool", () => {
  test("is one file for every host: its second line is its version, the sha256 of the lines after it", () => {
    const lines = tool.text.split("\n");
    expect(lines[0]).toBe("#!/bin/bash");
    expect(lines[1]).toBe(`OPS_TOOL_VERSION=${tool.version}`);
    expect(opsToolVersion(lines.slice(2).join("\n"))).toBe(tool.version);
    expect(stampOpsTool(renderOpsToolBody())).toBe(tool.text);
    expect(tool.text.trimEnd().endsWith('ops_main "$@"')).toBe(true);
    expect(spawnSync("bash", ["-n"], { input: tool.text }).status).toBe(0);
  });

  test("reads the host's settings from <command>.conf, whose values its own constants override", () => {
    // The configuration as the first boot writes it (first-boot.sh: settings_text), from a header with an older limit.
    const header = renderScriptHeader(PRODUCTION_SETTINGS, SECRETS).replace(
      /\bHEALTH_SECONDS=[0-9]+/,
      "HEALTH_SECONDS=7",
    );
    const conf = spawnSync(
      "bash",
      ["-c", `${header}\nreadonly -p | grep -Ev '_B64=|^declare -[a-z]+ (BASH|EUID|PPID|SHELLOPTS|UID)'`],
      { encoding: "utf8" },
    );
    expect(conf.stdout).toContain('declare -r HEALTH_SECONDS="7"');
    writeFileSync(`${paths.command}.conf`, conf.stdout, { mode: 0o600 });
    writeFileSync(
      paths.command,
      tool.text.replace(/\nops_main "\$@"\n$/, '\nprintf "%s|%s|%s" "$APP_NAME" "$HEALTH_SECONDS" "${PACKAGES[1]}"\n'),
      { mode: 0o700 },
    );
    const run = spawnSync(paths.command, [], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("crm|120|git");
  });
});

describe("the tool's actions", () => {
  test("every declared host action (userdata/ops-actions.ts) has its function in the tool, and every ops_ function is an action's or the dispatcher's", () => {
    const declared = spawnSync(
      "bash",
      [
        "-c",
        `${tool.text.replace(/\nops_main "\$@"\n$/, "\n").replace(/\nOPS_CONFIG=[\s\S]*?\n# shellcheck disable=SC2034/, "\n# shellcheck disable=SC2034")}
declare -F | cut -d' ' -f3 | grep '^ops_'`,
      ],
      { encoding: "utf8" },
    );
    expect(declared.stderr).toBe("");
    const functions = declared.stdout.trim().split("\n");
    const actions = HOST_ACTIONS.map(hostFunction);
    // The dispatcher's own: the dispatcher, a changing action's frame (lock, audit, signals), and each topology's refusals.
    const dispatcher = [
      "ops_main",
      "ops_dispatch",
      "ops_unit",
      "ops_change",
      "ops_finish",
      "ops_signal",
      "ops_lock",
      "ops_unlock",
    ];
    expect(actions.filter((name) => !functions.includes(name))).toEqual([]);
    expect(functions.filter((name) => !actions.includes(name) && !dispatcher.includes(name))).toEqual([]);
  });

  /** The tool's dispatcher run on `topology` with each action's function (and ops_unit) replaced by one that names itself. */
  function dispatch(topology: string, args: string[]) {
    const stubs = [...HOST_ACTIONS.map(hostFunction), "ops_unit"]
      .map((name) => `${name}() { echo "${name} $*"; }`)
      .join("\n");
    const script = `${tool.text.replace(/\nops_main "\$@"\n$/, "\n").replace(/\nOPS_CONFIG=[\s\S]*?\n# shellcheck disable=SC2034/, "\n# shellcheck disable=SC2034")}
${stubs}
LOG_FILE=/dev/null TOPOLOGY=${topology} OPS_COMMAND=/sbin/crm-ops
ops_dispatch "$@"`;
    const run = spawnSync("bash", ["-c", script, "crm-ops", ...args], { encoding: "utf8", timeout: 30_000 });
    return { status: run.status, stdout: run.stdout, refusal: /ERROR: (.*)/.exec(run.stderr)?.[1] ?? "" };
  }

  test("the dispatcher runs each action as declared: a changing one through its transient unit, others straight; a topology's refusal first", () => {
    for (const action of OPS_ACTION_LIST.filter(({ runs }) => runs === "host")) {
      for (const topology of TOPOLOGIES) {
        const refusal = action.refusals?.find((r) => r.topology === topology);
        const ran = dispatch(topology.replace("-", "_"), [action.name, "a1"]);
        if (refusal) expect(ran).toEqual({ status: 1, stdout: "", refusal: refusal.message });
        else
          expect(ran).toEqual({
            status: 0,
            stdout: action.changes ? `ops_unit ${action.name} a1\n` : `${hostFunction(action.name)} a1\n`,
            refusal: "",
          });
      }
    }
    // Anything else: the usage, which names exactly the declared host actions.
    const usage = dispatch("single_host", ["deploy"]);
    expect(usage.status).toBe(1);
    expect(usage.refusal.startsWith("usage: /sbin/crm-ops ")).toBe(true);
    expect(
      usage.refusal
        .slice("usage: /sbin/crm-ops ".length)
        .split("|")
        .map((word) => word.split(" ")[0]),
    ).toEqual(HOST_ACTIONS);
  });

  test("passes shellcheck, its rendered dispatcher too", () => {
    const checked = spawnSync("shellcheck", ["-s", "bash", "--severity=warning", "-"], {
      input: tool.text,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(checked.stdout).toBe("");
    expect(checked.status).toBe(0);
  });
});

describe("the installer", () => {
  test("installs no tool where the first boot wrote no configuration", () => {
    rmSync(`${paths.command}.conf`);
    const refused = install(tool.text);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `ops-install: the host keeps its tool none, not updated to ${tool.version.slice(0, 12)}: no ${paths.command}.conf: ` +
        "the host's first boot did not start (or the stack's settings name another command)\n",
    );
    expect(readdirSync(join(dir, "sbin"))).toEqual([]);
  });

  test("installs the tool (mode 700) with an audit line naming both versions, then changes nothing for the same version", () => {
    const first = install(tool.text);
    expect({ status: first.status, stderr: first.stderr }).toEqual({ status: 0, stderr: "" });
    expect(first.stdout).toBe(`none ${tool.version}\n`);
    expect(readFileSync(paths.command, "utf8")).toBe(tool.text);
    expect(statSync(paths.command).mode & 0o777).toBe(0o700);
    const short = tool.version.slice(0, 12);
    expect(readFileSync(paths.log, "utf8")).toMatch(
      new RegExp(`^\\S+ alice install-tool: none -> ${short}: ok \\(tool ${short}\\)\\n$`),
    );
    const again = install(tool.text);
    expect({ status: again.status, stdout: again.stdout }).toEqual({ status: 0, stdout: `${tool.version}\n` });
    expect(readFileSync(paths.log, "utf8").split("\n")).toHaveLength(2);
  });

  test("a cut-off copy, a failed write and a busy lock leave the previous tool as it was, each said in one line", async () => {
    const older = stampOpsTool(renderOpsToolBody().replace("ops_main() {", "# an older rendering\nops_main() {"));
    const olderVersion = older.split("\n")[1].split("=")[1];
    expect(install(older, olderVersion).status).toBe(0);
    const same = () => expect(readFileSync(paths.command, "utf8")).toBe(older);

    const cut = install(tool.text.slice(0, tool.text.length / 2));
    expect(cut.status).toBe(1);
    expect(cut.stderr).toBe(
      `ops-install: the host keeps its tool ${olderVersion.slice(0, 12)}, not updated to ${tool.version.slice(0, 12)}: what arrived is not that version (cut off?)\n`,
    );
    same();

    // A file system that takes no more than 4 KiB of a file: the write fails as on a full disk.
    const full = install(tool.text, tool.version, "trap '' XFSZ; ulimit -f 8");
    expect(full.status).toBe(1);
    expect(full.stderr).toMatch(
      /^ops-install: the host keeps its tool \w{12}, not updated to \w{12}: writing it failed: File too large\n$/,
    );
    same();
    expect(readdirSync(join(dir, "sbin")).sort()).toEqual(["crm-ops", "crm-ops.conf"]);

    // An action holds the lock (ops_lock, as the tool takes it): busy, exit 75, naming the holder.
    const functions = OPS_INSTALLER.slice(0, OPS_INSTALLER.indexOf("\nset -Eeuo pipefail"));
    const holder = spawn(
      "bash",
      [
        "-c",
        `${functions}\nOPS_LOCK=$1 SUDO_USER=bob MAIN_SUBSHELL=0\nops_lock "release v2"\necho held\nsleep 20`,
        "holder",
        paths.lock,
      ],
      { stdio: ["ignore", "pipe", "inherit"], detached: true },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("held")) resolve();
        });
        setTimeout(() => reject(new Error("the holder did not take the lock within 10 s")), 10_000);
      });
      const busy = install(tool.text);
      expect(busy.status).toBe(75);
      expect(busy.stderr).toMatch(
        /^ops-install: the host keeps its tool \w{12}, not updated to \w{12}: busy: release v2 by bob \(pid \d+, since \S+\)\n$/,
      );
    } finally {
      process.kill(-holder.pid!, "SIGKILL");
      holder.stdout.destroy();
    }
    same();
  }, 30_000);

  test("beside a first boot, which holds the ops lock for its whole run (a scale-out host waiting for db-setup), installs under the installers' lock", async () => {
    const functions = OPS_INSTALLER.slice(0, OPS_INSTALLER.indexOf("\nset -Eeuo pipefail"));
    /** A process that holds `lock` as `takes` says, until killed. */
    const holding = async (takes: string) => {
      const holder = spawn(
        "bash",
        ["-c", `${functions}\nOPS_LOCK=$1 MAIN_SUBSHELL=0\n${takes}\necho held\nsleep 20`, "holder", paths.lock],
        { stdio: ["ignore", "pipe", "inherit"], detached: true },
      );
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("held")) resolve();
        });
        setTimeout(() => reject(new Error("the holder did not take the lock within 10 s")), 10_000);
      });
      return () => {
        process.kill(-holder.pid!, "SIGKILL");
        holder.stdout.destroy();
      };
    };
    // The first boot's lock (main: ops_lock provision, as root).
    const firstBoot = await holding("ops_lock provision");
    try {
      const beside = install(tool.text);
      expect({ status: beside.status, stderr: beside.stderr, stdout: beside.stdout }).toEqual({
        status: 0,
        stderr: "",
        stdout: `none ${tool.version}\n`,
      });
      expect(readFileSync(paths.command, "utf8")).toBe(tool.text);
      // Another install at the same time: the installers' lock is busy.
      const older = stampOpsTool(renderOpsToolBody().replace("ops_main() {", "# an older rendering\nops_main() {"));
      const installing = await holding(`exec {fd}>>"$OPS_LOCK.install"; flock -n "$fd"`);
      try {
        const busy = install(older, older.split("\n")[1].split("=")[1]);
        expect(busy.status).toBe(75);
        expect(busy.stderr).toMatch(
          /^ops-install: the host keeps its tool \w{12}, not updated to \w{12}: busy: another install of the tool\n$/,
        );
      } finally {
        installing();
      }
    } finally {
      firstBoot();
    }
    expect(readFileSync(paths.command, "utf8")).toBe(tool.text);
  }, 30_000);

  test("an older host's command (no version, no configuration): its settings become the configuration, then the tool runs with them", () => {
    rmSync(`${paths.command}.conf`);
    const legacy = readFileSync(join(__dirname, "legacy", "crm-ops"), "utf8").replaceAll("/LEGACYROOT", dir);
    writeFileSync(paths.command, legacy, { mode: 0o700 });
    const legacyVersion = `legacy-${spawnSync("sha256sum", [], { input: legacy, encoding: "utf8" }).stdout.slice(0, 12)}`;
    const result = install(tool.text);
    expect({ status: result.status, stderr: result.stderr, stdout: result.stdout }).toEqual({
      status: 0,
      stderr: "",
      stdout: `${legacyVersion} ${tool.version}\n`,
    });
    expect(readFileSync(paths.log, "utf8")).toContain(
      `alice install-tool: ${legacyVersion} -> ${tool.version.slice(0, 12)}: ok`,
    );
    const conf = readFileSync(`${paths.command}.conf`, "utf8");
    expect(statSync(`${paths.command}.conf`).mode & 0o777).toBe(0o600);
    // What the older command held, as bash reads it back: its readonly lines, no secret, none of bash's own.
    expect(conf.split("\n").filter(Boolean)).toEqual(
      legacy
        .split("\n")
        .filter(
          (line) =>
            line.startsWith("declare -") &&
            !/^declare -[a-z]+ [a-z_]+ \(\)/.test(line) &&
            /^declare -[a-z]*r[a-z]* [A-Z_]+=/.test(line),
        )
        .concat()
        .filter((line) => conf.includes(line)),
    );
    expect(conf).toContain(`declare -r OPS_COMMAND="${paths.command}"`);
    expect(conf).not.toMatch(/_B64=|BASHOPTS/);
    // The tool reads it: an action it does not know names the command the configuration gives.
    chmodSync(paths.command, 0o700);
    const run = spawnSync(paths.command, ["no-such-action"], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`usage: ${paths.command} release REF`);
  });
});
