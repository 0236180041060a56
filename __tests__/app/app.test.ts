/**
 * The cdktf app (cdktf.json's "app": main.ts run by tsx) runs the TypeScript as it is now: on a
 * fresh copy of the project with no compiled .js, after an edit, and even when an old `tsc` build
 * left stale .js files next to the sources.
 */
import { execFile, spawnSync } from "child_process";
import { readFileSync, rmSync, writeFileSync } from "fs";
import { dirname, join, resolve } from "path";
import { promisify } from "util";
import { APP_COMMAND, appInvocation } from "../support/app-command";
import { freshCopy } from "../support/fresh-copy";

const root = resolve(__dirname, "../..");
const run = promisify(execFile);

const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1", CRM_SETTINGS: "" };
delete env.TF_CLI_CONFIG_FILE;

/** Runs the app as cdktf runs it, in `cwd`. */
function runApp(cwd: string, extra: NodeJS.ProcessEnv) {
  const { file, args } = appInvocation();
  return run(file, args, { cwd, env: { ...env, ...extra } });
}

function stackJson(outdir: string, stack = "CrmHostStack"): any {
  return JSON.parse(readFileSync(join(outdir, "stacks", stack, "cdk.tf.json"), "utf8"));
}

describe("the cdktf app (cdktf.json: main.ts through tsx)", () => {
  let dir: string;
  beforeAll(() => {
    dir = freshCopy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is main.ts run by tsx, a dependency of the project", () => {
    expect(APP_COMMAND).toEqual(["node", "--import", "tsx", "main.ts"]);
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(manifest.devDependencies.tsx).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("synthesizes a fresh copy without compiled JavaScript, and reflects an edit at once", async () => {
    const outdir = join(dir, "out-edit");
    await runApp(dir, { CDKTF_OUTDIR: outdir });
    expect(stackJson(outdir).resource.aws_instance).toBeDefined();
    expect(Object.values<any>(stackJson(outdir).resource.aws_instance)[0].instance_type).toBe("${var.instance_type}");
    expect(stackJson(outdir).variable.instance_type.default).toBe("t3.micro");

    // An edit of the constructs' constants, and a stale compiled file next to it that still has the old code.
    const construct = join(dir, "constructs", "constants.ts");
    const source = readFileSync(construct, "utf8");
    expect(source).toContain('"t3.micro"');
    writeFileSync(join(dir, "constructs", "constants.js"), "throw new Error('stale compiled file was loaded');\n");
    writeFileSync(construct, source.replace('"t3.micro"', '"t3.small"'));
    await runApp(dir, { CDKTF_OUTDIR: outdir });
    expect(stackJson(outdir).variable.instance_type.default).toBe("t3.small");
    writeFileSync(construct, source);
    rmSync(join(dir, "constructs", "constants.js"));
  }, 60_000);

  it("needs no Terraform to synthesize (the set-up's first command runs on a machine without it)", async () => {
    const outdir = join(dir, "out-no-terraform");
    // Node.js's own directory and the system's, without /usr/local/bin and the tools' cache where Terraform lives.
    const path = [dirname(process.execPath), "/usr/bin", "/bin"].join(":");
    expect(spawnSync("bash", ["-c", "command -v terraform"], { env: { PATH: path } }).status).not.toBe(0);
    await runApp(dir, { CDKTF_OUTDIR: outdir, PATH: path, TERRAFORM_BINARY_NAME: "" });
    expect(stackJson(outdir).moved.length).toBeGreaterThan(0);
  }, 60_000);

  it("stops with the settings message, not a stack trace, on a bad settings file", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify({ ...JSON.parse(readFileSync(join(root, "settings", "example.json"), "utf8")), region: "mars" }),
    );
    const result = await runApp(dir, { CRM_SETTINGS: bad, CDKTF_OUTDIR: join(dir, "out-bad") }).then(
      () => ({ code: 0, stderr: "" }),
      (error) => ({ code: error.code, stderr: String(error.stderr) }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid setting "region"');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("synthesizes one stack per settings file named by CRM_SETTINGS", async () => {
    const outdir = join(dir, "out-environments");
    await runApp(dir, { CRM_SETTINGS: "examples", CDKTF_OUTDIR: outdir });
    expect(stackJson(outdir, "CrmHost-dev").terraform.backend.s3.key).toBe("crm-host/dev/terraform.tfstate");
    expect(stackJson(outdir, "CrmHost-prod").terraform.backend.s3.key).toBe("crm-host/prod/terraform.tfstate");
  }, 60_000);

  it("is what `npx cdktf synth` runs on a fresh copy", async () => {
    const outdir = join(dir, "out-cli");
    const { stdout } = await run(join(dir, "node_modules", ".bin", "cdktf"), ["synth", "--output", outdir], {
      cwd: dir,
      env,
    });
    expect(stdout).toContain("CrmHostStack");
    expect(stackJson(outdir).terraform.required_version).toBeDefined();
  }, 120_000);
});
