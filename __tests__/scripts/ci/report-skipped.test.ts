/**
 * scripts/ci/report-skipped.js on jest reports of the shape `jest --json` writes (the workflow-run
 * test runs it on a real one): a notice per test file that skipped tests, GitHub's escapes, the
 * 10-notice limit of a step, and a clear failure when there is no report.
 */
import { execFile } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { annotationsOf } from "../../support/workflow-runner";

const SCRIPT = resolve(__dirname, "../../../scripts/ci/report-skipped.js");

/** A test file's result: `passed` passing tests, then `skipped` skipped ones under `group`. */
function suite(name: string, passed: number, skipped: number, group = "a group") {
  return {
    name,
    assertionResults: [
      ...Array.from({ length: passed }, (_, i) => ({ status: "passed", title: `passes ${i}`, ancestorTitles: [] })),
      ...Array.from({ length: skipped }, (_, i) => ({
        status: i % 2 ? "todo" : "pending",
        title: `skips ${i}`,
        ancestorTitles: [group, "inner"],
      })),
    ],
  };
}

describe("report-skipped.js", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-report-skipped-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const report = (testResults: unknown, file = join(dir, "jest.json")): Promise<{ code: number; stdout: string }> => {
    if (testResults !== undefined) writeFileSync(file, JSON.stringify({ testResults }));
    return new Promise((done) =>
      execFile("node", [SCRIPT, file], { cwd: dir }, (error, stdout) =>
        done({ code: error ? Number(error.code) : 0, stdout }),
      ),
    );
  };

  it("escapes what GitHub's workflow commands give a meaning to", async () => {
    const result = await report([
      suite(join(dir, "a,b:c.test.ts"), 1, 1, "needs x, y: 100% (z)"),
      suite(join(dir, "clean.test.ts"), 3, 0),
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("::notice file=a%2Cb%3Ac.test.ts,title=1 of 2 tests skipped::");
    expect(annotationsOf(result.stdout)).toEqual([
      {
        level: "notice",
        properties: { file: "a,b:c.test.ts", title: "1 of 2 tests skipped" },
        message: "a,b:c.test.ts: 1 of 2 tests did not run: needs x, y: 100% (z) > inner",
      },
    ]);
    expect(result.stdout).toContain("report-skipped: 1 tests skipped in 1 of 2 test files");
  });

  it("keeps to GitHub's 10 notices of a step: the 10th names the other files", async () => {
    const result = await report(
      Array.from({ length: 12 }, (_, i) => suite(join(dir, `t${String(i).padStart(2, "0")}.test.ts`), 0, 2)),
    );
    const notices = annotationsOf(result.stdout);
    expect(notices).toHaveLength(10);
    expect(notices.slice(0, 9).map((notice) => notice.properties.file)).toEqual(
      Array.from({ length: 9 }, (_, i) => `t0${i}.test.ts`),
    );
    expect(notices[9]).toEqual({
      level: "notice",
      properties: { title: "3 more files skipped tests" },
      message: "6 tests in 3 more files did not run: t09.test.ts, t10.test.ts, t11.test.ts",
    });
    expect(result.stdout).toContain("report-skipped: 24 tests skipped in 12 of 12 test files");
  });

  it("fails clearly when jest left no report, or not its own", async () => {
    const missing = await report(undefined, join(dir, "none.json"));
    expect(missing.code).toBe(2);
    expect(annotationsOf(missing.stdout)[0].message).toMatch(/^cannot read jest's report .*none\.json: ENOENT/);
    writeFileSync(join(dir, "other.json"), "{}");
    const other = await report(undefined, join(dir, "other.json"));
    expect({ code: other.code, message: annotationsOf(other.stdout)[0].message }).toEqual({
      code: 2,
      message: `${join(dir, "other.json")} is not a jest JSON report (no testResults)`,
    });
  });
});
