/**
 * Runs the jobs of a GitHub Actions workflow on this machine, as a hosted runner would, as far as
 * they can run without AWS and GitHub: every job in a private directory of its own (workspace,
 * RUNNER_TEMP, HOME), each `run:` block as GitHub runs it (`bash --noprofile --norc -eo pipefail`
 * on a script file, in the step's working directory), with the runner's files (GITHUB_ENV,
 * GITHUB_OUTPUT, GITHUB_PATH, GITHUB_STEP_SUMMARY) read back after each step, and the expressions
 * (`${{ … }}`, `if:`) evaluated by GitHub's own evaluator (@actions/expressions).
 *
 * The `uses:` steps are stood in by what this machine has:
 * - actions/checkout: a fresh clone of the commit under test (git clone --shared, then checkout);
 * - actions/setup-node: this machine's Node.js, with its npm cache (setup-node's `cache: npm`);
 * - hashicorp/setup-terraform: the Terraform of the tools' cache, refused unless it is the version asked for;
 * - actions/upload-artifact and download-artifact: a directory per artifact, kept for the run;
 * - aws-actions/configure-aws-credentials: there are no AWS credentials here, so the job stops at
 *   that step, and its remaining steps are reported as needing AWS (so is a job whose artifact
 *   comes from such a step); unless the run is given a stand-in for AWS (`aws`: the environment
 *   that points the next steps at moto, say), which the step then adds to the job's environment.
 *   Any other action is refused: the stand-in must be written first.
 *
 * Secrets exist only in environments (as the docs ask of a repository): a job sees the secrets of
 * the environment it names, and no others.
 */
import { Evaluator, Lexer, Parser, data } from "@actions/expressions";
import { truthy } from "@actions/expressions/result";
import { execFileSync, spawn } from "child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "fs";
import { homedir, tmpdir } from "os";
import { basename, delimiter, join, resolve } from "path";
import { parse } from "yaml";
import { findEngine } from "./terraform-engine";

/** A step of a workflow's job, as written in the YAML. */
export interface WorkflowStep {
  readonly id?: string;
  readonly name?: string;
  readonly uses?: string;
  readonly with?: Record<string, unknown>;
  readonly run?: string;
  readonly shell?: string;
  readonly env?: Record<string, unknown>;
  readonly if?: string | boolean;
  readonly "working-directory"?: string;
}

/** A job of a workflow, as written in the YAML. */
export interface WorkflowJob {
  readonly name?: string;
  readonly needs?: string | string[];
  readonly if?: string | boolean;
  readonly environment?: string | { name: string };
  readonly env?: Record<string, unknown>;
  readonly permissions?: Record<string, string>;
  readonly strategy?: { matrix?: Record<string, unknown[]> };
  readonly "timeout-minutes"?: number;
  readonly steps: WorkflowStep[];
}

/** A workflow file, as written in the YAML. */
export interface Workflow {
  readonly name: string;
  readonly on: Record<string, unknown>;
  readonly env?: Record<string, unknown>;
  readonly defaults?: { run?: { shell?: string; "working-directory"?: string } };
  readonly jobs: Record<string, WorkflowJob>;
}

/** Parses a workflow's YAML (the `yaml` package: YAML 1.2, as GitHub reads workflows). */
export function parseWorkflow(text: string): Workflow {
  return parse(text) as Workflow;
}

/** The event that starts the simulated run. */
export interface SimulatedEvent {
  readonly name: "pull_request" | "workflow_dispatch" | "schedule";
  /** GITHUB_REF, e.g. refs/heads/main or refs/pull/7/merge. */
  readonly ref: string;
  /** github.event: the webhook payload (pull_request.number, pull_request.head.repo.full_name, …). */
  readonly payload?: Record<string, unknown>;
  /** @default "octocat" */
  readonly actor?: string;
  /** The workflow_dispatch inputs. */
  readonly inputs?: Record<string, string>;
}

