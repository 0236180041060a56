/**
 * scripts/ci/plan-summary.sh on real plans of a provider-free configuration (the workflow-run test
 * runs it in the plan jobs): a plan over the limit is cut with a note saying so, sensitive values
 * stay masked, a failed plan without output still gets a headline, and no copy of the plan is left.
 */
import { execFile } from "child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "fs";
import { delimiter, dirname, join, resolve } from "path";
import { describeWithEngine, EngineWorkspace } from "../../support/terraform-engine";

const SCRIPT = resolve(__dirname, "../../../scripts/ci/plan-summary.sh");
const SECRET = "Sensitive-Value-In-The-Plan";

describeWithEngine("plan-summary.sh", (engine) => {
  let workspace: EngineWorkspace;
  const summaryFile = (): string => join(workspace.dir, "summary.md");
  const summarize = (
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((done) =>
      execFile(
        "bash",
        [SCRIPT, ...args],
        {
          cwd: workspace.dir,
          env: {
            ...process.env,
            PATH: [dirname(engine), process.env.PATH].join(delimiter),
            CHECKPOINT_DISABLE: "1",
            STACK: "CrmHost-dev",
            GITHUB_STEP_SUMMARY: summaryFile(),
            ...env,
          },
        },
        (error, stdout, stderr) => done({ code: error ? Number(error.code) : 0, stdout, stderr }),
      ),
    );

  beforeAll(async () => {
    // 40 resources whose plan is long enough to cut, one of them holding a sensitive value.
    const resources = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`item_${i}`, { input: `${"x".repeat(60)}-${i}` }]),
    );
    workspace = new EngineWorkspace(engine, {
      variable: { secret: { type: "string", sensitive: true } },
      resource: { terraform_data: { ...resources, holds_secret: { input: "${var.secret}" } } },
    });
    await workspace.init();
    const plan = await workspace.run(["plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan"], {
      TF_VAR_secret: SECRET,
    });
    expect(plan.code).toBe(2);
  }, 120_000);
  afterAll(() => workspace?.remove());
  beforeEach(() => rmSync(summaryFile(), { force: true }));

  it("publishes the whole plan under the limit, masked by terraform show", async () => {
    const result = await summarize(["--note", "A note.", "2"]);
    expect(result.code).toBe(0);
    const summary = readFileSync(summaryFile(), "utf8");
    expect(summary).toMatch(
      /^### Terraform plan of `CrmHost-dev`: Plan: 41 to add, 0 to change, 0 to destroy\.\n\nA note\.\n\n<details><summary>Show the plan \(\d+ bytes\)<\/summary>\n\n`````text\n/,
    );
    expect(summary).toContain("# terraform_data.item_39 will be created");
    expect(summary).toContain("+ input  = (sensitive value)");
    expect(summary).not.toContain(SECRET);
    expect(summary).not.toContain("Truncated");
    expect(existsSync(join(workspace.dir, "plan.txt"))).toBe(false);
  }, 60_000);

  it("cuts a plan over the limit, and says so", async () => {
    const result = await summarize(["--title", "Drift check of `x`", "2"], { LIMIT: "500" });
    expect(result.code).toBe(0);
    const summary = readFileSync(summaryFile(), "utf8");
    const size = Number(/Show the plan \((\d+) bytes\)/.exec(summary)![1]);
    expect(size).toBeGreaterThan(5000);
    expect(summary).toMatch(/^### Drift check of `x`: Plan: 41 to add/);
    expect(summary).toContain(
      `**Truncated:** only the first 500 of ${size} bytes are shown; run \`terraform plan\` locally for the rest.`,
    );
    const shown = /`````text\n([\s\S]*)\n`````/.exec(summary)![1];
    expect(Buffer.byteLength(shown)).toBe(500);
  }, 60_000);

  it("publishes a failed plan's output, or says there was none", async () => {
    writeFileSync(join(workspace.dir, "plan-output.txt"), "Error: something went wrong\n");
    await summarize(["1"]);
    expect(readFileSync(summaryFile(), "utf8")).toMatch(
      /^### Terraform plan of `CrmHost-dev`: terraform plan failed\n[\s\S]*Error: something went wrong/,
    );
    rmSync(join(workspace.dir, "plan-output.txt"));
    rmSync(summaryFile());
    await summarize(["1"]);
    expect(readFileSync(summaryFile(), "utf8")).toContain("terraform plan produced no output");
  }, 60_000);

  it("refuses a call without an exit code", async () => {
    const result = await summarize(["--note", "x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage: scripts/ci/plan-summary.sh");
  });
});
