/**
 * `npm run docs:run [-- FILE]`: pastes the table of phases of one `npm test` run (FILE, default
 * test-results/check-run.tsv, which scripts/check.sh writes at the end of every run) into the
 * README's and docs/testing.md's `check-run` sections, so that the time the pages give is the one of
 * a named run (its commit, date and machine), not a figure from memory. Run it after the fresh-clone
 * run whose figures the pages should cite, and commit the result.
 */
import { readFileSync, writeFileSync } from "fs";
import { resolve } from "path";
import { replaceSection } from "./docs/readme";

const ROOT = resolve(__dirname, "..");
export const RUN_FILE = resolve(ROOT, "test-results", "check-run.tsv");
const GENERATOR = "`npm run docs:run` (scripts/docs-run.ts) from a run's test-results/check-run.tsv";

export interface Phase {
  readonly name: string;
  /** Offset from the run's start, and duration, in ms. */
  readonly startMs: number;
  readonly durationMs: number;
  readonly result: string;
  readonly counts: string;
  /** The CPU time of all the phase ran, in ms (its control group's); undefined where the run had none. */
  readonly cpuMs?: number;
}

export interface CheckRun {
  readonly commit: string;
  readonly date: string;
  readonly machine: string;
  readonly wallMs: number;
  /** The CPU time the whole machine was busy during the run, in ms (older files lack it). */
  readonly busyMs?: number;
  readonly phases: Phase[];
}

/** The file scripts/ci/phases.sh writes: `# key<TAB>value` lines, a header row, a row per phase (its cpu may be empty). */
export function parseRun(text: string): CheckRun {
  const meta = new Map<string, string>();
  const phases: Phase[] = [];
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  for (const line of lines) {
    const fields = line.split("\t");
    if (line.startsWith("# ")) meta.set(fields[0].slice(2), fields.slice(1).join("\t"));
    else if (fields[0] !== "phase") {
      const [name, start, duration, result, counts = "", cpu = ""] = fields;
      if (!/^\d+$/.test(start ?? "") || !/^\d+$/.test(duration ?? "") || !result || !/^\d*$/.test(cpu)) {
        throw new Error(
          `not a row of a phase (name, start ms, duration ms, result, counts, cpu ms): ${JSON.stringify(line)}`,
        );
      }
      phases.push({
        name,
        startMs: Number(start),
        durationMs: Number(duration),
        result,
        counts,
        ...(cpu ? { cpuMs: Number(cpu) } : {}),
      });
    }
  }
  for (const key of ["commit", "date", "machine", "wall"]) {
    if (!meta.has(key))
      throw new Error(`the run file has no "# ${key}" line: is it scripts/check.sh's test-results/check-run.tsv?`);
  }
  if (phases.length === 0) throw new Error("the run file lists no phase");
  const busy = meta.get("busy");
  return {
    commit: meta.get("commit")!,
    date: meta.get("date")!,
    machine: meta.get("machine")!,
    wallMs: Number(meta.get("wall")),
    ...(busy && /^\d+$/.test(busy) ? { busyMs: Number(busy) } : {}),
    phases,
  };
}

const seconds = (ms: number) => `${Math.round(ms / 1000).toLocaleString("en-US")} s`;
const coreSeconds = (ms: number) => `${Math.round(ms / 1000).toLocaleString("en-US")} core-s`;
const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
const passed = (run: CheckRun) => run.phases.every((phase) => phase.result === "passed" || phase.result === "skipped");

/** Who ran what, where: the sentence both pages start with. */
function named(run: CheckRun): string {
  return `the run of ${run.commit} on ${run.date} (${run.machine})`;
}

/** The machine's busy CPU time over the run, and what that is in cores busy on average (the run's floor). */
function busy(run: CheckRun): string {
  if (run.busyMs === undefined) return "";
  const cores = Number(/^(\d+) cores?/.exec(run.machine)?.[1] ?? 0);
  return (
    `; the machine was busy ${coreSeconds(run.busyMs)}, ${(run.busyMs / run.wallMs).toFixed(2)}` +
    `${cores ? ` of its ${cores}` : ""} cores on average`
  );
}

/** docs/testing.md's section: the run named, then the table of its phases (with their CPU time when the run counted it). */
export function runTable(run: CheckRun): string {
  const cpu = run.phases.some((phase) => phase.cpuMs !== undefined);
  const rows = run.phases.map(
    (phase) =>
      `| ${phase.name} | +${seconds(phase.startMs)} | ${seconds(phase.durationMs)} | ` +
      `${cpu ? `${phase.cpuMs === undefined ? "–" : coreSeconds(phase.cpuMs)} | ` : ""}` +
      `${phase.result}${phase.counts ? `: ${phase.counts}` : ""} |`,
  );
  return [
    `\`npm test\` in ${named(run)}: ${passed(run) ? "passed" : "FAILED"} in ${seconds(run.wallMs)} (${minutes(run.wallMs)})${busy(run)}.`,
    "",
    cpu ? "| phase | start | duration | CPU | result |" : "| phase | start | duration | result |",
    cpu ? "|---|---|---|---|---|" : "|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** The README's section: the whole run's time and the share of the boot test's long pole (phase boot: hosts A and B), with the run named. */
export function readmeLine(run: CheckRun): string {
  const boot = run.phases.find((phase) => phase.name === "boot");
  const share = boot
    ? `, the VM boot test's hosts A and B ${minutes(boot.durationMs)} of it, with the other phases beside them`
    : "";
  return `\`npm test\` took ${seconds(run.wallMs)} (${minutes(run.wallMs)})${share}, in ${named(run)}; the phases: [docs/testing.md](docs/testing.md#the-phases-of-one-run).`;
}

export function withRun(readme: string, testing: string, run: CheckRun): { readme: string; testing: string } {
  return {
    readme: replaceSection(readme, "check-run", readmeLine(run), GENERATOR, "README.md"),
    testing: replaceSection(testing, "check-run", runTable(run), GENERATOR, "docs/testing.md"),
  };
}

export const USAGE = `usage: npm run docs:run [-- FILE]
pastes the phases of one npm test run (FILE, default test-results/check-run.tsv) into the README's and
docs/testing.md's check-run sections, naming the run (commit, date, machine); commit the result.`;

if (require.main === module) {
  const argument = process.argv[2];
  if (argument === "-h" || argument === "--help") {
    console.log(USAGE);
    process.exit(0);
  }
  if (argument?.startsWith("-") || process.argv.length > 3) {
    console.error(
      `docs:run: takes one run file at most, no option but --help; got ${JSON.stringify(process.argv.slice(2).join(" "))}`,
    );
    process.exit(2);
  }
  const file = resolve(argument ?? RUN_FILE);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    console.error(`docs:run: no ${file}: run npm test first (scripts/check.sh writes it), or name the run's file`);
    process.exit(2);
  }
  const readmeFile = resolve(ROOT, "README.md");
  const testingFile = resolve(ROOT, "docs", "testing.md");
  const next = withRun(readFileSync(readmeFile, "utf8"), readFileSync(testingFile, "utf8"), parseRun(text));
  writeFileSync(readmeFile, next.readme);
  writeFileSync(testingFile, next.testing);
  console.log(`docs:run: README.md and docs/testing.md now cite ${file}`);
}