/** The repository's settings as a run sees them. */
export interface RepositorySettings {
  /** Repository variables (vars.*). */
  readonly vars: Record<string, string>;
  /** Environments by name: their secrets and variables (which override the repository's). */
  readonly environments?: Record<string, { secrets?: Record<string, string>; vars?: Record<string, string> }>;
}

/** An annotation a step printed (::error, ::warning, ::notice). */
export interface Annotation {
  readonly level: "error" | "warning" | "notice";
  readonly properties: Record<string, string>;
  readonly message: string;
}

/** What became of a step. `needs-aws`: not run, since it (or what it needs) needs AWS. */
export type StepOutcome = "success" | "failure" | "skipped" | "needs-aws";

export interface StepResult {
  /** The step's name, else its action (owner/repo), else its first line. */
  readonly name: string;
  readonly outcome: StepOutcome;
  /** Why a step was skipped or not run, or what a stand-in did. */
  readonly note?: string;
  readonly exitCode?: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly annotations: Annotation[];
  /** What the step added to the job's summary. */
  readonly summary: string;
  readonly outputs: Record<string, string>;
  /** What the step wrote to GITHUB_ENV. */
  readonly envAdded: Record<string, string>;
}

export interface JobResult {
  readonly id: string;
  /** The job's display name (its `name:`, expressions evaluated). */
  readonly name: string;
  /** false: its `if:` was false for this event (no step ran). */
  readonly ran: boolean;
  /** success: no step failed (some may not have run for want of AWS); failure: a step failed. */
  readonly conclusion: "success" | "failure" | "skipped";
  readonly steps: StepResult[];
  /** The job's workspace (GITHUB_WORKSPACE), kept until the run is removed. */
  readonly workspace: string;
  /** The matrix combination it ran with (the first of the job's matrix). */
  readonly matrix: Record<string, unknown>;
}

/** What the test can do to a job's workspace before a step runs (see WorkflowRun.run). */
export type BeforeStep = (job: string, step: WorkflowStep, workspace: string) => void;

const STATUS_FUNCTIONS = ["success", "failure", "always", "cancelled"];
const CONTEXTS = [
  "github",
  "env",
  "vars",
  "secrets",
  "inputs",
  "matrix",
  "needs",
  "steps",
  "runner",
  "job",
  "strategy",
];
/** The longest a step may take when its job names no timeout. */
const DEFAULT_JOB_MINUTES = 15;

/** The commit a fresh clone of `repo` should check out: HEAD plus the tracked files' uncommitted changes. */
export function commitUnderTest(repo: string): string {
  const git = (...args: string[]): string =>
    execFileSync(
      "git",
      ["-C", repo, "-c", "user.name=workflow-run", "-c", "user.email=workflow-run@localhost", ...args],
      { encoding: "utf8" },
    ).trim();
  // `git stash create` makes a commit of the index and the working tree's tracked changes without
  // touching either (prints nothing when there are none); untracked files are not in it, as in a clone.
  return git("stash", "create") || git("rev-parse", "HEAD");
}

/** A run of one workflow for one event, in a private temporary directory (remove() deletes it). */
export class WorkflowRun {
  public readonly workflow: Workflow;
  public readonly dir: string;
  /** A short private directory for the plugins' Unix sockets (PLUGIN_UNIX_SOCKET_DIR). */
  private readonly sockets: string;
  private readonly artifacts = new Map<string, string>();
  /** Artifacts that a step would have uploaded had it not needed AWS: name -> that step's place. */
  private readonly artifactsNeedingAws = new Map<string, string>();
  private readonly results = new Map<string, JobResult>();

