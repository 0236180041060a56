#!/usr/bin/env node
// Runs a TypeScript file of this repository without a `tsc` build: each .ts module is
// transpiled on load by @swc/core (already here for jest), the way jest runs the tests.
// Type checking stays with `tsc --noEmit` (npm test). A build would take several seconds;
// this takes a fraction of one, which keeps `npm run docs` quick.
// Usage: node scripts/run-ts.js scripts/docs.ts [arguments…]
"use strict";
const { readFileSync } = require("fs");
const path = require("path");
const swc = require("@swc/core");

// .ts first: a stale `tsc` output (main.js beside main.ts) must not shadow the source.
const others = { ...require.extensions };
for (const extension of Object.keys(others)) delete require.extensions[extension];
require.extensions[".ts"] = (module, filename) => {
  const { code } = swc.transformSync(readFileSync(filename, "utf8"), {
    filename,
    sourceMaps: "inline",
    jsc: { parser: { syntax: "typescript" }, target: "es2022" },
    module: { type: "commonjs" },
  });
  module._compile(code, filename);
};
Object.assign(require.extensions, others);

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node scripts/run-ts.js <file.ts> [arguments…]");
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(script), ...args];
// Loaded as the main module, so that `require.main === module` holds in the script.
require("module")._load(path.resolve(script), null, true);
