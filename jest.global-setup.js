// Every test runs with a private TMPDIR, removed when jest ends (jest.global-teardown.js): cdktf's
// Testing.synth and Testing.synthScope leave a cdktf.outdir.* directory behind on each call, thousands a run.
const { mkdtempSync } = require("fs");
const { join } = require("path");
const { tmpdir } = require("os");

module.exports = () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-jest-"));
  process.env.CRM_JEST_TMPDIR = dir;
  process.env.TMPDIR = dir;
};