  constructor(
    private readonly repo: string,
    private readonly commit: string,
    /** The workflow's path in the repository, e.g. .github/workflows/terraform-plan.yml. */
    public readonly workflowPath: string,
    private readonly event: SimulatedEvent,
    private readonly settings: RepositorySettings,
    /** What configure-aws-credentials gives the job's next steps; none: the job stops there. */
    private readonly aws?: Record<string, string>,
  ) {
    this.workflow = parseWorkflow(
      execFileSync("git", ["-C", repo, "show", `${commit}:${workflowPath}`], { encoding: "utf8" }),
    );
    this.dir = mkdtempSync(join(tmpdir(), "crm-workflow-run-")); // once nothing can fail any more
    this.sockets = mkdtempSync("/tmp/crm-sockets-");
  }

  /** The job ids in an order that runs every job after the jobs it needs. */
  public jobOrder(): string[] {
    const order: string[] = [];
    const visit = (id: string): void => {
      if (order.includes(id)) return;
      for (const need of needsOf(this.workflow.jobs[id])) visit(need);
      order.push(id);
    };
    Object.keys(this.workflow.jobs).forEach(visit);
    return order;
  }

  /** Whether a job's `if:` (with its needs' results so far) lets it run for this event. */
  public jobWouldRun(id: string): boolean {
    const job = this.workflow.jobs[id];
    const needs = needsOf(job);
    const needsSucceeded = needs.every((need) => (this.results.get(need)?.conclusion ?? "success") === "success");
    return this.condition(job.if, this.jobContexts(id, firstMatrix(job), {}), needsSucceeded);
  }

  /**
   * Runs the workflow's jobs for the event, in order; returns each job's result.
   * `only`: these jobs (the others are not run, and count as succeeded for the jobs that need them);
   * `steps`: only the steps of these names, in the job's workspace as an earlier run left it.
   */
  public async run(
    options: { beforeStep?: BeforeStep; only?: string[]; steps?: string[] } = {},
  ): Promise<Record<string, JobResult>> {
    for (const id of this.jobOrder()) {
      if (options.only && !options.only.includes(id)) continue;
      this.results.set(id, await this.runJob(id, options.beforeStep, options.steps));
    }
    return Object.fromEntries(this.results);
  }

  /** Stores a directory as an artifact of this run, as if an earlier job had uploaded it. */
  public putArtifact(name: string, source: string): void {
    const target = join(this.dir, "artifacts", name);
    rmSync(target, { recursive: true, force: true });
    cpSync(source, target, { recursive: true });
    this.artifacts.set(name, target);
  }

