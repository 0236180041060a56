/**
 * `npm run figures`: measures the figures the README states (synthesis time and memory, test
 * counts and durations, the whole test command) and writes them, with the date, the commit and
 * the machine, between `<!-- BEGIN GENERATED: figures -->` markers. Figures are never copied by
 * hand: rerun this after a change that moves them. It takes a few minutes (it runs the test
 * suite twice and `npm test` once); `--ci` also times `.ci/run` on a fresh clone.
 */
import { spawnSync } from "child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { cpus, loadavg, tmpdir, totalmem } from "os";
import { join, resolve } from "path";
import { README_FILE } from "./docs";
import { replaceSection } from "./docs/readme";

const root = resolve(__dirname, "..");
const env = { ...process.env, CHECKPOINT_DISABLE: "1" };

/** Runs a command in the repository; returns its output and wall time; fails on a non-zero exit. */
function timed(command: string, args: string[], cwd = root): { seconds: number; stdout: string } {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}`);
  }
  return { seconds, stdout: result.stdout };
}

const git = (...args: string[]) => timed("git", args).stdout.trim();

/** jest with a JSON report: counts and wall time. */
function jest(extra: string[]): { seconds: number; passed: number; failed: number; skipped: number } {
  const dir = mkdtempSync(join(tmpdir(), "crm-figures-"));
  try {
    const report = join(dir, "jest.json");
    const { seconds } = timed("npx", ["jest", "--json", `--outputFile=${report}`, ...extra]);
    const json = JSON.parse(readFileSync(report, "utf8"));
    return { seconds, passed: json.numPassedTests, failed: json.numFailedTests, skipped: json.numPendingTests };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function machine(): string {
  const os = /^PRETTY_NAME="?([^"\n]*)/m.exec(readFileSync("/etc/os-release", "utf8"))?.[1] ?? "Linux";
  const cpu = cpus();
  return `${cpu.length} cores (${cpu[0]?.model.trim() ?? "unknown CPU"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${os}, Node.js ${process.version}`;
}

const s = (seconds: number) => (seconds >= 60 ? `${Math.floor(seconds / 60)} min ${(seconds % 60).toFixed(0)} s` : `${seconds.toFixed(1)} s`);
const counted = (run: ReturnType<typeof jest>) => `${run.passed} passed, ${run.failed} failed, ${run.skipped} skipped in ${s(run.seconds)}`;

function main(): void {
  const dirty = git("status", "--porcelain", "--untracked-files=no") === "" ? "" : " plus uncommitted changes";
  const commit = `${git("rev-parse", "--short", "HEAD")}${dirty}`;
  // Times depend on what else the machine runs: say how busy it was.
  const loadAtStart = loadavg()[0];
  const rows: [string, string, string][] = [];

  const bench = timed("node", ["scripts/bench.js", "--runs", "15", "--cli-runs", "3"]).stdout;
  for (const line of bench.trim().split("\n")) {
    // "<what>: median 0.300 s, … over 15 runs (target: …)", "<what>: ratio 1.10 of the median wall times (target: …)"
    // or "<what>: count 218 (…)"
    const match = /^(.*?): ((?:median|ratio|count) .*?)(?: \(target: (.*)\))?$/.exec(line);
    if (match) rows.push([match[1], `\`npm run bench\`: ${match[2]}`, match[3] ?? ""]);
  }
  const unit = jest(["--testPathIgnorePatterns", "/node_modules/", "/__tests__/(engine|integration)/"]);
  rows.push(["jest, unit tests (all but `__tests__/engine` and `__tests__/integration`)", `\`npx jest --testPathIgnorePatterns …\`: ${counted(unit)}`, "< 15 s"]);
  const all = jest([]);
  rows.push(["jest, whole suite (engine and integration included)", `\`npx jest\`: ${counted(all)}`, ""]);
  rows.push(["CDK Terrain check, warm caches (`bash scripts/cdktn/check.sh`)", s(timed("bash", ["scripts/cdktn/check.sh"]).seconds), ""]);
  rows.push(["`npm test` in all (tsc, jest, CDK Terrain check, boot test, synth + checkov, actionlint)", s(timed("bash", ["scripts/check.sh"]).seconds), ""]);
  if (process.argv.includes("--ci")) {
    const clone = mkdtempSync(join(tmpdir(), "crm-figures-clone-"));
    try {
      timed("git", ["clone", "--quiet", root, clone]);
      rows.push(["`.ci/run` on a fresh clone of the commit, tools already cached", s(timed("bash", [".ci/run"], clone).seconds), ""]);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  }

  const table = [
    `Measured by \`npm run figures\` on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, commit ${commit}, on ${machine()}; `
      + `load average ${loadAtStart.toFixed(1)} at the start and ${loadavg()[0].toFixed(1)} at the end (1 minute; more than the core count means other work competed for the CPU).`,
    "",
    "| what | measured | target |",
    "| --- | --- | --- |",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
  writeFileSync(README_FILE, replaceSection(readFileSync(README_FILE, "utf8"), "figures", table, "`npm run figures` (scripts/figures.ts)"));
  console.log(table);
}

main();
