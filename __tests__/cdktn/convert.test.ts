import { spawnSync } from "child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { dirname, join, resolve } from "path";

// The old names are assembled at run time: scripts/cdktn/check.sh runs this file on a copy that
// convert.sh has already rewritten, and literal old names here would be rewritten with it.
const OLD = "cdk" + "tf";
const OLD_AWS = `@${OLD}/provider-aws`;
const script = resolve(__dirname, "..", "..", "scripts", "cdktn", "convert.sh");

/** A minimal checkout (not a git repository) with every kind of file the script edits. */
function checkout(): string {
  const dir = mkdtempSync(join(tmpdir(), "crm-cdktn-convert-"));
  const files: Record<string, string> = {
    "package.json": JSON.stringify(
      {
        name: "x",
        engines: { node: ">=20" },
        scripts: {
          synth: `tsc && CHECKPOINT_DISABLE=1 ${OLD} synth`,
          get: `${OLD} get`,
          test: "bash scripts/check.sh",
        },
        dependencies: { [OLD_AWS]: "21.22.1", [OLD]: "0.21.0", constructs: "10.4.2", zod: "4.6.7" },
        devDependencies: { [`${OLD}-cli`]: "0.21.0", jest: "29.7.0" },
      },
      null,
      2,
    ),
    [`${OLD}.json`]: `{ "app": "node main.js" }\n`,
    "main.ts": `import { Instance } from "${OLD_AWS}/lib/instance";\nimport { App } from "${OLD}";\n// ${OLD} stays in prose; ${OLD}.out is still the output directory\n`,
    "setup.js": `const lib = require("${OLD}");\nrequire("${OLD}/lib/testing/adapters/jest");\n`,
    "workflow.test.ts": `expect(workflow).toContain("npx ${OLD} synth");\n`,
    "types.d.ts": `declare module "${OLD}";\n`,
    "README.md":
      `Run \`npx ${OLD} synth\`, then \`${OLD} deploy\`; output in ${OLD}.out.\n` +
      `Pinned versions: ${OLD} 0.21.0, ${OLD}-cli 0.21.0, ${OLD_AWS} 21.22.1 (hashicorp/aws 6.25.0), constructs 10.4.2.\n`,
    ".github/workflows/plan.yml":
      `steps:\n  - uses: actions/setup-node@v4\n    with:\n      node-version: 20\n  - run: npx ${OLD} deploy "$STACK"\n` +
      `  test:\n    strategy:\n      matrix:\n        node: ["20.19.0", 22, 24, latest]\n`,
  };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

describe("scripts/cdktn/convert.sh", () => {
  const dir = checkout();
  const run = spawnSync("bash", [script, "--no-install", dir], { encoding: "utf8" });
  const read = (name: string) => readFileSync(join(dir, name), "utf8");

  it("succeeds and names the files it edited", () => {
    expect(run.stderr).toContain("edited main.ts");
    expect(run.status).toBe(0);
  });

  it("swaps the dependencies for cdktn's, with the pinned versions, and asks for Node.js 22.19", () => {
    const pkg = JSON.parse(read("package.json"));
    expect(pkg.dependencies).toEqual({
      "@cdktn/provider-aws": "25.7.0",
      cdktn: "0.24.0",
      constructs: "10.6.0",
      zod: "4.6.7",
    });
    expect(pkg.devDependencies).toEqual({ "cdktn-cli": "0.24.0", jest: "29.7.0" });
    expect(pkg.engines.node).toBe(">=22.19.0");
    expect(pkg.scripts).toEqual({
      synth: "tsc && CHECKPOINT_DISABLE=1 cdktn synth",
      get: "cdktn get",
      test: "bash scripts/check.sh",
    });
  });

  it("rewrites imports, requires and CLI commands, and nothing else in the code", () => {
    expect(read("main.ts")).toBe(
      `import { Instance } from "@cdktn/provider-aws/lib/instance";\nimport { App } from "cdktn";\n` +
        `// ${OLD} stays in prose; ${OLD}.out is still the output directory\n`,
    );
    expect(read("setup.js")).toBe(`const lib = require("cdktn");\nrequire("cdktn/lib/testing/adapters/jest");\n`);
    expect(read("types.d.ts")).toBe(`declare module "${OLD}";\n`);
    expect(read("workflow.test.ts")).toBe('expect(workflow).toContain("npx cdktn synth");\n');
    expect(read(`${OLD}.json`)).toBe(`{ "app": "node main.js" }\n`);
  });

  it("renames the CLI and the versions in the docs and the workflow, and moves the workflow to Node.js 22", () => {
    expect(read("README.md")).toBe(
      `Run \`npx cdktn synth\`, then \`cdktn deploy\`; output in ${OLD}.out.\n` +
        "Pinned versions: cdktn 0.24.0, cdktn-cli 0.24.0, @cdktn/provider-aws 25.7.0 (hashicorp/aws 6.66.0), constructs 10.6.0.\n",
    );
    expect(read(".github/workflows/plan.yml")).toContain("node-version: 22\n");
    // The matrix's lowest Node.js becomes the lowest that cdktn's CLI runs on.
    expect(read(".github/workflows/plan.yml")).toContain('node: ["22.19.0", 24, latest]\n');
    expect(read(".github/workflows/plan.yml")).toContain('npx cdktn deploy "$STACK"');
  });

  it("is idempotent: a second run changes nothing", () => {
    const before = ["package.json", "main.ts", "README.md"].map(read);
    const again = spawnSync("bash", [script, "--no-install", dir], { encoding: "utf8" });
    expect(again.status).toBe(0);
    expect(again.stderr).not.toMatch(/edited /);
    expect(["package.json", "main.ts", "README.md"].map(read)).toEqual(before);
  });

  it("refuses a directory that is not a checkout of this project", () => {
    const empty = mkdtempSync(join(tmpdir(), "crm-cdktn-empty-"));
    const refused = spawnSync("bash", [script, "--no-install", empty], { encoding: "utf8" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("is not a checkout of this project");
  });
});