  public remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
    rmSync(this.sockets, { recursive: true, force: true });
  }

  private async runJob(id: string, beforeStep?: BeforeStep, selected?: string[]): Promise<JobResult> {
    const job = this.workflow.jobs[id];
    const matrix = firstMatrix(job);
    const jobDir = join(this.dir, "jobs", id);
    const workspace = join(jobDir, "work");
    const temp = join(jobDir, "temp");
    const home = join(jobDir, "home");
    const toolBin = join(jobDir, "tools");
    for (const dir of [workspace, temp, home, toolBin]) mkdirSync(dir, { recursive: true });

    const contexts = this.jobContexts(id, matrix, { workspace, temp });
    const name = job.name === undefined ? id : this.interpolate(job.name, contexts);
    if (!this.jobWouldRun(id)) return { id, name, ran: false, conclusion: "skipped", steps: [], workspace, matrix };

    // Environment: the workflow's, then the job's (each evaluated in turn), then GITHUB_ENV's, then the step's.
    const env: Record<string, string> = {};
    for (const level of [this.workflow.env, job.env]) {
      for (const [key, value] of Object.entries(level ?? {}))
        env[key] = this.interpolate(String(value), { ...contexts, env: { ...env } });
    }
    const pathAdded: string[] = [toolBin];
    const steps: StepResult[] = [];
    const stepContexts: Record<string, { outcome: string; conclusion: string; outputs: Record<string, string> }> = {};
    let failed = false;
    let awsFrom: string | undefined;
    const deadline = Date.now() + (job["timeout-minutes"] ?? DEFAULT_JOB_MINUTES) * 60_000;

    for (const [index, step] of job.steps.entries()) {
      const stepName = step.name ?? (step.uses ? step.uses.replace(/@.*/, "") : String(step.run).split("\n")[0]);
      const record = (result: Pick<StepResult, "outcome"> & Partial<StepResult>): void => {
        const full: StepResult = {
          name: stepName,
          stdout: "",
          stderr: "",
          annotations: [],
          summary: "",
          outputs: {},
          envAdded: {},
          ...result,
        };
        steps.push(full);
        // For the steps after it, a step that needed AWS did not run.
        const outcome = full.outcome === "needs-aws" ? "skipped" : full.outcome;
        if (step.id) stepContexts[step.id] = { outcome, conclusion: outcome, outputs: full.outputs };
      };
      if (selected && !selected.includes(stepName)) {
        record({ outcome: "skipped", note: "not selected" });
        continue;
      }
      if (awsFrom !== undefined) {
        record({ outcome: "needs-aws", note: awsFrom });
        this.noteArtifactNeedingAws(step, `${id}: ${stepName}`);
        continue;
      }
      const current = { ...contexts, env: { ...env }, steps: stepContexts };
      if (!this.condition(step.if, current, !failed, failed)) {
        record({ outcome: "skipped", note: "its if: is false" });
        continue;
      }
      const stepEnv = { ...env };
      for (const [key, value] of Object.entries(step.env ?? {}))
        stepEnv[key] = this.interpolate(String(value), current);

      if (step.uses) {
        const action = step.uses.replace(/@.*/, "");
        const inputs = Object.fromEntries(
          Object.entries(step.with ?? {}).map(([key, value]) => [
            key,
            this.interpolate(String(value), { ...current, env: stepEnv }),
          ]),
        );
        const outcome = this.standIn(action, inputs, workspace, toolBin);
        if (outcome.needsAws) {
          awsFrom = outcome.needsAws;
          record({ outcome: "needs-aws", note: awsFrom });
          continue;
        }
        record({ outcome: outcome.ok ? "success" : "failure", note: outcome.note, envAdded: outcome.env });
        Object.assign(env, outcome.env);
        if (!outcome.ok) failed = true;
        continue;
      }

      beforeStep?.(id, step, workspace);
      mkdirSync(join(temp, "_runner_file_commands"), { recursive: true });
      const files = Object.fromEntries(
        ["ENV", "OUTPUT", "PATH", "STEP_SUMMARY"].map((kind) => {
          const file = join(temp, "_runner_file_commands", `${kind.toLowerCase()}_${index}`);
          writeFileSync(file, "");
          return [kind, file];
        }),
      );
      const script = join(temp, `step-${index}.sh`);
      writeFileSync(script, String(step.run));
      const workingDirectory = step["working-directory"] ?? this.workflow.defaults?.run?.["working-directory"];
      const cwd = workingDirectory ? resolve(workspace, this.interpolate(workingDirectory, current)) : workspace;
      const shell = step.shell ?? this.workflow.defaults?.run?.shell;
      if (shell !== "bash")
        throw new Error(`${id}: ${stepName}: the simulation runs bash steps only (shell: ${shell ?? "default"})`);
      const processEnv: Record<string, string> = {
        PATH: [...pathAdded, ...hostPath()].join(delimiter),
        HOME: home,
        LANG: "C.UTF-8",
        TMPDIR: temp,
        CI: "true",
        GITHUB_ACTIONS: "true",
        GITHUB_WORKSPACE: workspace,
        GITHUB_EVENT_NAME: this.event.name,
        GITHUB_REF: this.event.ref,
        GITHUB_SHA: this.commit,
        GITHUB_REPOSITORY: REPOSITORY,
        GITHUB_ACTOR: this.event.actor ?? "octocat",
        GITHUB_JOB: id,
        GITHUB_RUN_ID: "4242",
        GITHUB_ENV: files.ENV,
        GITHUB_OUTPUT: files.OUTPUT,
        GITHUB_PATH: files.PATH,
        GITHUB_STEP_SUMMARY: files.STEP_SUMMARY,
        RUNNER_TEMP: temp,
        // A plugin's Unix socket goes into TMPDIR unless this names another directory (go-plugin), and a
        // socket path holds at most 107 bytes: under a long TMPDIR, this run's nested job directories
        // leave the AWS provider no room ("Failed to read any lines from plugin's stdout"). GitHub's
        // RUNNER_TEMP is short (/home/runner/work/_temp).
        PLUGIN_UNIX_SOCKET_DIR: this.sockets,
        RUNNER_OS: "Linux",
        RUNNER_ARCH: "X64",
        npm_config_cache: npmCache(),
        ...stepEnv,
      };
      if (!existsSync(cwd)) {
        record({ outcome: "failure", note: `working directory ${cwd} does not exist` });
        failed = true;
        continue;
      }
      const ran = await runScript(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
        cwd,
        processEnv,
        deadline - Date.now(),
      );
      const envAdded = readKeyValueFile(files.ENV);
      Object.assign(env, envAdded);
      pathAdded.unshift(...readFileSync(files.PATH, "utf8").split("\n").filter(Boolean).reverse());
      const outcome = ran.code === 0 ? "success" : "failure";
      record({
        outcome,
        exitCode: ran.code,
        stdout: ran.stdout,
        stderr: ran.stderr,
        annotations: annotationsOf(ran.stdout),
        summary: readFileSync(files.STEP_SUMMARY, "utf8"),
        outputs: readKeyValueFile(files.OUTPUT),
        envAdded,
        note: ran.timedOut ? "timed out" : undefined,
      });
      if (outcome === "failure") failed = true;
    }
    return { id, name, ran: true, conclusion: failed ? "failure" : "success", steps, workspace, matrix };
  }

  /** Runs the stand-in of an action; `needsAws` says why the job cannot go on here. */
  private standIn(
    action: string,
    inputs: Record<string, string>,
    workspace: string,
    toolBin: string,
  ): { ok: boolean; note?: string; needsAws?: string; env?: Record<string, string> } {
    switch (action) {
      case "actions/checkout": {
        // A fresh clone (objects borrowed from the repository under test), moved into the workspace.
        const clone = join(mkdtempSync(join(this.dir, "clone-")), "repo");
        execFileSync("git", ["clone", "--quiet", "--shared", "--no-checkout", this.repo, clone]);
        cpSync(join(clone, ".git"), join(workspace, ".git"), { recursive: true });
        rmSync(clone, { recursive: true, force: true });
        execFileSync("git", ["-C", workspace, "checkout", "--quiet", "--force", "--detach", this.commit]);
        return { ok: true, note: `cloned ${this.commit.slice(0, 12)}` };
      }
      case "actions/setup-node": {
        const version = execFileSync("node", ["--version"], { encoding: "utf8" }).trim();
        return { ok: true, note: `this machine's Node.js ${version} stands in for ${inputs["node-version"]}` };
      }
      case "hashicorp/setup-terraform": {
        const engine = findEngine();
        if (!engine)
          return { ok: false, note: "no Terraform engine on this machine (scripts/ci/install-tools.sh terraform)" };
        const version = execFileSync(engine, ["version"], {
          encoding: "utf8",
          env: { ...process.env, CHECKPOINT_DISABLE: "1" },
        }).split("\n")[0];
        if (version !== `Terraform v${inputs.terraform_version}`)
          return { ok: false, note: `${engine} is ${version}, not ${inputs.terraform_version}` };
        symlinkSync(engine, join(toolBin, "terraform"));
        return { ok: true, note: version };
      }
      case "actions/upload-artifact": {
        const source = resolve(workspace, inputs.path);
        const empty = !existsSync(source) || (statSync(source).isDirectory() && readdirSync(source).length === 0);
        if (empty) return { ok: inputs["if-no-files-found"] !== "error", note: `nothing at ${inputs.path}` };
        const target = join(this.dir, "artifacts", inputs.name);
        rmSync(target, { recursive: true, force: true });
        // A directory's files go to the artifact's root; a single file keeps its name.
        cpSync(source, statSync(source).isDirectory() ? target : join(target, basename(source)), { recursive: true });
        this.artifacts.set(inputs.name, target);
        return { ok: true, note: `artifact ${inputs.name}` };
      }
      case "actions/download-artifact": {
        const stored = this.artifacts.get(inputs.name);
        const target = resolve(workspace, inputs.path ?? ".");
        if (stored) {
          cpSync(stored, target, { recursive: true });
          return { ok: true, note: `artifact ${inputs.name}` };
        }
        const awsStep = this.artifactsNeedingAws.get(inputs.name);
        if (awsStep)
          return { ok: false, needsAws: `its artifact ${inputs.name} comes from a step that needs AWS (${awsStep})` };
        return { ok: false, note: `no artifact named ${inputs.name} in this run` };
      }
      case "aws-actions/configure-aws-credentials":
        if (this.aws)
          return {
            ok: true,
            note: `a stand-in for AWS (role ${inputs["role-to-assume"]})`,
            env: { AWS_REGION: inputs["aws-region"], ...this.aws },
          };
        return { ok: false, needsAws: `AWS credentials (role ${inputs["role-to-assume"] || "(empty)"})` };
      default:
        throw new Error(`no stand-in for the action ${action}: write one in __tests__/support/workflow-runner.ts`);
    }
  }

  private noteArtifactNeedingAws(step: WorkflowStep, place: string): void {
    if (step.uses?.startsWith("actions/upload-artifact@") && typeof step.with?.name === "string") {
      this.artifactsNeedingAws.set(step.with.name, place);
    }
  }

  private jobContexts(
    id: string,
    matrix: Record<string, unknown>,
    dirs: { workspace?: string; temp?: string },
  ): Record<string, unknown> {
    const job = this.workflow.jobs[id];
    const environment = typeof job.environment === "string" ? job.environment : job.environment?.name;
    const environmentSettings = environment ? this.settings.environments?.[environment] : undefined;
    return {
      github: {
        event_name: this.event.name,
        ref: this.event.ref,
        ref_name: this.event.ref.replace(/^refs\/(heads|tags)\//, ""),
        repository: REPOSITORY,
        actor: this.event.actor ?? "octocat",
        run_id: "4242",
        sha: this.commit,
        job: id,
        event: { ...this.event.payload, inputs: this.event.inputs ?? {} },
        workspace: dirs.workspace ?? "",
      },
      vars: { ...this.settings.vars, ...environmentSettings?.vars },
      secrets: { ...environmentSettings?.secrets },
      inputs: this.event.inputs ?? {},
      matrix,
      needs: Object.fromEntries(
        needsOf(job).map((need) => [need, { result: this.results.get(need)?.conclusion ?? "success", outputs: {} }]),
      ),
      runner: { os: "Linux", arch: "X64", temp: dirs.temp ?? "", name: "simulated" },
      job: { status: "success" },
      strategy: { "job-index": 0 }, // the first combination of the matrix, the one it runs
      steps: {},
      env: {},
    };
  }

  /** Evaluates an `if:` (with success() around it unless it calls a status function). */
  private condition(
    expression: string | boolean | undefined,
    contexts: Record<string, unknown>,
    succeeded: boolean,
    failed = !succeeded,
  ): boolean {
    if (expression === undefined) return succeeded;
    let text = String(expression).trim();
    const whole = /^\$\{\{([\s\S]*)\}\}$/.exec(text);
    if (whole) text = whole[1];
    if (!new RegExp(`\\b(${STATUS_FUNCTIONS.join("|")})\\s*\\(`).test(text)) text = `success() && (${text})`;
    return truthy(evaluate(text, contexts, { success: succeeded, failure: failed, always: true, cancelled: false }));
  }

  /** Replaces each `${{ … }}` of a string by its value, as GitHub converts it to a string. */
  private interpolate(text: string, contexts: Record<string, unknown>): string {
    return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, expression: string) =>
      evaluate(expression, contexts, {}).coerceString(),
    );
  }
}

