/**
 * `npm run doctor`: checks every prerequisite of the documented commands at once and names the fix of
 * each one missing: Node.js (package.json's engines), Terraform 1.10 or later (deploys, `npm run ops`), the
 * hashicorp/aws version the stacks require where the Terraform CLI configuration's filesystem mirror is the
 * only source (and the CRM_AWS_PROVIDER_VERSION that fits the mirror), or else that the registry answers,
 * the AWS CLI and credentials (deploys, `npm run secrets`, the restore), ssh (`npm run ops`); then, for
 * information, the test tools of `npm test` (`npm run tools` installs them). Exit 1 when a prerequisite
 * is missing, 0 otherwise; `--help` says so.
 */
import { spawnSync } from "child_process";
import { accessSync, constants, existsSync, readdirSync, readFileSync } from "fs";
import http from "http";
import https from "https";
import { homedir } from "os";
import { delimiter, join, resolve } from "path";
import tls from "tls";
import { SettingsProblem } from "../settings/errors";
import {
  AWS_PROVIDER_VERSION_VARIABLE,
  awsProviderVersion,
  compareVersions,
  OLDEST_TESTED_AWS_PROVIDER,
  PINNED_AWS_PROVIDER,
} from "../settings/provider-version";

const ROOT = resolve(__dirname, "..");
/** Where `npm run tools` installs (scripts/ci/install-tools.sh, env.sh). */
function toolsDir(env: NodeJS.ProcessEnv): string {
  return env.CRM_TOOLS_DIR || join(env.HOME || homedir(), ".cache", "crm-host-tools");
}
const TOOLS_BIN = join(toolsDir(process.env), "bin");
/**
 * What `terraform init` asks the registry first (its service discovery): an answer from it is the registry
 * reachable, as Terraform reaches it.
 */
export const REGISTRY_DISCOVERY_URL = "https://registry.terraform.io/.well-known/terraform.json";
/** The bound of the registry's check: an answer takes well under a second where there is a way to it. */
export const REGISTRY_TIMEOUT_MS = 5_000;
/** The oldest Terraform the stacks accept (their required_version). */
export const MINIMUM_TERRAFORM = "1.10.0";

export const DOCTOR_HELP = [
  "usage: npm run doctor",
  "checks every prerequisite at once, one line each, naming the fix of each missing one:",
  "  Node.js (package.json's engines), Terraform >= 1.10, the AWS provider's version in a filesystem mirror",
  "  (TF_CLI_CONFIG_FILE; the fix: CRM_AWS_PROVIDER_VERSION), or else that the registry answers (5 s at most),",
  "  the AWS CLI, AWS credentials (aws sts get-caller-identity), ssh;",
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

/** Whether a provider_installation `include`/`exclude` list (HCL text between its brackets) names hashicorp/aws. */
function namesAwsProvider(list: string): boolean {
  return [...list.matchAll(/"([^"]+)"/g)].some(([, pattern]) => {
    const parts = pattern.split("/");
    const full = parts.length === 2 ? ["registry.terraform.io", ...parts] : parts;
    return (
      full.length === 3 &&
      ["registry.terraform.io", "hashicorp", "aws"].every((part, i) => full[i] === "*" || full[i] === part)
    );
  });
}

/**
 * The filesystem mirror a Terraform CLI configuration (its text) installs hashicorp/aws from, when it is the
 * only source (no `direct` block, or one that excludes it), with the versions the mirror holds (unpacked
 * directories or packed zip files); undefined otherwise.
 */
