/**
 * The users' workflows (.github/workflows/): the properties their reviews asked for, read from the
 * parsed YAML. Their steps run for real in run.test.ts; actionlint and zizmor check them in
 * `npm test` (scripts/ci/lint-workflows.sh).
 */
import { execFileSync } from "child_process";
import { readFileSync } from "fs";
import { resolve } from "path";
import { parseWorkflow, Workflow, WorkflowJob } from "../support/workflow-runner";

const ROOT = resolve(__dirname, "../..");
const FILES = execFileSync("git", ["-C", ROOT, "ls-files", "--cached", ".github/workflows"], { encoding: "utf8" })
  .split("\n")
  .filter(Boolean);
const text = (file: string): string => readFileSync(resolve(ROOT, file), "utf8");
const workflows: Record<string, Workflow> = Object.fromEntries(FILES.map((file) => [file, parseWorkflow(text(file))]));
const plan = workflows[".github/workflows/terraform-plan.yml"];
const release = workflows[".github/workflows/release.yml"];
const allJobs: [string, WorkflowJob][] = Object.entries(workflows).flatMap(([file, workflow]) =>
  Object.entries(workflow.jobs).map(([id, job]): [string, WorkflowJob] => [`${file}:${id}`, job]),
);
/** A job's YAML as one string (its expressions included), to search. */
const body = (job: WorkflowJob): string => JSON.stringify(job);
const runs = (job: WorkflowJob): string => job.steps.map((step) => step.run ?? "").join("\n");