const REPOSITORY = "example-org/crm-host";

/** The jobs a job needs. */
function needsOf(job: WorkflowJob): string[] {
  return job.needs === undefined ? [] : [job.needs].flat();
}

/** The first combination of a job's matrix (the simulation runs one). */
function firstMatrix(job: WorkflowJob): Record<string, unknown> {
  return Object.fromEntries(Object.entries(job.strategy?.matrix ?? {}).map(([key, values]) => [key, values[0]]));
}

/** Evaluates an expression with GitHub's evaluator; `status` gives success(), failure(), always(), cancelled(). */
function evaluate(
  expression: string,
  contexts: Record<string, unknown>,
  status: Record<string, boolean>,
): data.ExpressionData {
  const functions = STATUS_FUNCTIONS.map((name) => ({
    name,
    minArgs: 0,
    maxArgs: 0,
    call: () => new data.BooleanData(status[name] ?? false),
  }));
  const lexed = new Lexer(expression.trim()).lex();
  const parsed = new Parser(lexed.tokens, CONTEXTS, functions).parse();
  const context = JSON.parse(JSON.stringify(contexts), data.reviver) as data.Dictionary;
  return new Evaluator(parsed, context, new Map(functions.map((f) => [f.name, f]))).evaluate();
}

/** A command's path on PATH (the tools' cache included), or undefined. */
export function findOnPath(command: string): string | undefined {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .map((dir) => join(dir, command))
    .find((candidate) => existsSync(candidate));
}