export function awsProviderMirror(cliConfig: string): { path: string; versions: string[] } | undefined {
  const mirror = /filesystem_mirror\s*\{([^}]*)\}/.exec(cliConfig)?.[1];
  const path = mirror && /\bpath\s*=\s*"([^"]+)"/.exec(mirror)?.[1];
  if (!mirror || !path) return undefined;
  const include = /\binclude\s*=\s*\[([^\]]*)\]/.exec(mirror)?.[1];
  const exclude = /\bexclude\s*=\s*\[([^\]]*)\]/.exec(mirror)?.[1];
  if ((include !== undefined && !namesAwsProvider(include)) || (exclude !== undefined && namesAwsProvider(exclude)))
    return undefined;
  const direct = /\bdirect\s*\{([^}]*)\}/.exec(cliConfig);
  if (direct) {
    const directInclude = /\binclude\s*=\s*\[([^\]]*)\]/.exec(direct[1])?.[1];
    const directExclude = /\bexclude\s*=\s*\[([^\]]*)\]/.exec(direct[1])?.[1];
    const viaRegistry =
      (directInclude === undefined || namesAwsProvider(directInclude)) &&
      !(directExclude !== undefined && namesAwsProvider(directExclude));
    if (viaRegistry) return undefined;
  }
  const dir = join(path, "registry.terraform.io", "hashicorp", "aws");
  const versions = existsSync(dir)
    ? readdirSync(dir).flatMap(
        (name) => /^(?:terraform-provider-aws_)?(\d+\.\d+\.\d+)(?:_.+\.zip)?$/.exec(name)?.[1] ?? [],
      )
    : [];
  return { path, versions: [...new Set(versions)].sort(compareVersions) };
}

/** The newest version of `versions` the stacks run with (CRM_AWS_PROVIDER_VERSION's range), if any. */
function fittingVersion(versions: string[]): string | undefined {
  return versions
    .filter((v) => compareVersions(v, OLDEST_TESTED_AWS_PROVIDER) >= 0 && compareVersions(v, PINNED_AWS_PROVIDER) <= 0)
    .pop();
}

/**
 * The proxy Terraform takes to an https URL (Go's rules): HTTPS_PROXY or https_proxy, unless NO_PROXY
 * (or no_proxy) names the host, a domain of it, or `*`.
 */
function proxyFor(url: URL, env: NodeJS.ProcessEnv): URL | undefined {
  const proxy = env.HTTPS_PROXY || env.https_proxy;
  if (url.protocol !== "https:" || !proxy) return undefined;
  const bypass = (env.NO_PROXY || env.no_proxy || "").split(",").map((entry) => entry.trim().replace(/^\*?\./, ""));
  const host = url.hostname;
  const bypassed = bypass.some((entry) => entry === "*" || (entry && (host === entry || host.endsWith(`.${entry}`))));
  if (bypassed) return undefined;
  return new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`);
}

/**
 * Why `url` (the registry's service discovery) gives no answer, through the proxy Terraform would take;
 * undefined when it answers 200 with a discovery document (providers.v1). Bounded by `timeoutMs`.
 */
export function registryProblem(
  env: NodeJS.ProcessEnv,
  url = REGISTRY_DISCOVERY_URL,
  timeoutMs = REGISTRY_TIMEOUT_MS,
): Promise<string | undefined> {
  const target = new URL(url);
  const proxy = proxyFor(target, env);
  const via = proxy ? ` through the proxy ${proxy.host}` : "";
  return new Promise((done) => {
    const requests: http.ClientRequest[] = [];
    const finish = (problem: string | undefined) => {
      clearTimeout(timer);
      for (const request of requests) request.destroy();
      done(problem);
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs / 1000} s${via}`), timeoutMs);
    const failed = (error: Error) => finish(`${error.message}${via}`);
    const get = (options: https.RequestOptions) => {
      const request = (target.protocol === "https:" ? https : http).get(target, options, (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
          if (body.length > 65_536) finish(`an answer of over 64 KiB${via}`);
        });
        response.on("end", () => {
          if (response.statusCode !== 200) return finish(`it answered HTTP ${response.statusCode}${via}`);
          let discovery: unknown;
          try {
            discovery = JSON.parse(body);
          } catch {
            discovery = undefined;
          }
          const isDiscovery = typeof discovery === "object" && discovery !== null && "providers.v1" in discovery;
          finish(isDiscovery ? undefined : `its answer is not Terraform's service discovery (no providers.v1)${via}`);
        });
        response.on("error", failed);
      });
      request.on("error", failed);
      requests.push(request);
    };
    if (!proxy) return get({ agent: false });
    // A tunnel to the registry (CONNECT), then TLS to the registry itself inside it.
    const authority = `${target.hostname}:${target.port || 443}`;
    const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    const basic = Buffer.from(credentials).toString("base64");
    const auth = proxy.username ? { "Proxy-Authorization": `Basic ${basic}` } : {};
    const secure = proxy.protocol === "https:";
    const connect = (secure ? https : http).request({
      host: proxy.hostname,
      port: proxy.port || (secure ? 443 : 80),
      method: "CONNECT",
      path: authority,
      headers: { host: authority, ...auth },
      agent: false,
    });
    connect.on("connect", (response: http.IncomingMessage, socket) => {
      if (response.statusCode !== 200) {
        return finish(`the proxy ${proxy.host} refused the tunnel: HTTP ${response.statusCode}`);
      }
      // No agent: an agent would open its own connection instead of taking the tunnel.
      get({
        headers: { host: target.host },
        createConnection: () => tls.connect({ socket, servername: target.hostname }),
      });
    });
    connect.on("error", failed);
    requests.push(connect);
    connect.end();
  });
}

