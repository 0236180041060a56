/**
 * `npm run doctor`: checks every prerequisite of the documented commands at once and names the fix of
 * each one missing: Node.js (package.json's engines), Terraform 1.10 or later (deploys, `npm run ops`),
 * the AWS CLI and credentials (deploys, `npm run secrets`, the restore), ssh (`npm run ops`); then, for
 * information, the test tools of `npm test` (`npm run tools` installs them). Exit 1 when a prerequisite
 * is missing, 0 otherwise; `--help` says so.
 */
import { spawnSync } from "child_process";
import { accessSync, constants, readFileSync } from "fs";
import { homedir } from "os";
import { delimiter, join, resolve } from "path";

const ROOT = resolve(__dirname, "..");
/** Where `npm run tools` installs (scripts/ci/install-tools.sh, env.sh). */
const TOOLS_BIN = join(process.env.CRM_TOOLS_DIR || join(homedir(), ".cache", "crm-host-tools"), "bin");
/** The oldest Terraform the stacks accept (their required_version). */
export const MINIMUM_TERRAFORM = "1.10.0";

export const DOCTOR_HELP = [
  "usage: npm run doctor",
  "checks every prerequisite at once, one line each, naming the fix of each missing one:",
  "  Node.js (package.json's engines), Terraform >= 1.10, the AWS CLI, AWS credentials (aws sts get-caller-identity), ssh;",
  "  then the test tools of npm test, for information (npm run tools installs them)",
  "exit 0 when every prerequisite is there, 1 when one is missing",
  "options:",
  "  -h, --help  this help",
].join("\n");

/** One line of the report. */
export interface Finding {
  readonly ok: boolean;
  /** Only informs: a missing one does not fail the command. */
  readonly optional?: boolean;
  readonly what: string;
  readonly detail: string;
}

/** `a` compared with `b`, both dotted version numbers: negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a, b].map((version) => version.split(".").map((part) => Number.parseInt(part, 10) || 0));
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Whether `version` satisfies an engines range made of `^X.Y.Z` and `>=X.Y.Z` alternatives joined by `||`. */
export function satisfiesEngines(version: string, range: string): boolean {
  return range.split("||").map((part) => part.trim()).some((alternative) => {
    const caret = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(alternative);
    if (caret) return version.split(".")[0] === caret[1] && compareVersions(version, alternative.slice(1)) >= 0;
    const atLeast = /^>=\s*(\d+\.\d+\.\d+)$/.exec(alternative);
    if (atLeast) return compareVersions(version, atLeast[1]) >= 0;
    throw new Error(`package.json's engines: "${alternative}" is neither ^X.Y.Z nor >=X.Y.Z`);
  });
}

/** Runs a program (on PATH, then in the tools' directory); undefined when it is not there. */
function probe(program: string, args: string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } | undefined {
  const path = [env.PATH ?? "", TOOLS_BIN].filter(Boolean).join(delimiter);
  const result = spawnSync(program, args, { encoding: "utf8", timeout: 30_000, env: { ...env, PATH: path, CHECKPOINT_DISABLE: "1" } });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return undefined;
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

/** The program's path on PATH or in the tools' directory (without running it), or undefined. */
function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  return [...(env.PATH ?? "").split(delimiter), TOOLS_BIN, "/usr/sbin", "/sbin"].filter(Boolean).map((dir) => join(dir, program)).find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Every check, in the order of the report. */
export function diagnose(env: NodeJS.ProcessEnv = process.env, nodeVersion = process.versions.node): Finding[] {
  const findings: Finding[] = [];
  const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
  findings.push(satisfiesEngines(nodeVersion, engines)
    ? { ok: true, what: "Node.js", detail: `${nodeVersion} (supported: ${engines})` }
    : { ok: false, what: "Node.js", detail: `${nodeVersion} is not supported (${engines}): install a supported Node.js (README, Prerequisites)` });

  const terraformProgram = env.TERRAFORM_BINARY_NAME || "terraform";
  const terraform = probe(terraformProgram, ["version", "-json"], env);
  const terraformVersion = terraform?.status === 0 ? (JSON.parse(terraform.stdout) as { terraform_version?: string }).terraform_version : undefined;
  findings.push(!terraformVersion
    ? { ok: false, what: "Terraform", detail: `not installed (no ${terraformProgram}): install Terraform ${MINIMUM_TERRAFORM} or later, or run npm run tools` }
    : compareVersions(terraformVersion, MINIMUM_TERRAFORM) < 0
      ? { ok: false, what: "Terraform", detail: `${terraformVersion} is older than ${MINIMUM_TERRAFORM}, which the stacks need: install a newer one, or run npm run tools` }
      : { ok: true, what: "Terraform", detail: terraformVersion });

  const aws = probe("aws", ["--version"], env);
  findings.push(aws?.status === 0
    ? { ok: true, what: "AWS CLI", detail: `${aws.stdout || aws.stderr}`.trim().split(/\s/)[0] }
    : { ok: false, what: "AWS CLI", detail: "not installed (no aws): install the AWS CLI v2 (https://docs.aws.amazon.com/cli/)" });

  const identity = aws?.status === 0 ? probe("aws", ["sts", "get-caller-identity", "--output", "json"], env) : undefined;
  if (identity?.status === 0) {
    const { Account, Arn } = JSON.parse(identity.stdout) as { Account?: string; Arn?: string };
    findings.push({ ok: true, what: "AWS credentials", detail: `account ${Account}, ${Arn} (aws sts get-caller-identity)` });
  } else {
    const why = identity ? identity.stderr.trim().split("\n").filter(Boolean).pop() ?? `exit ${identity.status}` : "no AWS CLI to ask";
    findings.push({ ok: false, what: "AWS credentials",
      detail: `aws sts get-caller-identity failed (${why}): set a profile (AWS_PROFILE, aws configure) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY` });
  }

  const ssh = probe("ssh", ["-V"], env);
  findings.push(ssh
    ? { ok: true, what: "ssh", detail: ssh.stderr.trim().split("\n")[0] }
    : { ok: false, what: "ssh", detail: "not installed (no ssh): install the OpenSSH client; npm run ops needs it" });

  for (const tool of ["checkov", "moto_server", "actionlint", "zizmor", "shellcheck", "mariadbd"]) {
    const found = onPath(tool, env);
    findings.push({ ok: found !== undefined, optional: true, what: tool, detail: found ? `${found}, for npm test` : "for npm test: not installed (npm run tools installs it)" });
  }
  return findings;
}

/** The report's lines. */
export function report(findings: Finding[]): string[] {
  return findings.map((finding) => `${(finding.ok ? "ok" : finding.optional ? "info" : "MISSING").padEnd(8)}${finding.what}: ${finding.detail}`);
}

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(DOCTOR_HELP);
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(`doctor: unknown argument ${args[0]}\n${DOCTOR_HELP}`);
    process.exit(2);
  }
  const findings = diagnose();
  for (const line of report(findings)) console.log(line);
  const missing = findings.filter((finding) => !finding.ok && !finding.optional);
  console.log(missing.length ? `doctor: ${missing.length} prerequisite(s) missing: ${missing.map((f) => f.what).join(", ")}` : "doctor: every prerequisite is there");
  process.exit(missing.length ? 1 : 0);
}
