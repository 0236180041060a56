// Loads the project's TypeScript in Node.js without a `tsc` build, for the cdktf app
// (scripts/run-app.js) and the repository's scripts (scripts/run-ts.js). Type checking stays
// with `tsc --noEmit` (npm test, npm run synth).
//
// Each project .ts file is transpiled by @swc/core (already a dependency of the jest transform)
// and the result is kept in node_modules/.cache/crm-host-app, keyed by a hash of the source, the
// swc version and the options: a run where nothing changed never loads swc (measured: loading it
// costs about as much as the app's own synthesis).
//
// It also keeps V8's compiled code of every module it loads (cdktf, the provider, the app) in
// node_modules/.cache/crm-host-app/v8: Node.js 22.1+ does that itself (module.enableCompileCache);
// on Node.js 20 a small hook below does the same through vm.Script's cachedData.
// CRM_APP_CODE_CACHE=0 turns that cache off. `npm run bench` measures both caches against a
// process that merely loads cdktf.
"use strict";
const { createHash } = require("crypto");
const { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = require("fs");
const Module = require("module");
const path = require("path");
const vm = require("vm");

const root = path.resolve(__dirname, "..");
const nodeModules = path.join(root, "node_modules") + path.sep;
const cacheDir = path.join(root, "node_modules", ".cache", "crm-host-app");
// The compiler options of tsconfig.json that change the emitted code.
const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: "typescript", decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: false },
    target: "es2022",
  },
  module: { type: "commonjs" },
  sourceMaps: false,
  swcrc: false,
  configFile: false,
};

/** A .ts file of this project (not of a dependency). */
function isProjectTs(file) {
  return file.endsWith(".ts") && !file.endsWith(".d.ts") && file.startsWith(root + path.sep) && !file.startsWith(nodeModules);
}

/** Writes `data` to `file` through a temporary name, so that concurrent runs never read half a file. */
function writeAtomically(file, data) {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, data);
    renameSync(partial, file);
  } catch {
    // A read-only checkout still synthesizes, only without the cache.
  }
}

let swcVersion;
let swc;
function transpile(source, file) {
  swcVersion ??= JSON.parse(readFileSync(require.resolve("@swc/core/package.json"), "utf8")).version;
  const key = createHash("sha256")
    .update(`${swcVersion}\0${JSON.stringify(SWC_OPTIONS)}\0${path.relative(root, file)}\0${source}`)
    .digest("hex");
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return readFileSync(cached, "utf8");
  } catch {
    // not cached yet: transpile below
  }
  swc ??= require("@swc/core");
  const { code } = swc.transformSync(source, { ...SWC_OPTIONS, filename: file });
  writeAtomically(cached, code);
  return code;
}

/**
 * Keeps V8's code cache of every CommonJS module. Loading cdktf is mostly parsing and compiling
 * its 380 modules; with the cache a run compiles only what changed.
 */
function enableCodeCache() {
  const dir = path.join(cacheDir, "v8");
  if (typeof Module.enableCompileCache === "function") {
    Module.enableCompileCache(dir);
    return;
  }
  // Node.js 20: compile each module as vm.Script with the cached data of its last run, the way
  // Module.prototype._compile does it otherwise (same wrapper, same require), and write the data
  // of every new or changed module when the process ends, when it holds the lazily compiled
  // functions too.
  const stale = [];
  const tag = `${process.version}\0${process.arch}\0`;
  Module.prototype._compile = function compileWithCache(content, filename) {
    // Keyed by path, size and modification time: hashing the 6 MB of sources would cost more than
    // the cache saves. V8 itself refuses data whose source length or V8 version differs.
    let stamp = "";
    try {
      stamp = String(statSync(filename).mtimeMs);
    } catch {
      // no file on disk: keyed by path and size only
    }
    const key = `${tag}${filename}\0${content.length}\0${stamp}`;
    const file = path.join(dir, `${createHash("sha1").update(key).digest("hex")}.bin`);
    let cachedData;
    try {
      cachedData = readFileSync(file);
    } catch {
      // not cached yet
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData });
    if (!cachedData || script.cachedDataRejected) stale.push([file, script]);
    const module = this;
    const require = (id) => module.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, module, false, options);
    require.resolve.paths = (request) => Module._resolveLookupPaths(request, module);
    require.main = process.mainModule;
    require.cache = Module._cache;
    require.extensions = Module._extensions;
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(module.exports, module.exports, require, module, filename, path.dirname(filename));
  };
  process.once("exit", () => {
    for (const [file, script] of stale) writeAtomically(file, script.createCachedData());
  });
}

/** Makes `require` load the project's .ts files (and prefer them to stale .js beside them). */
function registerTypeScript() {
  if (Module._extensions[".ts"]) return;
  if (process.env.CRM_APP_CODE_CACHE !== "0") enableCodeCache();

  Module._extensions[".ts"] = function loadTypeScript(module, filename) {
    if (!isProjectTs(filename)) throw new Error(`ts-loader: refusing to load ${filename} (not a .ts file of the project)`);
    module._compile(transpile(readFileSync(filename, "utf8"), filename), filename);
  };

  // A relative import from a project .ts file resolves to the .ts file even when a `tsc` build left
  // an older .js next to it (Node would otherwise try .js first and run stale code).
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveTypeScriptFirst(request, parent, ...rest) {
    if (parent?.filename && isProjectTs(parent.filename) && /^\.\.?(\/|$)/.test(request)) {
      const base = path.resolve(path.dirname(parent.filename), request);
      for (const candidate of [`${base}.ts`, path.join(base, "index.ts")]) {
        if (existsSync(candidate)) return candidate;
      }
    }
    return resolveFilename.call(this, request, parent, ...rest);
  };
}

module.exports = { registerTypeScript };