/**
 * The check of the AWS provider: where the Terraform CLI configuration's filesystem mirror is its only
 * source, the version against the mirror's; otherwise that the registry answers (`registry` asks it).
 */
export async function providerFinding(env: NodeJS.ProcessEnv, registry = () => registryProblem(env)): Promise<Finding> {
  const what = "AWS provider";
  let required: string;
  try {
    required = awsProviderVersion(env[AWS_PROVIDER_VERSION_VARIABLE]);
  } catch (error) {
    if (error instanceof SettingsProblem) return { ok: false, what, detail: error.message };
    throw error;
  }
  const config = env.TF_CLI_CONFIG_FILE || join(env.HOME || homedir(), ".terraformrc");
  const exists = existsSync(config);
  const text = exists ? readFileSync(config, "utf8") : "";
  const mirror = exists ? awsProviderMirror(text) : undefined;
  if (!mirror) {
    // Terraform carries on without the file it is told to read, but warns of it before the output of every command.
    const named =
      env.TF_CLI_CONFIG_FILE && !exists
        ? `TF_CLI_CONFIG_FILE names ${config}, which does not exist (Terraform warns of it on every command)`
        : "";
    const network = /network_mirror\s*\{[^}]*\burl\s*=\s*"([^"]+)"/.exec(text)?.[1];
    if (network) {
      const detail = `hashicorp/aws ${required}, from the network mirror ${network} (${config}; not checked)`;
      return { ok: true, what, detail };
    }
    // Without a mirror, `terraform init` (the first step of diff and deploy) fetches the provider from the registry.
    const problem = await registry();
    if (!problem) {
      return { ok: true, what, detail: `hashicorp/aws ${required}, from the registry${named && `: ${named}`}` };
    }
    return {
      ok: false,
      what,
      detail:
        `hashicorp/aws ${required} would come from the registry, which does not answer ` +
        `(${problem}): ${registryFix(env, required)}${named && `; ${named}`}`,
    };
  }
  const source = `the filesystem mirror ${mirror.path} (${config})`;
  if (mirror.versions.includes(required))
    return { ok: true, what, detail: `hashicorp/aws ${required}, from ${source}` };
  const holds = mirror.versions.length ? `it holds ${mirror.versions.join(", ")}` : "it holds none";
  const fits = fittingVersion(mirror.versions);
  const fix = fits
    ? `export ${AWS_PROVIDER_VERSION_VARIABLE}=${fits}`
    : `add hashicorp/aws ${PINNED_AWS_PROVIDER} to the mirror (the stacks run with ${OLDEST_TESTED_AWS_PROVIDER} to ${PINNED_AWS_PROVIDER})`;
  return {
    ok: false,
    what,
    detail: `the stacks require hashicorp/aws ${required}, which ${source} lacks (${holds}): ${fix}`,
  };
}

