#!/usr/bin/env node
// Synthesis benchmark (`npm run bench`). Runs, interleaved so that a busy machine slows all alike:
//   - the baseline: a Node.js process that only loads cdktf (`require("cdktf")`);
//   - the app as `cdktf synth` runs it (scripts/run-app.js, its caches warm), writing a stack;
//   - the app after an edit (caches empty: every .ts file goes through swc, every module is compiled);
// then `npx cdktf synth` through the CLI as on a fresh clone (caches empty) and again (caches warm).
// Prints the median wall time, CPU time and peak memory of each, the ratio of the app's
// synthesis to the baseline (wall time; CPU time, steadier on a busy machine, beside it), and
// how many modules the app loads, with and without its deferred modules.
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
  const result = spawnSync(timed ? "/usr/bin/time" : command, timed ? ["-f", "BENCH_MAXRSS_KIB=%M BENCH_CPU_S=%U+%S", command, ...args] : args, {
    cwd: root, env: { ...process.env, CHECKPOINT_DISABLE: "1", ...env }, encoding: "utf8",
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}`);
  }
  const rss = /BENCH_MAXRSS_KIB=(\d+)/.exec(result.stderr);
  const cpu = /BENCH_CPU_S=([\d.]+)\+([\d.]+)/.exec(result.stderr);
  return { seconds, mib: rss ? Number(rss[1]) / 1024 : NaN, cpu: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN };
}

/** Prints one line (`<label>: median …`, read by scripts/figures.ts); returns the medians. */
function report(label, samples, target) {
  const seconds = median(samples.map((s) => s.seconds));
  const cpu = median(samples.map((s) => s.cpu));
  const mib = Math.max(...samples.map((s) => s.mib));
  const memory = Number.isNaN(mib) ? "peak memory n/a (no /usr/bin/time)" : `CPU ${cpu.toFixed(3)} s, peak ${mib.toFixed(0)} MiB`;
  console.log(`${label}: median ${seconds.toFixed(3)} s, ${memory} over ${samples.length} runs${target ? ` (target: ${target})` : ""}`);
  return { seconds, cpu };
}

/** How many modules (files in require.cache) a run of the app loads. */
function modulesLoaded(env) {
  const result = spawnSync(process.execPath, ["-e", 'require("./scripts/run-app.js"); console.log(Object.keys(require.cache).length)'], {
    cwd: root, env: { ...process.env, CHECKPOINT_DISABLE: "1", ...env }, encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`counting the app's modules failed: ${result.stderr}`);
  return Number(result.stdout.trim());
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
  const base = report("loading cdktf only (`node -e 'require(\"cdktf\")'`)", baseline);
  const synth = report("the app's synthesis as cdktf runs it (`node scripts/run-app.js`)", warm, "<= 0.6 s, <= 120 MiB");
  report("the app's synthesis after an edit (caches empty)", cold);
  console.log(`the app's synthesis / loading cdktf: ratio ${(synth.seconds / base.seconds).toFixed(2)} of the median wall times`
    + ` (CPU time: ${(synth.cpu / base.cpu).toFixed(2)}) (target: <= ${RATIO_TARGET})`);
  console.log(`modules the app's synthesis loads: count ${modulesLoaded(env)} (${modulesLoaded({ ...env, CRM_APP_DEFER: "0" })}`
    + " with CRM_APP_DEFER=0, without scripts/deferred-modules.js)");

  if (cliRuns > 0) {
    const fresh = [], again = [];
    const cdktf = path.join(root, "node_modules", ".bin", "cdktf");
    for (let i = 0; i < cliRuns; i++) {
      rmSync(transpileCache, { recursive: true, force: true });
      fresh.push(measure(cdktf, ["synth", "--output", outdir]));
      again.push(measure(cdktf, ["synth", "--output", outdir]));
    }
    report("`npx cdktf synth` on a fresh clone (caches empty)", fresh, "< 7 s");
    report("`npx cdktf synth` again (caches warm)", again, "< 7 s");
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
