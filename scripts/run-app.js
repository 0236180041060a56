#!/usr/bin/env node
// The cdktf app (cdktf.json: "app"): runs main.ts itself, transpile-only (scripts/ts-loader.js),
// so that every cdktf command (synth, diff, deploy, destroy) synthesizes the code as it is now,
// on a fresh clone too, without a `tsc` step.
//
// Usage: node scripts/run-app.js            (what `cdktf synth` runs; writes $CDKTF_OUTDIR)
//        CRM_APP_CODE_CACHE=0 node scripts/run-app.js   (without V8's code cache)
"use strict";
const path = require("path");

require("./ts-loader").registerTypeScript();
require(path.join(__dirname, "..", "main.ts")).main();