/**
 * The fix where the registry does not answer: the project's CLI configuration (`npm run tools` writes it
 * with the machine's provider mirror, scripts/ci/env.sh points TF_CLI_CONFIG_FILE at it), and the version
 * to require of that mirror; said of this machine where `npm run tools` has run.
 */
function registryFix(env: NodeJS.ProcessEnv, required: string): string {
  const project = join(toolsDir(env), "terraform.tfrc");
  if (!existsSync(project)) {
    return (
      "run npm run tools, then source scripts/ci/env.sh (the project's Terraform CLI configuration: hashicorp/aws " +
      "from this machine's provider mirror, if it has one), then run npm run doctor again for the " +
      `${AWS_PROVIDER_VERSION_VARIABLE} that fits the mirror`
    );
  }
  const mirror = awsProviderMirror(readFileSync(project, "utf8"));
  if (!mirror) {
    return (
      `npm run tools found no provider mirror on this machine (${project} names the registry): ` +
      "give Terraform a way to registry.terraform.io (HTTPS_PROXY), or put hashicorp/aws in a filesystem mirror " +
      "and run npm run tools again"
    );
  }
  const fits = mirror.versions.includes(required) ? required : fittingVersion(mirror.versions);
  const then =
    fits === required
      ? ""
      : fits
        ? `, then export ${AWS_PROVIDER_VERSION_VARIABLE}=${fits}`
        : ` (it holds no version the stacks run with: add hashicorp/aws ${PINNED_AWS_PROVIDER} to it)`;
  return (
    `source scripts/ci/env.sh (TF_CLI_CONFIG_FILE=${project}: hashicorp/aws from the filesystem mirror ` +
    `${mirror.path})${then}`
  );
}

/** Whether `version` satisfies an engines range made of `^X.Y.Z` and `>=X.Y.Z` alternatives joined by `||`. */
export function satisfiesEngines(version: string, range: string): boolean {
  return range
    .split("||")
    .map((part) => part.trim())
    .some((alternative) => {
      const caret = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(alternative);
      if (caret) return version.split(".")[0] === caret[1] && compareVersions(version, alternative.slice(1)) >= 0;
      const atLeast = /^>=\s*(\d+\.\d+\.\d+)$/.exec(alternative);
      if (atLeast) return compareVersions(version, atLeast[1]) >= 0;
      throw new Error(`package.json's engines: "${alternative}" is neither ^X.Y.Z nor >=X.Y.Z`);
    });
}

