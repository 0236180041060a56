/**
 * The import rules of .dependency-cruiser.cjs hold for the whole project (settings/ at the bottom,
 * userdata/ on settings/ only, constructs/ and topologies/ above, no cycle), and the rules do refuse
 * what they name: a scratch tree that breaks each of them is reported, rule by rule.
 */
import { spawnSync } from "child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { dirname, join, resolve } from "path";

const root = resolve(__dirname, "..");
const depcruise = join(root, "node_modules", ".bin", "depcruise");
const config = join(root, ".dependency-cruiser.cjs");

function cruise(cwd: string, paths: string[]): { status: number | null; output: string } {
  const run = spawnSync(depcruise, ["--config", config, "--output-type", "err", ...paths], {
    cwd,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("import rules (dependency-cruiser)", () => {
  it("hold for every module of the project (npm run lint:imports)", () => {
    const run = spawnSync("npm", ["run", "--silent", "lint:imports"], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(`${run.stdout}${run.stderr}`).toMatch(/no dependency violations found \((\d{3,}) modules/);
    expect(run.status).toBe(0);
  });

  it("report each broken rule by name", () => {
    const scratch = mkdtempSync(join(tmpdir(), "imports-"));
    try {
      const files: Record<string, string> = {
        "settings/a.ts": 'import { b } from "../userdata/b";\nexport const a = b;\n',
        "userdata/b.ts": 'import { c } from "../constructs/c";\nexport const b = c;\n',
        "constructs/c.ts": 'import { d } from "../topologies/d";\nexport const c = d;\n',
        "topologies/d.ts": 'import { e } from "../main";\nexport const d = e;\n',
        "main.ts": 'import { t } from "./__tests__/t";\nexport const e = t;\n',
        "__tests__/t.ts": "export const t = 1;\n",
        "userdata/x.ts": 'import { y } from "./y";\nexport const x = y;\n',
        "userdata/y.ts": 'import { x } from "./x";\nexport const y = () => x;\n',
      };
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(dirname(join(scratch, name)), { recursive: true });
        writeFileSync(join(scratch, name), text);
      }
      writeFileSync(
        join(scratch, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { module: "CommonJS" }, include: ["**/*.ts"] }),
      );
      const { status, output } = cruise(scratch, ["settings", "userdata", "constructs", "topologies", "main.ts"]);
      expect(status).not.toBe(0);
      for (const rule of [
        "settings-at-the-bottom",
        "userdata-renders-from-settings",
        "constructs-below-topologies",
        "topologies-below-main",
        "no-tests-in-code",
        "no-circular",
      ]) {
        expect(output).toContain(rule);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
