/**
 * scripts/ci/phases.sh, the phase runner of `npm test` (scripts/check.sh), with tiny shell phases
 * instead of the real ones: lanes run side by side, each phase's log is printed whole, a failing
 * phase fails the run and shows its log, the table of phases and the total close the run (and are
 * written to a file), and SIGTERM or SIGINT stops every phase and everything it started.
 */
import { spawn } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { describeWithTools } from "../../support/required-tools";

const RUNNER = resolve(__dirname, "../../../scripts/ci/phases.sh");
const CHECK = resolve(__dirname, "../../../scripts/check.sh");
/** Where phases.sh looks for a hierarchy to make its control groups in (phases_cgroup_make), in its order. */
const CGROUP_ROOTS = [
  "/sys/fs/cgroup",
  "/sys/fs/cgroup/unified",
  "/sys/fs/cgroup/cpuacct",
  "/sys/fs/cgroup/cpu,cpuacct",
];

/** What this machine lacks for phases.sh's control groups: none where it can make one in any of CGROUP_ROOTS. */
function cgroupMissing(): string[] {
  for (const root of CGROUP_ROOTS) {
    if (!existsSync(join(root, "cgroup.controllers")) && !existsSync(join(root, "cpuacct.usage"))) continue;
    const probe = join(root, `crm-phases-probe.${process.pid}`);
    try {
      mkdirSync(probe);
      rmdirSync(probe);
      return [];
    } catch {
      // not this one
    }
  }
  return ["a control group hierarchy this user may write (root, or cgroup v2 delegation)"];
}

/** The control groups that this test's runs of phases.sh (their pids) left: crm-check.<pid> (not npm test's own). */
function cgroupsLeft(pids: number[]): string[] {
  return CGROUP_ROOTS.flatMap((root) => pids.map((pid) => join(root, `crm-check.${pid}`))).filter((group) =>
    existsSync(group),
  );
}

/** Phases a test's script can use; each marker file is under $W (the test's directory). */
const PHASES = `
wait_for() { for _ in $(seq 200); do [[ -e "$W/$1" ]] && return 0; sleep 0.1; done; echo "no $1" >&2; return 1; }
phase_left() { touch "$W/left-started"; wait_for right-started; for i in 1 2 3; do echo "left $i"; sleep 0.1; done; echo "left: 2 passed, 0 failed"; }
phase_right() { touch "$W/right-started"; wait_for left-started; for i in 1 2 3; do echo "right $i"; sleep 0.1; done; echo "right: 3 passed, 1 failed"; }
phase_fails() { echo "fails: before the error"; false; echo "fails: never printed"; }
phase_after() { echo "after: ran"; echo "after: 1 passed, 0 failed"; }
phase_skips() { echo "SKIPPED skips: its tool is missing" >&2; }
phase_nice() { echo "niceness $(ps -o ni= -p $BASHPID | tr -d ' ')"; echo "tmpdir $TMPDIR"; }
phase_sleeps() { bash -c 'exec -a "crm-phase-sleep-$MARK" sleep 300' & touch "$W/sleeps-started"; wait; }
phase_stubborn() { bash -c 'trap "" TERM; exec -a "crm-phase-stubborn-$MARK" sleep 300' & touch "$W/stubborn-started"; wait; }
# A process that leaves the phase's tree (its own session, never waited for) and spends 1 s of CPU (its own
# count, from /proc, so that a loaded machine changes nothing), then says so.
phase_escapes() {
  setsid bash -c 'hz=$(getconf CLK_TCK); while read -r -a f </proc/$BASHPID/stat && ((f[13] + f[14] < hz)); do :; done; touch "$W/spent"' &
  disown
  wait_for spent
}
`;

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  readonly ms: number;
}