describe("the users' workflows", () => {
  it("are terraform-plan.yml (test, plan, deploy-plan, apply, drift) and release.yml (release)", () => {
    expect(FILES).toEqual([".github/workflows/release.yml", ".github/workflows/terraform-plan.yml"]);
    expect(Object.keys(plan.jobs)).toEqual(["test", "plan", "deploy-plan", "apply", "drift"]);
    expect(Object.keys(release.jobs)).toEqual(["release"]);
  });

  it("pin every action by a full commit SHA", () => {
    const uses = allJobs.flatMap(([, job]) => job.steps.flatMap((step) => step.uses ?? []));
    expect(uses.length).toBeGreaterThan(10);
    for (const action of uses) expect(action).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
  });

  it("grant no permission by default, and each job only what it names", () => {
    for (const workflow of Object.values(workflows))
      expect((workflow as unknown as { permissions: object }).permissions).toEqual({});
    for (const [, job] of allJobs)
      expect(Object.values(job.permissions ?? {}).every((level) => level === "read" || level === "write")).toBe(true);
    expect(plan.jobs.test.permissions).toEqual({ contents: "read" });
  });

  it("keep every secret in a job of a dedicated environment, and none in a job that runs for pull requests", () => {
    const withSecrets = allJobs.filter(([, job]) => /secrets\./.test(body(job)));
    expect(withSecrets.map(([id]) => id).sort()).toEqual([
      ".github/workflows/release.yml:release",
      ".github/workflows/terraform-plan.yml:apply",
      ".github/workflows/terraform-plan.yml:deploy-plan",
    ]);
    for (const [, job] of withSecrets) expect(typeof job.environment).toBe("string");
    expect([
      plan.jobs["deploy-plan"].environment,
      plan.jobs.apply.environment,
      release.jobs.release.environment,
    ]).toEqual(["production-plan", "production", "release"]);
    // The jobs that pull requests run: no secret, no environment (whose secrets a branch could reach).
    for (const id of ["test", "plan"]) expect(body(plan.jobs[id])).not.toMatch(/secrets\.|environment/);
    for (const id of ["deploy-plan", "apply", "drift"]) expect(plan.jobs[id].if).not.toMatch(/pull_request/);
  });

  it("write no expression into a run: block (inputs and variables reach the shell through env)", () => {
    for (const [, job] of allJobs) expect(runs(job)).not.toContain("${{");
  });

  it("test on supported Node.js releases, the lowest and the newest among them, with no AWS token, for every pull request", () => {
    const engines = (JSON.parse(text("package.json")) as { engines: { node: string } }).engines.node;
    const lowest = engines
      .split("||")
      .map((part) => part.trim().replace(/^(\^|>=)/, ""))
      .sort()[0];
    const nodes = plan.jobs.test.strategy?.matrix?.node ?? [];
    expect([nodes[0], nodes[nodes.length - 1]]).toEqual([lowest, "latest"]);
    // Between them, each supported major from the lowest's on.
    expect(nodes.slice(1, -1)).toEqual([22, 24].filter((major) => major > Number(lowest.split(".")[0])));
    expect(plan.jobs.test.if).toBeUndefined();
    expect(body(plan.jobs.test)).not.toMatch(/id-token/);
    expect(runs(plan.jobs.test)).toContain('node scripts/ci/report-skipped.js "$RUNNER_TEMP/jest.json"');
    expect(runs(plan.jobs.test)).toContain("npx cdktf synth");
  });

  it("plan pull requests only from this repository's branches, without the lock", () => {
    expect(plan.jobs.plan.if).toMatch(/github\.actor != 'dependabot\[bot\]'/);
    expect(plan.jobs.plan.if).toMatch(/head\.repo\.full_name == github\.repository/);
    expect(runs(plan.jobs.plan)).toMatch(/terraform plan .*-detailed-exitcode -lock=false -out=tfplan/);
    expect(runs(plan.jobs.plan)).toContain("check-stack.sh --secrets placeholders");
  });

  it("deploy from main: a locked plan with the secrets, then exactly that plan, encrypted in between, after approval", () => {
    expect(plan.jobs["deploy-plan"].if).toContain("github.ref == 'refs/heads/main'");
    expect(runs(plan.jobs["deploy-plan"])).toMatch(/terraform plan .*-lock-timeout=10m -out=tfplan/);
    expect(runs(plan.jobs["deploy-plan"])).toContain("check-stack.sh --secrets given --deploy");
    expect(runs(plan.jobs["deploy-plan"])).toMatch(/openssl enc -aes-256-cbc/);
    expect(plan.jobs.apply.needs).toBe("deploy-plan");
    expect(runs(plan.jobs.apply)).toMatch(/terraform apply -input=false -no-color -lock-timeout=10m tfplan/);
    expect(runs(plan.jobs.apply)).toMatch(/openssl enc -d -aes-256-cbc/);
    expect(runs(plan.jobs.apply)).not.toMatch(/cdktf deploy|auto-approve|terraform plan/);
  });

  it("check main for drift every day, read-only and without secrets", () => {
    expect(plan.on.schedule).toEqual([{ cron: "17 5 * * *" }]);
    expect(plan.jobs.drift.if).toContain("github.event_name == 'schedule'");
    expect(body(plan.jobs.drift)).toContain("vars.AWS_PLAN_ROLE_ARN");
    expect(body(plan.jobs.drift)).not.toMatch(/secrets\.|AWS_DEPLOY_ROLE_ARN/);
    expect(runs(plan.jobs.drift)).toMatch(/terraform plan .*-detailed-exitcode/);
  });

  it("release a git ref of the application by hand, from main, through the operations command", () => {
    expect(release.on).toEqual({
      workflow_dispatch: { inputs: { ref: expect.objectContaining({ required: true, type: "string" }) } },
    });
    expect(release.jobs.release.if).toBe("github.ref == 'refs/heads/main'");
    expect(body(release.jobs.release)).not.toContain("AWS_DEPLOY_ROLE_ARN");
    expect(runs(release.jobs.release)).toContain('bash scripts/ci/release.sh "$STACK" "$RELEASE_REF"');
    expect(text("scripts/ci/release.sh")).toContain('npm run ops -- "$stack" release "$ref"');
  });

  it("use the pinned engine of the project's CI", () => {
    const pinned = /TERRAFORM_VERSION="\$\{CRM_TERRAFORM_VERSION:-([0-9.]+)\}"/.exec(
      text("scripts/ci/install-tools.sh"),
    )![1];
    expect(pinned).toBe("1.11.4");
    for (const workflow of Object.values(workflows)) expect(workflow.env?.TERRAFORM_VERSION).toBe(pinned);
  });
});
