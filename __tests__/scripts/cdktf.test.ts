/**
 * npm run synth, diff, deploy and destroy (scripts/cdktf.sh) and npm run check:settings as a user meets them without a
 * terminal (a CI job, a pipe): each answers --help, before the terminal and the settings checks, with exit 0;
 * check:settings refuses an argument it does not know in one line (exit 2); a synth whose output is no terminal
 * prints no spinner frames and no warning of a Terraform CLI configuration that does not exist. Full tier: each
 * npm script runs the type check first.
 */
import { execFile } from "child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import exampleSettings from "../../settings/example.json";

const ROOT = resolve(__dirname, "../..");

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-cdktf-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `npm run --silent <script> -- <args>` with standard input and output pipes (no terminal), CI unset (a CI's own
 * variable would hide what a pipe alone does), and the extra environment given; bounded.
 */
function npmRun(script: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Run> {
  const { CI: _ci, ...env } = process.env;
  return new Promise((done) => {
    const child = execFile(
      "npm",
      ["run", script, "--silent", "--", ...args],
      {
        cwd: ROOT,
        timeout: 150_000,
        maxBuffer: 16 << 20,
        env: { ...env, CHECKPOINT_DISABLE: "1", FORCE_COLOR: "0", ...extra },
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : 124) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

describe("npm run synth|diff|deploy|destroy -- --help without a terminal", () => {
  it.each([
    ["synth", "--help"],
    ["diff", "-h"],
    ["deploy", "--help"],
    ["destroy", "--help"],
  ])(
    "npm run %s -- %s: what the wrapper adds, then cdktf's own help; no approval or settings asked, exit 0",
    async (script, flag) => {
      // A bad settings file, and a Terraform CLI configuration that does not exist: help needs neither.
      const bad = join(dir, "bad.json");
      writeFileSync(bad, JSON.stringify({ ...exampleSettings, region: "eu-wset-1" }));
      const result = await npmRun(script, [flag], { CRM_SETTINGS: bad, TF_CLI_CONFIG_FILE: join(dir, "missing.tfrc") });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      const lines = result.stdout.split("\n");
      expect(lines[0]).toMatch(
        new RegExp(`^npm run ${script}: cdktf ${script} after the settings check \\(npm run check:settings\\)`),
      );
      // cdktf's own usage line: "cdktf synth", "cdktf diff [stack]", "cdktf deploy [stacks...]",
      // "cdktf destroy [stacks..]".
      expect(lines.some((line) => new RegExp(`^cdkt[fn] ${script}( \\[stacks?\\.*\\])?$`).test(line))).toBe(true);
      expect(lines.some((line) => /^\s+-h, --help\s+Show help/.test(line))).toBe(true);
      if (script === "deploy" || script === "destroy") {
        expect(lines[1]).toMatch(/without a terminal, add --auto-approve/);
      }
    },
    150_000,
  );
});

describe("npm run check:settings", () => {
  it("--help: what it checks, CRM_SETTINGS and the exit statuses; exit 0, nothing checked", async () => {
    const result = await npmRun("check:settings", ["--help"], { CRM_SETTINGS: join(dir, "missing.json") });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^usage: npm run check:settings/);
    for (const text of ["CRM_SETTINGS", "Exit status: 0", "1:", "2:", "-h, --help"]) {
      expect(result.stdout).toContain(text);
    }
  }, 150_000);

  it("refuses an argument it does not know in one line, exit 2", async () => {
    const result = await npmRun("check:settings", ["--bogus"]);
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: "check:settings: unknown argument --bogus (expected none, or --help)\n",
    });
  }, 150_000);
});

describe("npm run synth with its output not a terminal (a CI log)", () => {
  it("prints no spinner frames and no warning of a CLI configuration file that does not exist", async () => {
    const missing = join(dir, "no-such.tfrc");
    const out = join(dir, "out");
    const result = await npmRun("synth", ["--output", out], { TF_CLI_CONFIG_FILE: missing });
    const output = result.stdout + result.stderr;
    expect(result.code).toBe(0);
    expect(existsSync(join(out, "stacks", "CrmHostStack", "cdk.tf.json"))).toBe(true);
    // Ink's spinner (braille dots) and the escapes that erase its last frame, one per tick; Terraform's warnings.
    expect(output).not.toMatch(/[\u2800-\u28ff]/);
    expect(output).not.toContain("\x1b[2K");
    expect(output).not.toMatch(/\[ERROR\]|CLI configuration/);
    expect(output).toContain("Generated Terraform code for the stacks: CrmHostStack");
    expect(output.trim().split("\n").length).toBeLessThanOrEqual(3);
  }, 150_000);

  // Only a missing file gives way: one that exists (scripts/ci/env.sh's mirror configuration) is what Terraform reads.
  it("keeps a CLI configuration file that exists: Terraform reads it (here, its parse error shows)", async () => {
    const config = join(dir, "broken.tfrc");
    writeFileSync(config, "this is { not hcl\n");
    const result = await npmRun("synth", ["--output", join(dir, "out-kept")], { TF_CLI_CONFIG_FILE: config });
    expect(result.code).toBe(0);
    // Terraform wraps its message at 78 columns, a long path on a line of its own.
    expect(result.stdout + result.stderr).toMatch(/Error parsing\s+(│\s+)?\S*broken\.tfrc/);
  }, 150_000);
});
