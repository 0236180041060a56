#!/usr/bin/env node
// Synthesis benchmark (`npm run bench`). Runs, interleaved so that a busy machine slows all alike:
//   - the baseline: a Node.js process that only loads cdktf (`require("cdktf")`);
//   - the app as `cdktf synth` runs it (scripts/run-app.js, transpile cache warm), writing a stack;
//   - the app after an edit (transpile cache empty: every .ts file goes through swc);
// then `cdktf synth` through the CLI. Prints the median wall time and peak memory of each, and the
// ratio of the app's synthesis to the baseline.
// Usage: node scripts/bench.js [--runs N] [--cli-runs N]
"use strict";
const { spawnSync } = require("child_process");
const { existsSync, mkdtempSync, rmSync } = require("fs");
const { tmpdir } = require("os");
const path = require("path");

const root = path.resolve(__dirname, "..");
const option = (name, fallback) => {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const runs = option("--runs", 15);
const cliRuns = option("--cli-runs", 3);
const transpileCache = path.join(root, "node_modules", ".cache", "crm-host-app");
const RATIO_TARGET = 1.25;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Runs a command once; returns wall seconds and the peak resident memory (MiB) of the process tree's largest child. */
function measure(command, args, env) {
  // GNU time's %M is the peak RSS (KiB) of the command, children included (the largest one).
  const timed = existsSync("/usr/bin/time");
  const started = process.hrtime.bigint();
  const result = spawnSync(timed ? "/usr/bin/time" : command, timed ? ["-f", "BENCH_MAXRSS_KIB=%M", command, ...args] : args, {
    cwd: root, env: { ...process.env, CHECKPOINT_DISABLE: "1", ...env }, encoding: "utf8",
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}`);
  }
  const rss = /BENCH_MAXRSS_KIB=(\d+)/.exec(result.stderr);
  return { seconds, mib: rss ? Number(rss[1]) / 1024 : NaN };
}

function report(label, samples, target) {
  const seconds = median(samples.map((s) => s.seconds));
  const mib = Math.max(...samples.map((s) => s.mib));
  const memory = Number.isNaN(mib) ? "peak memory n/a (no /usr/bin/time)" : `peak ${mib.toFixed(0)} MiB`;
  console.log(`${label}: median ${seconds.toFixed(3)} s, ${memory} over ${samples.length} runs${target ? ` (target: ${target})` : ""}`);
  return seconds;
}

const outdir = mkdtempSync(path.join(tmpdir(), "crm-bench-"));
try {
  const node = process.execPath;
  const app = ["scripts/run-app.js"];
  // cdktf passes the output directory to the app through CDKTF_OUTDIR, as here.
  const env = { CDKTF_OUTDIR: outdir };
  measure(node, app, env); // fills the transpile cache
  const baseline = [], warm = [], cold = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(measure(node, ["-e", 'require("cdktf")'], env));
    warm.push(measure(node, app, env));
    rmSync(transpileCache, { recursive: true, force: true });
    cold.push(measure(node, app, env));
  }
  const base = report("baseline: loading cdktf only (node -e 'require(\"cdktf\")')", baseline);
  const synth = report("app synthesis as cdktf runs it (node scripts/run-app.js)", warm, "<= 0.6 s, <= 120 MiB");
  report("app synthesis after an edit (transpile cache empty)", cold);
  const ratio = synth / base;
  console.log(`ratio app synthesis / loading cdktf: ${ratio.toFixed(2)} (target: <= ${RATIO_TARGET})`);

  if (cliRuns > 0) {
    const cli = [];
    const cdktf = path.join(root, "node_modules", ".bin", "cdktf");
    for (let i = 0; i < cliRuns; i++) cli.push(measure(cdktf, ["synth", "--output", outdir]));
    report("cdktf synth (CLI)", cli, "< 7 s");
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
