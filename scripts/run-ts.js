#!/usr/bin/env node
// Runs a TypeScript file of this repository without a `tsc` build, through the same loader as the
// cdktf app (scripts/ts-loader.js: swc, cached, .ts preferred to a stale .js beside it).
// Type checking stays with `tsc --noEmit` (npm test). This keeps `npm run docs` quick.
// Usage: node scripts/run-ts.js scripts/docs.ts [arguments…]
"use strict";
const path = require("path");

require("./ts-loader").registerTypeScript();

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node scripts/run-ts.js <file.ts> [arguments…]");
  process.exit(2);
}
process.argv = [process.argv[0], path.resolve(script), ...args];
// Loaded as the main module, so that `require.main === module` holds in the script.
require("module")._load(path.resolve(script), null, true);