/** The machine's PATH without the tools' cache: Terraform comes only from the setup-terraform stand-in. */
function hostPath(): string[] {
  const tools = join(process.env.CRM_TOOLS_DIR ?? join(homedir(), ".cache", "crm-host-tools"), "bin");
  return (process.env.PATH ?? "").split(delimiter).filter((dir) => dir && resolve(dir) !== resolve(tools));
}

/** The machine's npm cache (what setup-node's `cache: npm` restores on a runner). */
function npmCache(): string {
  return process.env.npm_config_cache ?? join(homedir(), ".npm");
}

/** NAME=value lines and NAME<<DELIMITER blocks (GITHUB_ENV, GITHUB_OUTPUT). */
function readKeyValueFile(file: string): Record<string, string> {
  const lines = readFileSync(file, "utf8").split("\n");
  const values: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2], i + 1);
      if (end < 0) throw new Error(`${file}: no closing ${heredoc[2]} for ${heredoc[1]}`);
      values[heredoc[1]] = lines.slice(i + 1, end).join("\n");
      i = end;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`${file}: malformed line ${JSON.stringify(line)}`);
    values[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return values;
}

/** The annotations in a step's output, with GitHub's escapes undone. */
export function annotationsOf(stdout: string): Annotation[] {
  const unescape = (text: string): string =>
    text.replace(/%0D/g, "\r").replace(/%0A/g, "\n").replace(/%3A/g, ":").replace(/%2C/g, ",").replace(/%25/g, "%");
  return [...stdout.matchAll(/^::(error|warning|notice)(?: ([^:]*))?::(.*)$/gm)].map((match) => ({
    level: match[1] as Annotation["level"],
    properties: Object.fromEntries(
      (match[2] ?? "")
        .split(",")
        .filter(Boolean)
        .map((pair) => {
          const eq = pair.indexOf("=");
          return [pair.slice(0, eq), unescape(pair.slice(eq + 1))];
        }),
    ),
    message: unescape(match[3]),
  }));
}

/** Runs a command in its own process group, killed whole when it outlives `timeoutMs`. */
function runScript(
  command: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((done, fail) => {
    const child = spawn(command[0], command.slice(1), { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already gone
        }
      },
      Math.max(timeoutMs, 1000),
    );
    child.on("error", fail);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      done({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        timedOut,
      });
    });
  });
}
