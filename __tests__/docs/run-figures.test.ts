/**
 * `npm run docs:run` (scripts/docs-run.ts): the table of phases that scripts/check.sh writes is read
 * back and pasted into the README's and docs/testing.md's `check-run` sections, naming the run.
 */
import { execFile } from "child_process";
import { mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { parseRun, readmeLine, runTable, USAGE, withRun } from "../../scripts/docs-run";

const ROOT = resolve(__dirname, "../..");
/** A file as scripts/ci/phases.sh writes it (__tests__/scripts/ci/phases.test.ts shows the runner writing one). */
const RUN = [
  "# commit\tabc1234",
  "# date\t2026-11-27 09:00 UTC",
  "# machine\t2 cores, AMD EPYC",
  "# wall\t1412345",
  "phase\tstart\tduration\tresult\tcounts",
  "boot\t12\t1398000\tpassed\tboot: 103 passed, 0 failed",
  "typecheck\t40\t52000\tpassed\t",
  "jest\t52100\t701000\tpassed\tjest: 1278 passed, 0 failed, 0 skipped",
  "workflows\t900000\t9000\tskipped\t",
  "",
].join("\n");

describe("npm run docs:run", () => {
  const run = parseRun(RUN);

  it("reads the run's commit, date, machine, wall time and phases", () => {
    expect(run).toMatchObject({
      commit: "abc1234",
      date: "2026-11-27 09:00 UTC",
      machine: "2 cores, AMD EPYC",
      wallMs: 1412345,
    });
    expect(run.phases.map((phase) => [phase.name, phase.durationMs, phase.result])).toEqual([
      ["boot", 1398000, "passed"],
      ["typecheck", 52000, "passed"],
      ["jest", 701000, "passed"],
      ["workflows", 9000, "skipped"],
    ]);
  });

  it("refuses a file that is not a run's table, naming what is missing", () => {
    expect(() => parseRun(RUN.replace(/^# wall.*\n/m, ""))).toThrow('the run file has no "# wall" line');
    expect(() => parseRun(RUN.replace("\t52000\t", "\tfast\t"))).toThrow(/not a row of a phase .*typecheck/);
    expect(() => parseRun(RUN.split("\nphase")[0])).toThrow("the run file lists no phase");
  });

  it("renders the table with the run named, and the README's line with the boot test's share", () => {
    expect(runTable(run)).toBe(
      [
        "`npm test` in the run of abc1234 on 2026-11-27 09:00 UTC (2 cores, AMD EPYC): passed in 1,412 s (24 min).",
        "",
        "| phase | start | duration | result |",
        "|---|---|---|---|",
        "| boot | +0 s | 1,398 s | passed: boot: 103 passed, 0 failed |",
        "| typecheck | +0 s | 52 s | passed |",
        "| jest | +52 s | 701 s | passed: jest: 1278 passed, 0 failed, 0 skipped |",
        "| workflows | +900 s | 9 s | skipped |",
      ].join("\n"),
    );
    expect(readmeLine(run)).toBe(
      "`npm test` took 1,412 s (24 min), the VM boot test's hosts A and B 23 min of it, with the other phases beside them, in the run of abc1234 " +
        "on 2026-11-27 09:00 UTC (2 cores, AMD EPYC); the phases: [docs/testing.md](docs/testing.md#the-phases-of-one-run).",
    );
    expect(runTable(parseRun(RUN.replace("\tskipped\t", "\tfailed (exit 1)\t")))).toMatch(/: FAILED in 1,412 s/);
  });

  it("gives each phase's CPU time and the machine's busy time where the run counted them (a control group per phase)", () => {
    const counted = parseRun(
      RUN.replace("# wall\t1412345", "# wall\t1412345\n# busy\t2740000")
        .replace("\tcounts\n", "\tcounts\tcpu\n")
        .replace("0 failed\n", "0 failed\t1210500\n")
        .replace("typecheck\t40\t52000\tpassed\t", "typecheck\t40\t52000\tpassed\t\t61000")
        .replace("0 skipped\n", "0 skipped\t1299000\n"),
    );
    expect(counted.busyMs).toBe(2740000);
    expect(counted.phases.map((phase) => phase.cpuMs)).toEqual([1210500, 61000, 1299000, undefined]);
    expect(runTable(counted)).toBe(
      [
        "`npm test` in the run of abc1234 on 2026-11-27 09:00 UTC (2 cores, AMD EPYC): passed in 1,412 s (24 min); the machine was busy 2,740 core-s, " +
          "1.94 of its 2 cores on average.",
        "",
        "| phase | start | duration | CPU | result |",
        "|---|---|---|---|---|",
        "| boot | +0 s | 1,398 s | 1,211 core-s | passed: boot: 103 passed, 0 failed |",
        "| typecheck | +0 s | 52 s | 61 core-s | passed |",
        "| jest | +52 s | 701 s | 1,299 core-s | passed: jest: 1278 passed, 0 failed, 0 skipped |",
        "| workflows | +900 s | 9 s | – | skipped |",
      ].join("\n"),
    );
    expect(() => parseRun(RUN.replace("\tpassed\t\n", "\tpassed\t\tmuch\n"))).toThrow(
      /not a row of a phase .*typecheck/,
    );
  });

  it("fills the pages' own sections, and only those, idempotently", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const testing = readFileSync(join(ROOT, "docs", "testing.md"), "utf8");
    const once = withRun(readme, testing, run);
    expect(once.readme).toContain(readmeLine(run));
    expect(once.testing).toContain(runTable(run));
    const outside = (text: string) =>
      text.replace(/<!-- BEGIN GENERATED: check-run -->[\s\S]*<!-- END GENERATED: check-run -->/, "");
    expect(outside(once.readme)).toBe(outside(readme));
    expect(outside(once.testing)).toBe(outside(testing));
    expect(withRun(once.readme, once.testing, run)).toEqual(once);
  });

  it.each([
    [["--help"], 0, "stdout", USAGE],
    [["-x"], 2, "stderr", 'docs:run: takes one run file at most, no option but --help; got "-x"'],
    [["a.tsv", "b.tsv"], 2, "stderr", 'docs:run: takes one run file at most, no option but --help; got "a.tsv b.tsv"'],
  ])(
    "answers %j with exit %i and one line of text",
    async (args, code, stream, text) => {
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          "npx",
          ["tsx", "scripts/docs-run.ts", ...args],
          { cwd: ROOT, timeout: 60_000 },
          (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
        ),
      );
      expect(result.code).toBe(code);
      expect(result[stream as "stdout" | "stderr"]).toBe(`${text}\n`);
      expect(result[stream === "stdout" ? "stderr" : "stdout"]).toBe("");
    },
    60_000,
  );

  it("says what to do when there is no run file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-docs-run-"));
    try {
      const result = await new Promise<{ code: number; stderr: string }>((done) =>
        execFile(
          "npx",
          ["tsx", "scripts/docs-run.ts", join(dir, "missing.tsv")],
          { cwd: ROOT, timeout: 60_000 },
          (error, _stdout, stderr) => done({ code: error ? Number(error.code) : 0, stderr }),
        ),
      );
      expect(result).toEqual({
        code: 2,
        stderr: `docs:run: no ${join(dir, "missing.tsv")}: run npm test first (scripts/check.sh writes it), or name the run's file\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