/** Runs a program (on PATH, then in the tools' directory); undefined when it is not there. */
function probe(
  program: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { status: number | null; stdout: string; stderr: string } | undefined {
  const path = [env.PATH ?? "", TOOLS_BIN].filter(Boolean).join(delimiter);
  const result = spawnSync(program, args, {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...env, PATH: path, CHECKPOINT_DISABLE: "1" },
  });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return undefined;
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

/** The program's path on PATH or in the tools' directory (without running it), or undefined. */
function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  return [...(env.PATH ?? "").split(delimiter), TOOLS_BIN, "/usr/sbin", "/sbin"]
    .filter(Boolean)
    .map((dir) => join(dir, program))
    .find((file) => {
      try {
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** Every check, in the order of the report. */
export async function diagnose(
  env: NodeJS.ProcessEnv = process.env,
  nodeVersion = process.versions.node,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } })
    .engines.node;
  findings.push(
    satisfiesEngines(nodeVersion, engines)
      ? { ok: true, what: "Node.js", detail: `${nodeVersion} (supported: ${engines})` }
      : {
          ok: false,
          what: "Node.js",
          detail: `${nodeVersion} is not supported (${engines}): install a supported Node.js (README, Prerequisites)`,
        },
  );

  const terraformProgram = env.TERRAFORM_BINARY_NAME || "terraform";
  const terraform = probe(terraformProgram, ["version", "-json"], env);
  const terraformVersion =
    terraform?.status === 0
      ? (JSON.parse(terraform.stdout) as { terraform_version?: string }).terraform_version
      : undefined;
  findings.push(
    !terraformVersion
      ? {
          ok: false,
          what: "Terraform",
          detail: `not installed (no ${terraformProgram}): install Terraform ${MINIMUM_TERRAFORM} or later, or run npm run tools`,
        }
      : compareVersions(terraformVersion, MINIMUM_TERRAFORM) < 0
        ? {
            ok: false,
            what: "Terraform",
            detail: `${terraformVersion} is older than ${MINIMUM_TERRAFORM}, which the stacks need: install a newer one, or run npm run tools`,
          }
        : { ok: true, what: "Terraform", detail: terraformVersion },
  );
  findings.push(await providerFinding(env));

  const aws = probe("aws", ["--version"], env);
  findings.push(
    aws?.status === 0
      ? { ok: true, what: "AWS CLI", detail: `${aws.stdout || aws.stderr}`.trim().split(/\s/)[0] }
      : {
          ok: false,
          what: "AWS CLI",
          detail: "not installed (no aws): install the AWS CLI v2 (https://docs.aws.amazon.com/cli/)",
        },
  );

  const identity =
    aws?.status === 0 ? probe("aws", ["sts", "get-caller-identity", "--output", "json"], env) : undefined;
  if (identity?.status === 0) {
    const { Account, Arn } = JSON.parse(identity.stdout) as { Account?: string; Arn?: string };
    findings.push({
      ok: true,
      what: "AWS credentials",
      detail: `account ${Account}, ${Arn} (aws sts get-caller-identity)`,
    });
  } else {
    const why = identity
      ? (identity.stderr.trim().split("\n").filter(Boolean).pop() ?? `exit ${identity.status}`)
      : "no AWS CLI to ask";
    findings.push({
      ok: false,
      what: "AWS credentials",
      detail: `aws sts get-caller-identity failed (${why}): set a profile (AWS_PROFILE, aws configure) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
    });
  }

  const ssh = probe("ssh", ["-V"], env);
  findings.push(
    ssh
      ? { ok: true, what: "ssh", detail: ssh.stderr.trim().split("\n")[0] }
      : { ok: false, what: "ssh", detail: "not installed (no ssh): install the OpenSSH client; npm run ops needs it" },
  );

  for (const tool of ["checkov", "moto_server", "actionlint", "zizmor", "shellcheck", "mariadbd"]) {
    const found = onPath(tool, env);
    findings.push({
      ok: found !== undefined,
      optional: true,
      what: tool,
      detail: found ? `${found}, for npm test` : "for npm test: not installed (npm run tools installs it)",
    });
  }
  return findings;
}

/** The report's lines. */
export function report(findings: Finding[]): string[] {
  return findings.map(
    (finding) =>
      `${(finding.ok ? "ok" : finding.optional ? "info" : "MISSING").padEnd(8)}${finding.what}: ${finding.detail}`,
  );
}

async function main(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(DOCTOR_HELP);
    return 0;
  }
  if (args.length > 0) {
    console.error(`doctor: unknown argument ${args[0]}\n${DOCTOR_HELP}`);
    return 2;
  }
  const findings = await diagnose();
  for (const line of report(findings)) console.log(line);
  const missing = findings.filter((finding) => !finding.ok && !finding.optional);
  console.log(
    missing.length
      ? `doctor: ${missing.length} prerequisite(s) missing: ${missing.map((f) => f.what).join(", ")}`
      : "doctor: every prerequisite is there",
  );
  return missing.length ? 1 : 0;
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
