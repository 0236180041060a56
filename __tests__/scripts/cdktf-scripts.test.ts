/**
 * The shell scripts behind the npm scripts that reach a deployed stack, run by bash in a scratch directory as a
 * project holds them: `npm run output` (scripts/output.sh) finds the stack in cdktf.out/stacks and refuses in one
 * line, exit 2, what it cannot answer, before Terraform starts.
 */
import { spawnSync } from "child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

const ROOT = resolve(__dirname, "../..");

function bash(script: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const ran = spawnSync("bash", [join(ROOT, script), ...args], {
    cwd,
    env,
    encoding: "utf8",
    timeout: 30_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

describe("npm run output (scripts/output.sh)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-output-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is the npm script output", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.output).toBe("bash scripts/output.sh");
  });

  it("--help: what it does and each argument in one line, exit 0", () => {
    const ran = bash("scripts/output.sh", ["--help"], dir);
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: "" });
    for (const line of ["usage: npm run output", "stack ", "name ", "-json, -raw", "-h, --help"]) {
      expect(ran.stdout.split("\n").filter((text) => text.includes(line))).toHaveLength(1);
    }
  });

  it("nothing synthesized: one line saying so, exit 2", () => {
    expect(bash("scripts/output.sh", [], dir)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "npm run output: no stack in cdktf.out/stacks: nothing is deployed from here yet (npm run deploy first)\n",
    });
  });

  it("several stacks and none named: one line naming them, exit 2", () => {
    for (const stack of ["CrmHost-dev", "CrmHost-prod"])
      mkdirSync(join(dir, "cdktf.out", "stacks", stack, ".terraform"), { recursive: true });
    expect(bash("scripts/output.sh", ["-json"], dir)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "npm run output: cdktf.out/stacks holds 2 stacks; name one: npm run output -- <stack> (CrmHost-dev CrmHost-prod)\n",
    });
  });

  it("a stack synthesized but never deployed from here: one line naming it, exit 2", () => {
    mkdirSync(join(dir, "cdktf.out", "stacks", "CrmHostStack"), { recursive: true });
    expect(bash("scripts/output.sh", [], dir)).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "npm run output: CrmHostStack is synthesized but not deployed from here (no cdktf.out/stacks/CrmHostStack/.terraform): npm run deploy first\n",
    });
  });

  it("the stack named, or the only one: terraform output in its directory, with the arguments that follow", () => {
    for (const stack of ["CrmHost-dev", "CrmHost-prod"])
      mkdirSync(join(dir, "cdktf.out", "stacks", stack, ".terraform"), { recursive: true });
    // A stand-in engine that says where it ran and with what (TERRAFORM_BINARY_NAME, as cdktf takes it).
    const engine = join(dir, "engine.sh");
    writeFileSync(engine, '#!/bin/bash\necho "$*"\n', { mode: 0o755 });
    const env = { ...process.env, TERRAFORM_BINARY_NAME: engine };
    expect(bash("scripts/output.sh", ["CrmHost-prod", "-raw", "CrmServerSshCommand"], dir, env)).toEqual({
      code: 0,
      stdout: "-chdir=cdktf.out/stacks/CrmHost-prod output -raw CrmServerSshCommand\n",
      stderr: "",
    });
    rmSync(join(dir, "cdktf.out", "stacks", "CrmHost-prod"), { recursive: true });
    expect(bash("scripts/output.sh", ["CrmServerSshCommand"], dir, env)).toEqual({
      code: 0,
      stdout: "-chdir=cdktf.out/stacks/CrmHost-dev output CrmServerSshCommand\n",
      stderr: "",
    });
  });
});
