/**
 * The modules the app defers (scripts/deferred-modules.js): each deferral still matches a require
 * of the pinned dependencies, synthesis never loads the deferred modules, the stack is the same
 * with and without deferral, and a deferred module works like the real one once it is used.
 */
import { execFileSync } from "child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

const root = resolve(__dirname, "../..");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DEFERRED_MODULES } = require("../../scripts/deferred-modules") as {
  DEFERRED_MODULES: { parent: string; request: string; esModule?: boolean; use: string }[];
};

const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1", CRM_SETTINGS: "" };
delete env.TF_CLI_CONFIG_FILE;

/** Runs a script in a new Node.js process in the project directory; returns its stdout parsed as JSON. */
function runNode(script: string, extraEnv: NodeJS.ProcessEnv = {}): any {
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: root, env: { ...env, ...extraEnv }, encoding: "utf8" }));
}

/** The file a deferred request names, as its parent would resolve it. */
function deferredFile(entry: { parent: string; request: string }): string {
  const parent = join(root, "node_modules", entry.parent);
  return require.resolve(entry.request, { paths: [join(parent, "..")] });
}

describe("modules deferred by the cdktf app", () => {
  let outdir: string;
  beforeAll(() => {
    outdir = mkdtempSync(join(tmpdir(), "crm-deferred-"));
  });
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it.each(DEFERRED_MODULES.map((entry) => [`${entry.request} from ${entry.parent}`, entry] as const))(
    "%s is still required there, by name",
    (_, entry) => {
      const parent = join(root, "node_modules", entry.parent);
      expect(existsSync(parent)).toBe(true);
      expect(readFileSync(parent, "utf8")).toContain(`require("${entry.request}")`);
      expect(existsSync(deferredFile(entry))).toBe(true);
    },
  );

  it("are never loaded by a synthesis, which gives the same stack as without deferral", () => {
    const loadedBy = (defer: string, out: string) => runNode(
      'require("./scripts/run-app.js"); process.stdout.write(JSON.stringify(Object.keys(require.cache)))',
      { CDKTF_OUTDIR: out, CRM_APP_DEFER: defer },
    ) as string[];
    const deferred = loadedBy("1", join(outdir, "deferred"));
    const eager = loadedBy("0", join(outdir, "eager"));
    for (const entry of DEFERRED_MODULES) {
      expect(eager).toContain(deferredFile(entry));
      expect(deferred).not.toContain(deferredFile(entry));
    }
    expect(deferred.length).toBeLessThan(eager.length / 2);
    const stack = (dir: string) => readFileSync(join(outdir, dir, "stacks", "CrmHostStack", "cdk.tf.json"), "utf8");
    expect(stack("deferred")).toBe(stack("eager"));
  }, 60_000);

  it("work like the real modules once used", () => {
    const result = runNode(`
      const Module = require("module");
      const path = require("path");
      const { DEFERRED_MODULES, deferUnusedModules } = require("./scripts/deferred-modules");
      deferUnusedModules();
      const seen = {};
      const standIns = {};
      for (const entry of DEFERRED_MODULES) {
        const file = path.join(process.cwd(), "node_modules", entry.parent);
        const parent = new Module(file);
        parent.filename = file;
        parent.paths = Module._nodeModulePaths(path.dirname(file));
        const standIn = standIns[entry.parent] = Module._load(entry.request, parent, false);
        const real = require(require.resolve(entry.request, { paths: [path.dirname(file)] }));
        seen[entry.request] = {
          keys: Object.keys(standIn).sort().join() === Object.keys(real).sort().join(),
          esModule: standIn.__esModule === real.__esModule,
        };
      }
      // Uses through the importers: a zip stream from archiver, a version range from semver, a
      // translated message from zod's locales.
      const archive = standIns["cdktf/lib/private/fs.js"]("zip", {});
      const { ValidateBinaryVersion } = require("cdktf/lib/validations/validate-binary-version");
      const { z } = require("zod");
      z.config(z.locales.de());
      process.stdout.write(JSON.stringify({
        seen,
        archive: typeof archive.directory === "function" && typeof archive.finalize === "function",
        satisfied: new ValidateBinaryVersion("node", ">=1.0.0", "node --version").validate(),
        unsatisfied: new ValidateBinaryVersion("node", "<1.0.0", "node --version").validate(),
        german: z.string().safeParse(1).error.issues[0].message,
      }));
    `);
    for (const entry of DEFERRED_MODULES) expect(result.seen[entry.request]).toMatchObject({ keys: true, esModule: true });
    expect(result.archive).toBe(true);
    expect(result.satisfied).toEqual([]);
    expect(result.unsatisfied[0]).toMatch(/^node version \d+\.\d+\.\d+ is lower than the required version <1\.0\.0/);
    expect(result.german).toMatch(/Ungültige Eingabe/);
  }, 60_000);
});
