// Defers modules that the cdktf app's dependencies load at start-up but that synthesizing this
// stack never calls, for the app (scripts/run-app.js) only. Each is loaded at its first use
// instead, so a stack that does use one still works (see __tests__/app/deferred-modules.test.ts).
//
// Why: `require("cdktf")` loads archiver and its 200 modules (lodash, readable-stream, glob…) for
// zipping directory assets, which this stack has none of; those are most of cdktf's load time.
// zod loads the translations of its messages into 40 languages, while every message here is our own.
//
// The entries name files of the pinned cdktf 0.21.0 and zod 4.6.7 (a test checks each still
// matches a require there); one that matches nothing, as after a move to CDK Terrain
// (scripts/cdktn: cdktn zips with fflate), is a no-op.
// CRM_APP_DEFER=0 turns the deferral off. `npm run bench` measures the app with it.
"use strict";
const Module = require("module");
const path = require("path");

/**
 * What is deferred: the module `request` when `parent` (a file under node_modules) requires it,
 * and what the module does (`use`). `esModule` marks a module that its importer passes through
 * TypeScript's __importStar, which reads `__esModule` at once: the stand-in answers it unloaded.
 */
const DEFERRED_MODULES = [
  {
    parent: "cdktf/lib/private/fs.js",
    request: "archiver",
    use: "zips directory assets (TerraformAsset of type ARCHIVE)",
  },
  {
    parent: "cdktf/lib/validations/validate-binary-version.js",
    request: "semver",
    use: "checks a binary's version against a constraint (ValidateTerraformVersion)",
  },
  {
    parent: "zod/v4/core/index.cjs",
    request: "../locales/index.cjs",
    esModule: true,
    use: "zod's messages in other languages (z.locales); English is loaded apart",
  },
  {
    parent: "zod/v4/classic/external.cjs",
    request: "../locales/index.cjs",
    esModule: true,
    use: "zod's messages in other languages (z.locales); English is loaded apart",
  },
];

/**
 * A stand-in for a module's exports that loads the module at the first access, call or
 * enumeration, and then forwards everything to it. Callable, since some modules export a function.
 */
function deferredExports(load, esModule) {
  let loaded;
  const real = () => (loaded ??= load());
  // An arrow function has no non-configurable own properties, so the proxy may report the
  // module's own properties freely.
  return new Proxy(() => {}, {
    get: (_, key) => (esModule && key === "__esModule" && loaded === undefined ? true : Reflect.get(real(), key)),
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    apply: (_, self, args) => Reflect.apply(real(), self, args),
  });
}

/** The entry of DEFERRED_MODULES for this require, if any. */
function deferralOf(request, parent) {
  const file = parent?.filename;
  if (!file) return undefined;
  return DEFERRED_MODULES.find((entry) => entry.request === request
    && file.endsWith(`${path.sep}node_modules${path.sep}${entry.parent.split("/").join(path.sep)}`));
}

/** Makes `require` hand out deferred stand-ins for the modules of DEFERRED_MODULES. */
function deferUnusedModules() {
  if (process.env.CRM_APP_DEFER === "0" || Module._load.deferring) return;
  const load = Module._load;
  const deferringLoad = function deferringLoad(request, parent, isMain) {
    const entry = deferralOf(request, parent);
    if (!entry) return load.call(this, request, parent, isMain);
    return deferredExports(() => load.call(this, request, parent, isMain), entry.esModule === true);
  };
  deferringLoad.deferring = true;
  Module._load = deferringLoad;
}

module.exports = { DEFERRED_MODULES, deferUnusedModules };
