#!/usr/bin/env node
// The cdktf app (cdktf.json: "app"): runs main.ts itself, transpile-only (scripts/ts-loader.js),
// so that every cdktf command (synth, diff, deploy, destroy) synthesizes the code as it is now,
// on a fresh clone too, without a `tsc` step.
//
// It also defers the modules of dependencies that synthesis never calls (scripts/deferred-modules.js).
//
// Usage: node scripts/run-app.js            (what `cdktf synth` runs; writes $CDKTF_OUTDIR)
//        CRM_APP_CODE_CACHE=0 node scripts/run-app.js   (without V8's code cache)
//        CRM_APP_DEFER=0 node scripts/run-app.js        (loading every module at once)
"use strict";
const path = require("path");

require("./deferred-modules").deferUnusedModules();
require("./ts-loader").registerTypeScript();
require(path.join(__dirname, "..", "main.ts")).main();
