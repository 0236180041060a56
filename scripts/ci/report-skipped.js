#!/usr/bin/env node
// Shows each test file that skipped tests as a notice on the GitHub Actions run's page (the
// workflow command ::notice), read from jest's JSON report (`jest --json --outputFile=FILE`).
// The test job of .github/workflows/terraform-plan.yml runs it after jest: tests whose tools a
// hosted runner lacks skip there, and the run's page says which.
//
// Usage: node scripts/ci/report-skipped.js JEST_JSON
// Paths in the notices are relative to the working directory (the repository's root in the job).
// GitHub shows at most 10 notices of a step: past 10 files, the 10th notice names the rest.
// Exit codes: 0 the report was read (whether or not tests skipped); 2 no report, or not jest's
// (jest stopped before writing it: the job fails on jest's own status as well).
"use strict";

const { readFileSync } = require("fs");
const { relative } = require("path");

const MAX_NOTICES = 10;

/** Escapes a workflow command's message (GitHub's rules: %, CR and LF). */
function escapeData(text) {
  return String(text).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Escapes a workflow command's property value (also , and :, which separate properties). */
function escapeProperty(text) {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

function fail(message) {
  console.log(`::error title=report-skipped::${escapeData(message)}`);
  process.exit(2);
}

const file = process.argv[2];
if (!file) fail("usage: node scripts/ci/report-skipped.js JEST_JSON");
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  fail(`cannot read jest's report ${file}: ${error.message}`);
}
if (!report || !Array.isArray(report.testResults)) fail(`${file} is not a jest JSON report (no testResults)`);

const skipped = [];
for (const suite of report.testResults) {
  const tests = suite.assertionResults ?? [];
  const notRun = tests.filter((test) => test.status !== "passed" && test.status !== "failed");
  if (notRun.length === 0) continue;
  const groups = [...new Set(notRun.map((test) => (test.ancestorTitles ?? []).join(" > ") || test.title))];
  skipped.push({ path: relative(process.cwd(), suite.name), count: notRun.length, total: tests.length, groups });
}

const shown = skipped.length > MAX_NOTICES ? skipped.slice(0, MAX_NOTICES - 1) : skipped;
for (const { path, count, total, groups } of shown) {
  const title = `${count} of ${total} tests skipped`;
  const message = `${path}: ${count} of ${total} tests did not run: ${groups.join("; ")}`;
  console.log(`::notice file=${escapeProperty(path)},title=${escapeProperty(title)}::${escapeData(message)}`);
}
const rest = skipped.slice(shown.length);
if (rest.length > 0) {
  const count = rest.reduce((sum, entry) => sum + entry.count, 0);
  const message = `${count} tests in ${rest.length} more files did not run: ${rest.map((entry) => entry.path).join(", ")}`;
  console.log(`::notice title=${escapeProperty(`${rest.length} more files skipped tests`)}::${escapeData(message)}`);
}
const total = skipped.reduce((sum, entry) => sum + entry.count, 0);
console.log(`report-skipped: ${total} tests skipped in ${skipped.length} of ${report.testResults.length} test files`);