describe("scripts/ci/phases.sh", () => {
  let dir: string;
  /** The runs' pids, which name their control groups. */
  const pids: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-phases-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs `body` (lane calls) between phases_begin and phases_end; `signal` is sent once every file of `after` exists. */
  function run(body: string, stop?: { signal: NodeJS.Signals; after: string[] }): Promise<Run> {
    const mark = String(process.pid) + Date.now();
    const script = `set -euo pipefail\nsource ${JSON.stringify(RUNNER)}\n${PHASES}\nphases_begin\n${body}\nphases_end "$W/report.tsv"\n`;
    writeFileSync(join(dir, "run.sh"), script);
    const started = Date.now();
    const child = spawn("bash", [join(dir, "run.sh")], {
      cwd: dir,
      env: { ...process.env, W: dir, MARK: mark, TMPDIR: dir, CRM_CHECK_GRACE: "3" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid) pids.push(child.pid);
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    if (stop) {
      const poll = setInterval(() => {
        if (stop.after.every((name) => existsSync(join(dir, name)))) {
          clearInterval(poll);
          child.kill(stop.signal);
        }
      }, 50);
      child.on("exit", () => clearInterval(poll));
    }
    const bound = setTimeout(() => child.kill("SIGKILL"), 60_000);
    return new Promise((done) =>
      child.on("close", (code, signal) => {
        clearTimeout(bound);
        done({ code, signal, output, ms: Date.now() - started });
      }),
    );
  }

  /** The lines of one phase's block in the output, between its heading and its end line. */
  function block(output: string, name: string): string[] {
    const lines = output.split("\n");
    const start = lines.findIndex((line) => line.startsWith(`== ${name}: `));
    const end = lines.indexOf(`== end of ${name}`);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    return lines.slice(start + 1, end);
  }

  /** Processes whose command line carries this test's marker (the phases' sleeps). */
  function leftOver(): string[] {
    return readdirSync("/proc")
      .filter((pid) => /^\d+$/.test(pid))
      .flatMap((pid) => {
        try {
          const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
          return /crm-phase-(sleep|stubborn)-/.test(command) && command.includes(String(process.pid)) ? [command] : [];
        } catch {
          return [];
        }
      });
  }

  it("runs the lanes side by side, prints each phase's log whole, and ends with the table and the total", async () => {
    const result = await run("lane left\nlane --nice 10 right skips");
    expect(result.code).toBe(0);
    // Each phase waited for the other to start: they ran at once.
    expect(block(result.output, "left")).toEqual(["left 1", "left 2", "left 3", "left: 2 passed, 0 failed"]);
    expect(block(result.output, "right")).toEqual(["right 1", "right 2", "right 3", "right: 3 passed, 1 failed"]);
    expect(block(result.output, "skips")).toEqual(["SKIPPED skips: its tool is missing"]);
    const table = result.output.slice(result.output.indexOf("== phases"));
    expect(table).toMatch(/^left +\+\d+\.\d s +\d+\.\d s +(\d+\.\d s +)?passed: left: 2 passed, 0 failed$/m);
    expect(table).toMatch(/^right +\+\d+\.\d s +\d+\.\d s +(\d+\.\d s +)?passed: right: 3 passed, 1 failed$/m);
    expect(table).toMatch(/^skips +\+\d+\.\d s +\d+\.\d s +(\d+\.\d s +)?skipped$/m);
    expect(table).toMatch(
      /^all +\d+\.\d s +\d+\.\d s +passed; cpu: the whole machine's, \d+\.\d\d of \d+ cores busy on average$/m,
    );
    expect(result.output.trimEnd().split("\n").pop()).toBe("total: 5 passed, 1 failed");
    const report = readFileSync(join(dir, "report.tsv"), "utf8");
    expect(report).toMatch(/^# commit\t/m);
    expect(report).toMatch(/^# wall\t\d+$/m);
    expect(report).toMatch(/^# busy\t\d+$/m);
    // The rows go by their phases' start, which the lanes' scheduling decides (right's may come first).
    // The CPU column is empty where the run cannot make control groups (the next test).
    expect(report).toMatch(/^phase\tstart\tduration\tresult\tcounts\tcpu$/m);
    expect(report).toMatch(/^left\t\d+\t\d+\tpassed\tleft: 2 passed, 0 failed\t\d*$/m);
    expect(report).toMatch(/^right\t\d+\t\d+\tpassed\tright: 3 passed, 1 failed\t\d*$/m);
    expect(report).toMatch(/^skips\t\d+\t\d+\tskipped\t\t\d*$/m);
  });

  it("fails the run when a phase fails, showing that phase's log; the other phases still run", async () => {
    const result = await run("lane left\nlane right\nlane --nice 10 fails after");
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/^== fails: failed \(exit 1\) after \d+\.\d s$/m);
    expect(block(result.output, "fails")).toEqual(["fails: before the error"]);
    expect(block(result.output, "after")).toEqual(["after: ran", "after: 1 passed, 0 failed"]);
    expect(result.output).toMatch(/^fails +\+\d+\.\d s +\d+\.\d s +(\d+\.\d s +)?failed \(exit 1\)$/m);
    expect(result.output).toMatch(/^all +\d+\.\d s +\d+\.\d s +failed; cpu: /m);
    expect(result.output.trimEnd().split("\n").pop()).toBe("total: 6 passed, 1 failed");
  });

  describeWithTools("with a control group per phase", cgroupMissing(), () => {
    it("counts each phase's CPU time, also of what left its process tree, and removes its groups", async () => {
      const result = await run("lane escapes\nlane --nice 10 after");
      expect(result.code).toBe(0);
      const rows = readFileSync(join(dir, "report.tsv"), "utf8")
        .split("\n")
        .map((line) => line.split("\t"));
      const cpu = (name: string) => Number(rows.find((row) => row[0] === name)?.[5]);
      // 1 s of its own, and the phase's bash around it; a control group counts it although no one reaped it.
      expect(cpu("escapes")).toBeGreaterThanOrEqual(1000);
      expect(cpu("escapes")).toBeLessThan(1000 + Number(rows.find((row) => row[0] === "escapes")?.[2]) * 2);
      expect(cpu("after")).toBeGreaterThanOrEqual(0);
      expect(cgroupsLeft(pids)).toEqual([]);
    }, 60_000);
  });

  it("runs a niced lane's phases at that niceness, each with a TMPDIR of its own, removed at the end", async () => {
    const result = await run("lane --nice 7 nice");
    expect(result.code).toBe(0);
    const [niceness, tmp] = block(result.output, "nice");
    expect(niceness).toBe(
      `niceness ${Math.min(19, 7 + Number(readFileSync("/proc/self/stat", "utf8").split(" ")[18]))}`,
    );
    expect(tmp).toMatch(new RegExp(`^tmpdir ${dir}/crm-check\\.\\w+/tmp/nice$`));
    expect(readdirSync(dir).filter((name) => name.startsWith("crm-check."))).toEqual([]);
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)(
    "%s stops every phase and what it started, a stubborn one after the grace",
    async (signal, code) => {
      const result = await run("lane sleeps\nlane --nice 10 stubborn", {
        signal,
        after: ["sleeps-started", "stubborn-started"],
      });
      expect({ code: result.code, output: result.output }).toEqual({
        code,
        output: expect.stringContaining("check: stopping every phase"),
      });
      // The signal waits for both lanes' phases to start: under load the stubborn one could start first.
      // Well before the sleeps' 300 s: the grace (3 s) and no more.
      expect(result.ms).toBeLessThan(30_000);
      expect(existsSync(join(dir, "sleeps-started"))).toBe(true);
      expect(leftOver()).toEqual([]);
      expect(readdirSync(dir).filter((name) => name.startsWith("crm-check."))).toEqual([]);
      expect(cgroupsLeft(pids)).toEqual([]);
    },
    60_000,
  );

  it("npm test (scripts/check.sh) runs each of its phases once: the boot test's hosts A and B first, alone at normal priority, the rest niced beside it", () => {
    const text = readFileSync(CHECK, "utf8");
    const defined = [...text.matchAll(/^phase_([a-z-]+)\(\) \{$/gm)].map((m) => m[1]);
    const lanes = [...text.matchAll(/^lane (.*)$/gm)].map((m) => m[1].split(" "));
    expect(lanes).toEqual([["boot"], ["--nice", "10", ...defined.filter((name) => name !== "boot")]]);
    expect(defined.length).toBe(new Set(defined).size);
    expect(text.trimEnd().split("\n").pop()).toBe('phases_end "$REPORT"');
  });
});
