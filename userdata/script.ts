import { createHash } from "crypto";
import { readFileSync } from "fs";
import { gzipSync } from "zlib";
import { join } from "path";
import { APP_PORT, FRONT_HTTP_PORT, FRONT_PORT, HTTP_PORT } from "../settings/ports";
import {
  APP_DB_GRANTS,
  APP_DB_USER_HOST,
  CLIENT_PACKAGES,
  DATA_FILE_SYSTEM,
  DATABASE_DROP_IN,
  DATABASE_LOCK_SECONDS,
  DATABASE_SERVICE,
  DATABASE_USER,
  DATABASE_SETUP_WAIT_SECONDS,
  DATABASE_WAIT_SECONDS,
  DRAIN_SECONDS,
  ELASTIC_IP_WAIT_SECONDS,
  ENV_FILE_MODE,
  FREE_MARGIN_MB,
  FRONT_WAIT_SECONDS,
  HEALTH_SECONDS,
  HOLD_SECONDS,
  GIT_SECONDS,
  GIT_STALL_SECONDS,
  KEEP_RELEASES,
  METADATA_TOKEN_TTL_SECONDS,
  NETWORK_ATTEMPTS,
  NETWORK_RETRY_PAUSE_SECONDS,
  NFTABLES_SERVICE,
  NODE_MAJOR,
  NODE_VERSION,
  nodeBinDir,
  NVM_INSTALL_URL,
  PACKAGES,
  STEP_FUNCTIONS,
  SWAP_FILE_MODE,
  SWAP_SIZE,
  TOKEN_USERNAME,
  USER_DATA_COPY,
} from "./constants";
import { opsPaths } from "./ops";
import { telemetryPaths } from "./telemetry";
import { HOST_METRIC_DIMENSIONS, HOST_METRIC_NAMESPACE, HOST_METRICS, HOST_VOLUMES } from "../settings/host-metrics";
import { REF_EXPECTED, REF_FORBIDDEN, REF_SHAPE, isGitRef } from "../settings/git-ref";
import { ProvisioningSettings, ScriptSecrets, SecretParameterNames } from "../settings/provisioning-settings";
import { HOST_FILES, HostFiles } from "../settings/host-layout";
import {
  refreshScriptPath,
  refreshUnitName,
  renderRefreshUnit,
  renderServiceUnit,
  renderTelemetryService,
  renderTelemetryTimer,
} from "./unit";

export type StepFunction = (typeof STEP_FUNCTIONS)[number];

/** Quotes any string as one bash word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Shell variable names of the secrets, in the order they are assigned at the top of the script. */
export const SECRET_VARIABLES: Readonly<Record<keyof ScriptSecrets, string>> = {
  dbRootPasswordBase64: "DB_ROOT_PASSWORD_B64",
  appDbPasswordBase64: "APP_DB_PASSWORD_B64",
  sourceHostTokenBase64: "SOURCE_HOST_TOKEN_B64",
};

/** Shell variables that hold the parameters' names in `parameter-store` mode (userdata/parameter-store.sh). */
export const SECRET_PARAMETER_VARIABLES: Readonly<Record<Exclude<keyof SecretParameterNames, "region">, string>> = {
  dbRootPassword: "DB_ROOT_PASSWORD_PARAMETER",
  appDbPassword: "APP_DB_PASSWORD_PARAMETER",
  sourceHostToken: "SOURCE_HOST_TOKEN_PARAMETER",
};

/** The secrets as the script takes them: in base64 (`user-data` mode), or by their parameters' names (`parameter-store`). */
export type SecretsInput = ScriptSecrets | SecretParameterNames;

/** A shell file of userdata/, as written. */
function shellFile(name: string): string {
  return readFileSync(join(__dirname, `${name}.sh`), "utf8");
}

/** The shell files of userdata/ that define the host's functions: provision.sh, then the modules (scriptModules picks among these). */
export const SHELL_FILES = [
  "provision",
  "ops",
  "telemetry",
  "parameter-store",
  "front",
  "local-database",
  "remote-database",
] as const;
export type ShellFile = (typeof SHELL_FILES)[number];

/** A shell file split (splitShell): its top-level code other than functions, and each function definition, compacted. */
export interface ShellParts {
  readonly prelude: string;
  readonly functions: readonly { readonly name: string; readonly code: string }[];
}

/**
 * A shell file of userdata/ split into its top-level function definitions (`name() {` … a `}` line at column 0, or
 * on one line) and the rest, each compacted (compactShell). Lines inside a here-document or a quoted string are
 * never taken for a function's start or end (tests compare bash's `declare -F` of the file with the names found).
 */
export function splitShell(code: string): ShellParts {
  const prelude: string[] = [];
  const functions: { name: string; code: string }[] = [];
  let current: { name: string; lines: string[] } | undefined;
  let hereDocument: string | undefined;
  let quote: "" | "'" | '"' = "";
  for (const line of code.split("\n")) {
    const inText = hereDocument !== undefined || quote !== "";
    if (hereDocument !== undefined) {
      if (line === hereDocument) hereDocument = undefined;
    } else {
      if (!quote) hereDocument = /<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)/.exec(line.replace(/<<</g, ""))?.[1];
      quote = quoteAfter(line, quote);
    }
    const start = !inText && current === undefined ? /^([A-Za-z_][A-Za-z0-9_]*)\(\) \{/.exec(line) : null;
    if (start) current = { name: start[1], lines: [] };
    if (current === undefined) {
      prelude.push(line);
      continue;
    }
    current.lines.push(line);
    const oneLine = start !== null && quote === "" && hereDocument === undefined && line.trimEnd().endsWith("}");
    if (oneLine || (!inText && !start && line === "}")) {
      functions.push({ name: current.name, code: compactShell(current.lines.join("\n")) });
      current = undefined;
    }
  }
  if (current !== undefined) throw new Error(`the function ${current.name} has no end`);
  return { prelude: compactShell(prelude.join("\n")), functions };
}

/** The parts of each shell file of userdata/, split once. */
const SHELL_PARTS = new Map<ShellFile, ShellParts>();
export function shellParts(name: ShellFile): ShellParts {
  let parts = SHELL_PARTS.get(name);
  if (!parts) SHELL_PARTS.set(name, (parts = splitShell(shellFile(name))));
  return parts;
}

/**
 * The functions of `files` that `code` needs: a function is kept when its name is a word of code kept already,
 * starting from `code`; a word W also keeps W_<value> for each of `variants`, the values of the header's variant axes
 * (`variant TOPOLOGY W` runs W_<TOPOLOGY>, provision.sh), as function names end with them. Conservative: a
 * name that appears in a string or an argument keeps its function too. This is how the user data carries only
 * what the first boot runs (and the refresh and telemetry scripts it installs), while the ops tool carries every
 * function (userdata/ops-tool.ts): it leaves EC2's 16 KiB room to grow as the actions grow, with no list to keep.
 */
export function treeShake(code: string, files: readonly ShellFile[], variants: readonly string[]): string[] {
  return shake(code, files, variants).map((f) => f.code);
}

/** A function of a shell file of userdata/: treeShake's, with the file it comes from. */
interface ShellFunction {
  readonly file: ShellFile;
  readonly name: string;
  readonly code: string;
}

/** treeShake's functions, each with its file. */
function shake(code: string, files: readonly ShellFile[], variants: readonly string[]): ShellFunction[] {
  const all = files.flatMap((file) => shellParts(file).functions.map((f) => ({ file, ...f })));
  const byName = new Map(all.map((f) => [f.name, f.code]));
  const kept = new Set<string>();
  const pending = [code];
  while (pending.length > 0) {
    for (const word of new Set(pending.pop()!.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [])) {
      for (const name of [word, ...variants.map((value) => `${word}_${value}`)]) {
        const found = byName.get(name);
        if (found !== undefined && !kept.has(name)) {
          kept.add(name);
          pending.push(found);
        }
      }
    }
  }
  return all.filter((f) => kept.has(f.name));
}

/**
 * Shell modules of userdata/ (`<name>.sh`, function definitions only) that the settings need, besides provision.sh,
 * whose steps call their functions (a module defines no function that another file defines); the user data
 * carries of them what the first boot runs (treeShake). A feature that only some stacks use lives in a module of
 * its own, so that the user data of the others does not carry it (EC2's 16 KiB limit; see ProvisioningUserData).
 */
export function scriptModules(settings: ProvisioningSettings): ShellFile[] {
  const scaleOut = settings.topology === "scale-out";
  return [
    // ops: the lock the first boot takes (the rest is the ops tool's: treeShake leaves it out); telemetry: metrics and logs.
    "ops",
    "telemetry",
    ...(settings.secrets === "parameter-store" ? ["parameter-store" as const] : []),
    // A single host's front, Caddy, which its ops tool installs before an action (the tool holds every module); the first
    // boot installs it only as the HTTPS server of a domain. A scale-out topology's load balancer is its hosts' front
    // and holds the domain's certificate (ACM).
    ...(settings.domain && !scaleOut ? ["front" as const] : []),
    // Each topology's own definitions of the steps that differ (variant TOPOLOGY): one of the two.
    scaleOut ? "remote-database" : "local-database",
  ];
}

/** The run of the first boot (userdata/first-boot.sh), compacted: what the user data ends with. */
export const FIRST_BOOT_CODE = compactShell(shellFile("first-boot"));

/**
 * What the scale-out topology's hosts know of the stack besides the settings: Terraform expressions (or,
 * in tests, their values), as the user data gives them to the script.
 */
export interface ScaleOutValues {
  /** The database's host name (RDS's endpoint address) and port. */
  readonly databaseHost: string;
  readonly databasePort: string;
  /** The public name of the app: the load balancer's DNS name (a domain's name, when the settings give one, takes its place in the URIs). */
  readonly loadBalancerName: string;
  /** The git ref (branch, tag or commit) every host deploys; empty: the repository's default branch. */
  readonly releaseRef: string;
}

/** What each of ScaleOutValues may be when it is not a Terraform expression: a shell word without quotes. */
const SCALE_OUT_VALUE_PATTERNS: Readonly<
  Record<keyof ScaleOutValues, { test(value: string): boolean; toString(): string }>
> = {
  databaseHost: /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?$/,
  databasePort: /^[0-9]{1,5}$/,
  loadBalancerName: /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?$/,
  // Empty (the default branch), or a ref by the one rule (settings/git-ref.ts).
  releaseRef: { test: (ref: string) => ref === "" || isGitRef(ref), toString: () => `empty or ${REF_EXPECTED}` },
};

/** A Terraform expression that the header may hold between single quotes (it evaluates to one of the patterns above). */
// eslint-disable-next-line no-control-regex
const EXPRESSION = /^\$\{[^'\u0000-\u001f\u007f]*\}$/;

/** Stands for the public hostname in the URI templates of the header; the script puts the name it reads at boot there. */
export const PUBLIC_DNS_MARK = "@PUBLIC_DNS@";

/**
 * The app's addresses, FRONTENDURI and BACKENDURI (docs/original-stack.md §2.5), on `host`: the front end over
 * HTTP on port 80, the back end on 3000. With a domain, the front end is HTTPS on its name (Caddy,
 * userdata/front.sh) and the back end stays on 3000 on that name, as the original stack has it.
 */
export function applicationUris(
  host: string,
  domainName?: string,
): { readonly frontend: string; readonly backend: string } {
  const name = domainName ?? host;
  return { frontend: domainName ? `https://${name}` : `http://${name}`, backend: `http://${name}:${APP_PORT}` };
}

/**
 * Shell code as it goes into the user data: without its blank lines and full-line comments (the #! line among them;
 * shellcheck's directives kept) and without the indentation of its lines, where that indentation is code's: the lines of a
 * here-document or of a quoted string that spans lines are content, kept as they are. Both are for readers of
 * the file; left out, they leave room under EC2's 16 KiB limit. Bash reads the same functions from both (tests
 * compare `declare -f` of every file with that of its compacted code).
 */
export function compactShell(code: string): string {
  const lines: string[] = [];
  let hereDocument: string | undefined;
  let quote: "" | "'" | '"' = "";
  for (const line of code.split("\n")) {
    if (hereDocument !== undefined) {
      lines.push(line);
      if (line === hereDocument) hereDocument = undefined;
      continue;
    }
    if (quote) {
      lines.push(line);
    } else if ((line.trim() !== "" && !/^\s*#/.test(line)) || /^\s*# shellcheck /.test(line)) {
      hereDocument = /<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)/.exec(line.replace(/<<</g, ""))?.[1];
      lines.push(line.trimStart());
    } else {
      continue;
    }
    quote = quoteAfter(line, quote);
  }
  return lines.join("\n");
}

/** The quote still open at the end of `line` of shell code, given the one open at its start ("" for none). */
function quoteAfter(line: string, open: "" | "'" | '"'): "" | "'" | '"' {
  let quote = open;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = "";
    } else if (c === "\\") {
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = "";
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]))) {
      break;
    }
  }
  return quote;
}

/** The header's secret lines: the secrets in base64 (`user-data`), or where the module reads them (`parameter-store`). */
function renderSecretLines(settings: ProvisioningSettings, secrets: SecretsInput): string {
  if (settings.secrets === "parameter-store") {
    if (!("region" in secrets))
      throw new Error("In parameter-store mode the script takes the secrets' parameter names, not their values.");
    // The scale-out topology's hosts read the database's master password from RDS's secret: no root password parameter.
    const scaleOut = settings.topology === "scale-out";
    if (scaleOut !== (secrets.dbRootPassword === undefined)) {
      throw new Error(
        `The ${settings.topology} topology ${scaleOut ? "takes no" : "needs a"} database root password parameter.`,
      );
    }
    const keys = (Object.keys(SECRET_PARAMETER_VARIABLES) as (keyof typeof SECRET_PARAMETER_VARIABLES)[]).filter(
      (key) => secrets[key] !== undefined,
    );
    const names = keys.map((key) => {
      const name = secrets[key] ?? "";
      if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(name))
        throw new Error(`The parameter name ${JSON.stringify(name)} must be a path of letters, digits, _ . -.`);
      return `readonly ${SECRET_PARAMETER_VARIABLES[key]}=${shellQuote(name)}`;
    });
    return `# The secrets: read at boot from Parameter Store with the instance role (parameter-store.sh), never written here.
readonly SECRETS_REGION=${shellQuote(secrets.region)}
${names.join("\n")}
${Object.values(SECRET_VARIABLES)
  .map((name) => `${name}=''`)
  .join(" ")}`;
  }
  if ("region" in secrets) throw new Error("In user-data mode the script takes the secrets themselves, in base64.");
  const lines = (Object.keys(SECRET_VARIABLES) as (keyof ScriptSecrets)[]).map((key) => {
    const value = secrets[key];
    // eslint-disable-next-line no-control-regex
    if (typeof value !== "string" || value === "" || /['\u0000-\u001f\u007f]/.test(value)) {
      throw new Error(
        `The secret ${key} must be base64 text or a Terraform expression, without ' or control characters.`,
      );
    }
    return `readonly ${SECRET_VARIABLES[key]}='${value}'`;
  });
  return `# The secrets, in base64: decoded at run time, so their content is data, never shell or SQL.
${lines.join("\n")}`;
}

/**
 * The header's variables of the host's own paths (HOST_FILES), constants of the host: the tests'
 * stand-in hosts move them under a root of their own by these names (__tests__/support/harness/host-files.ts).
 */
export const HOST_FILE_VARIABLES: Readonly<Record<keyof HostFiles, string>> = {
  unitDirectory: "UNIT_DIRECTORY",
  deviceDirectory: "DEVICE_DIR",
  databaseDir: "DATABASE_DIR",
  fstabFile: "FSTAB",
  nftablesConfig: "NFTABLES_CONFIG",
  caddyBinary: "CADDY_BINARY",
  caddyHome: "CADDY_HOME",
  caddyConfig: "CADDY_CONFIG",
  moduleDirectory: "MODULE_DIR",
};

/** Bash array literal of words that need no quoting (package names). */
function shellArray(words: readonly string[]): string {
  return `(${words.map(shellQuote).join(" ")})`;
}

/** The functions the first boot runs (treeShake), with their files, for `settings`. */
function firstBootFunctions(settings: ProvisioningSettings): ShellFunction[] {
  const prelude = shellParts("provision").prelude;
  return shake(
    `${prelude}\n${FIRST_BOOT_CODE}`,
    [...scriptModules(settings), "provision"],
    [settings.topology, settings.secrets].map((value) => value.replace("-", "_")),
  );
}

/** Whether a function rides in the user data itself: provision.sh's, and a module's step (steps stay in the script). */
function inUserData(f: ShellFunction): boolean {
  return f.file === "provision" || /^step_[0-9]/.test(f.name);
}

/**
 * A module of the first boot as it rides in Parameter Store, not in the user data (HostModules's parameter
 * `<modulePath>/<module>`): its functions that the first boot runs but its steps, which the user data's
 * load_modules (provision.sh) reads and keeps by their sha256 before anything else runs. This is what leaves the user
 * data room under EC2's 16 KiB: a module's parameter (Standard, 4 KB) holds it gzip-compressed in base64.
 */
export interface HostModule {
  /** The module (its file, userdata/<module>.sh): the last part of its parameter's name. */
  readonly module: ShellFile;
  /** Its functions, compacted, as the host keeps them. */
  readonly code: string;
  /** The sha256 of `code` (hex): the header names it, and the host checks it. */
  readonly sha256: string;
  /** The parameter's value: `code` gzip-compressed, in base64. */
  readonly value: string;
}

/** The modules of the first boot for `settings` (scriptModules), each with what the user data leaves of it to Parameter Store. */
export function hostModules(settings: ProvisioningSettings): readonly HostModule[] {
  // They depend only on the modules and the variants (firstBootFunctions): each rendering of the script asks for them
  // twice (the header, the construct), so they are made, gzip and sha256 included, once per kind of host.
  const key = JSON.stringify([scriptModules(settings), settings.topology, settings.secrets]);
  let modules = HOST_MODULES.get(key);
  if (modules === undefined) {
    const functions = firstBootFunctions(settings).filter((f) => !inUserData(f));
    modules = scriptModules(settings).flatMap((module) => {
      const code = `${functions
        .filter((f) => f.file === module)
        .map((f) => f.code)
        .join("\n")}\n`;
      if (code === "\n") return [];
      return [
        {
          module,
          code,
          sha256: createHash("sha256").update(code).digest("hex"),
          value: gzipSync(code, { level: 9 }).toString("base64"),
        },
      ];
    });
    HOST_MODULES.set(key, modules);
  }
  return modules;
}
const HOST_MODULES = new Map<string, readonly HostModule[]>();

/**
 * Renders the first-boot provisioning script (docs/original-stack.md §3) for Amazon Linux 2023, run as root
 * by cloud-init: a header of settings, constants and base64 secrets, the modules' steps (the rest of the modules
 * rides in Parameter Store: hostModules), then userdata/provision.sh and the run (userdata/first-boot.sh).
 * Settings are rendered as given (validate them first with validateProvisioningSettings). Each
 * secret is inserted verbatim, exactly once, inside single quotes: it must be base64 text or a
 * Terraform expression that evaluates to base64. `modulePath` is where the modules' parameters are
 * (`<modulePath>/<module>`; the stacks' moduleParameterPath).
 */
export function renderProvisioningScript(
  settings: ProvisioningSettings,
  secrets: SecretsInput,
  dataVolumeId = "",
  elasticIp = "",
  scaleOut?: ScaleOutValues,
  logGroup = "",
  modulePath = defaultModulePath(settings),
): string {
  // As the files were laid out: the header, the modules' steps, provision.sh (its top-level code, then its functions), the run.
  const prelude = shellParts("provision").prelude.replace(/^#!.*\n/, "");
  const functions = firstBootFunctions(settings).filter(inUserData);
  const header = renderScriptHeader(settings, secrets, dataVolumeId, elasticIp, scaleOut, logGroup, modulePath);
  return [
    header,
    ...functions.filter((f) => f.file !== "provision").map((f) => f.code),
    prelude,
    ...functions.filter((f) => f.file === "provision").map((f) => f.code),
    FIRST_BOOT_CODE.replace(/^#!.*\n/, ""),
  ].join("\n");
}

/** Where the modules' parameters are when no stack names them (the stacks give theirs: moduleParameterPath). */
export function defaultModulePath(settings: ProvisioningSettings): string {
  return `/${settings.appName}/modules`;
}

/** The header's lines of the modules (hostModules): where their parameters are, where the host keeps them, and each one's sha256. */
function renderModuleLines(settings: ProvisioningSettings, modulePath: string): string {
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(modulePath))
    throw new Error(`The module path ${JSON.stringify(modulePath)} must be a path of letters, digits, _ . -.`);
  const modules = hostModules(settings).map((m) => shellQuote(`${m.module}:${m.sha256}`));
  return `# The modules (userdata/script.ts, hostModules): in Parameter Store, kept by their sha256 (provision.sh, load_modules).
readonly MODULE_PATH=${shellQuote(modulePath)} MODULE_DIR=${shellQuote(HOST_FILES.moduleDirectory)}
readonly MODULES=(${modules.join(" ")})
`;
}

/** The header's lines of the scale-out topology: the database and the release (ScaleOutValues); never its master secret (db-setup's). */
function renderScaleOutLines(values: ScaleOutValues): string {
  for (const [key, pattern] of Object.entries(SCALE_OUT_VALUE_PATTERNS) as [
    keyof ScaleOutValues,
    { test(value: string): boolean },
  ][]) {
    if (!pattern.test(values[key]) && !EXPRESSION.test(values[key])) {
      throw new Error(
        `The scale-out topology's ${key} must match ${pattern} or be a Terraform expression; got ${JSON.stringify(values[key])}.`,
      );
    }
  }
  return `readonly DB_HOST='${values.databaseHost}' DB_PORT='${values.databasePort}'
readonly RELEASE_REF='${values.releaseRef}'
readonly DATABASE_WAIT_SECONDS=${DATABASE_WAIT_SECONDS} DATABASE_LOCK_SECONDS=${DATABASE_LOCK_SECONDS} DATABASE_SETUP_WAIT_SECONDS=${DATABASE_SETUP_WAIT_SECONDS}
`;
}

/**
 * The constants of the ops tool's actions (userdata/constants.ts, settings/git-ref.ts), the same for every host: in
 * the user data's header, and in the ops tool after the host's configuration, which they override (userdata/ops-tool.ts).
 */
export function renderToolConstants(): string {
  // One readonly line per group, each with its directive (a directive covers one command): the tests' stand-in hosts
  // shorten the numbers by their readonly lines (__tests__/support/provisioning-harness.ts).
  return `# shellcheck disable=SC2034 # the ops tool's too
readonly GIT_SECONDS=${GIT_SECONDS} GIT_STALL_SECONDS=${GIT_STALL_SECONDS} HEALTH_SECONDS=${HEALTH_SECONDS} KEEP_RELEASES=${KEEP_RELEASES} FREE_MARGIN_MB=${FREE_MARGIN_MB}
# shellcheck disable=SC2034 # the ops tool's too
readonly REF_SHAPE=${shellQuote(REF_SHAPE)} REF_FORBIDDEN=${shellQuote(REF_FORBIDDEN)}
`;
}

/**
 * The constants of a single host's front (userdata/front.sh): in the ops tool, which installs the front and holds
 * requests at it, and in the header only of a stack with a domain, whose first boot installs it.
 */
export function renderFrontConstants(): string {
  return `# shellcheck disable=SC2034 # the ops tool's too
readonly FRONT_PORT=${FRONT_PORT} FRONT_HTTP_PORT=${FRONT_HTTP_PORT} FRONT_WAIT_SECONDS=${FRONT_WAIT_SECONDS} DRAIN_SECONDS=${DRAIN_SECONDS} HOLD_SECONDS=${HOLD_SECONDS}
`;
}

/**
 * The header of the script alone: `#!/bin/bash`, then assignments of the secrets (or, in `parameter-store`
 * mode, of the parameters' names), settings and constants.
 * `dataVolumeId` is the EBS volume that holds the database (`vol-…`, or a Terraform expression that
 * evaluates to one); empty leaves the database on the root disk. `elasticIp` is the host's Elastic IP
 * (an IPv4 address or a Terraform expression), which the first boot waits to see in the metadata
 * before it reads the public hostname; empty reads it at once. `logGroup` is the CloudWatch Logs log group the
 * host ships its logs to (settings/host-metrics.ts, hostLogGroupName); empty ships none (the metrics still go).
 */
export function renderScriptHeader(
  settings: ProvisioningSettings,
  secrets: SecretsInput,
  dataVolumeId = "",
  elasticIp = "",
  scaleOut?: ScaleOutValues,
  logGroup = "",
  modulePath = defaultModulePath(settings),
): string {
  if (logGroup !== "" && !/^[A-Za-z0-9._/#-]{1,512}$/.test(logGroup)) {
    throw new Error(`The log group must be 1 to 512 letters, digits and . _ / # -; got ${JSON.stringify(logGroup)}.`);
  }
  if (dataVolumeId !== "" && !/^vol-([0-9a-f]{8}|[0-9a-f]{17})$/.test(dataVolumeId) && !EXPRESSION.test(dataVolumeId)) {
    throw new Error(
      `The data volume id must be vol- and 8 or 17 hexadecimal digits, or a Terraform expression; got ${JSON.stringify(dataVolumeId)}.`,
    );
  }
  if (elasticIp !== "" && !/^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(elasticIp) && !EXPRESSION.test(elasticIp)) {
    throw new Error(
      `The Elastic IP must be an IPv4 address or a Terraform expression; got ${JSON.stringify(elasticIp)}.`,
    );
  }
  const onScaleOut = settings.topology === "scale-out";
  if (onScaleOut !== (scaleOut !== undefined)) {
    throw new Error(
      onScaleOut
        ? "The scale-out topology's script needs the database, the load balancer's name and the release."
        : "Only the scale-out topology's script takes the database, the load balancer's name and the release.",
    );
  }
  const q = shellQuote;
  // The scale-out topology's hosts serve no HTTPS themselves (the load balancer does) and keep no port-80 redirect.
  const domain = onScaleOut ? undefined : settings.domain;
  // Its URIs name the load balancer (or the domain) as they are: no public hostname of the host fills them in at boot.
  const uris = applicationUris(scaleOut?.loadBalancerName ?? PUBLIC_DNS_MARK, settings.domain?.name);
  const ops = opsPaths(settings);
  const telemetry = telemetryPaths(settings);
  // The single host's own database, data volume and Elastic IP (local-database.sh): a scale-out host has none.
  const own = (line: string) => (onScaleOut ? "" : `${line}\n`);
  return `#!/bin/bash
# First-boot provisioning of the CRM host (docs/original-stack.md §3): this header is rendered by
# userdata/script.ts, the code below it the functions of userdata/*.sh the first boot runs, then userdata/first-boot.sh.

${renderSecretLines(settings, secrets)}

${renderModuleLines(settings, modulePath)}
# Settings.
readonly APP_NAME=${q(settings.appName)}
readonly APP_DIR=${q(settings.appDir)}
readonly REPO_URL=${q(settings.repoUrl)}
readonly DATABASE_NAME=${q(settings.databaseName)}
readonly APP_DB_USER=${q(settings.appDbUser)}
# shellcheck disable=SC2016
readonly GIT_USER=${q(settings.gitUser)}
readonly GIT_EMAIL=${q(settings.gitEmail)}
readonly LOGIN_USER=${q(settings.loginUser)}
readonly LOGIN_HOME=${q(settings.loginHome)}
readonly UNIT_DIRECTORY=${q(HOST_FILES.unitDirectory)}
readonly SWAP_FILE=${q(settings.swapFile)}
readonly LOG_FILE=${q(settings.logFile)}
readonly METADATA_ENDPOINT=${q(settings.metadataEndpoint)}
readonly DATA_VOLUME_ID='${dataVolumeId}'
${own(`readonly DEVICE_DIR=${q(HOST_FILES.deviceDirectory)}`)}readonly DATA_MOUNT=${q(settings.dataMount)}
${own(`readonly DATABASE_DIR=${q(HOST_FILES.databaseDir)}`)}readonly FSTAB=${q(HOST_FILES.fstabFile)}
${own(`readonly DATA_VOLUME_WAIT_SECONDS=${settings.dataVolumeWaitSeconds}`)}readonly NFTABLES_CONFIG=${q(HOST_FILES.nftablesConfig)}
readonly REDIRECT_HTTP_PORT=${settings.redirectHttpPort && !domain && !onScaleOut ? "true" : "false"}
readonly HTTPS=${domain ? "true" : "false"}
# shellcheck disable=SC2034 # the ops tool's (ensure_front)
readonly FRONT=${onScaleOut ? "false" : "true"}
${own(`readonly ELASTIC_IP='${elasticIp}'`)}readonly FRONTEND_URI=${q(uris.frontend)} BACKEND_URI=${q(uris.backend)}
# Which definitions run where a function differs (provision.sh: variant).
# shellcheck disable=SC2034 # read by name
readonly TOPOLOGY=${settings.topology.replace("-", "_")} SECRETS=${settings.secrets.replace("-", "_")}
# shellcheck disable=SC2034 # the ops tool's too
readonly APP_DB_USER_HOST=${q(APP_DB_USER_HOST[settings.topology])} APP_DB_GRANTS=${q(APP_DB_GRANTS[settings.topology])}
${
  domain
    ? `readonly DOMAIN_NAME=${q(domain.name)} ACME_DIRECTORY=${q(domain.acmeDirectory)}
${renderFrontConstants()}`
    : ""
}${own(`# shellcheck disable=SC2034 # the ops tool's (its front)
readonly CADDY_URL=${q(settings.caddyUrl)} CADDY_SHA512=${q(settings.caddySha512)}
# shellcheck disable=SC2034
readonly CADDY_BINARY=${q(HOST_FILES.caddyBinary)} CADDY_HOME=${q(HOST_FILES.caddyHome)} CADDY_CONFIG=${q(HOST_FILES.caddyConfig)}`)}${scaleOut ? renderScaleOutLines(scaleOut) : ""}readonly DATABASE_ADDRESS_ENV=(${scaleOut ? 'DB_HOST "$DB_HOST" DB_PORT "$DB_PORT"' : ""})
# Constants (userdata/constants.ts).
readonly PACKAGES=${shellArray(onScaleOut ? CLIENT_PACKAGES : PACKAGES)}
readonly METADATA_TOKEN_TTL_SECONDS=${METADATA_TOKEN_TTL_SECONDS}
${own(`readonly DATABASE_SERVICE=${q(DATABASE_SERVICE)} DATABASE_USER=${q(DATABASE_USER)} DATABASE_DROP_IN=${q(DATABASE_DROP_IN)}
readonly DATA_FILE_SYSTEM=${q(DATA_FILE_SYSTEM)} ELASTIC_IP_WAIT_SECONDS=${ELASTIC_IP_WAIT_SECONDS}`)}readonly ENV_FILE_MODE=${ENV_FILE_MODE}
readonly NVM_INSTALL_URL=${q(NVM_INSTALL_URL)}
readonly NODE_MAJOR=${q(NODE_MAJOR)} NODE_VERSION=${q(NODE_VERSION)}
readonly NODE_BIN=${q(nodeBinDir(settings.loginHome))}
readonly SWAP_SIZE=${q(SWAP_SIZE)} SWAP_FILE_MODE=${SWAP_FILE_MODE}
readonly TOKEN_USERNAME=${q(TOKEN_USERNAME)}
readonly ATTEMPTS=${NETWORK_ATTEMPTS} PAUSE=${NETWORK_RETRY_PAUSE_SECONDS}
readonly APP_PORT=${APP_PORT} HTTP_PORT=${HTTP_PORT} NFTABLES_SERVICE=${q(NFTABLES_SERVICE)}
readonly SERVICE_UNIT=${q(renderServiceUnit(settings))}
readonly REFRESH_UNIT_NAME=${q(refreshUnitName(settings))}
readonly REFRESH_UNIT=${q(renderRefreshUnit(settings))}
readonly REFRESH_SCRIPT=${q(refreshScriptPath(settings))}
# shellcheck disable=SC2034 # the ops tool's too
readonly OPS_COMMAND=${q(ops.command)} RELEASES_DIR=${q(ops.releasesDirectory)} OPS_LOG=${q(ops.auditLog)} OPS_LOCK=${q(ops.lockFile)} \\
  OPS_STATE=${q(ops.stateFile)}
# shellcheck disable=SC2034 # the ops tool's too
readonly USER_DATA_COPY=${q(USER_DATA_COPY)} HEALTH_PATH=${q(settings.healthCheckPath)}
${renderToolConstants()}# Metrics and logs (settings/host-metrics.ts, userdata/telemetry.sh).
readonly LOG_GROUP=${q(logGroup)} TELEMETRY_SCRIPT=${q(telemetry.script)} TELEMETRY_STATE=${q(telemetry.stateDirectory)}
readonly METRIC_NAMESPACE=${q(HOST_METRIC_NAMESPACE)} HEALTH_METRIC=${HOST_METRICS.appHealthy} DISK_METRIC=${HOST_METRICS.diskUsedPercent}
readonly MEMORY_METRIC=${HOST_METRICS.memoryUsedPercent} INSTANCE_DIMENSION=${HOST_METRIC_DIMENSIONS.instance}
readonly VOLUME_DIMENSION=${HOST_METRIC_DIMENSIONS.volume} ROOT_VOLUME=${HOST_VOLUMES.root} DATA_VOLUME=${HOST_VOLUMES.data}
readonly TELEMETRY_SERVICE=${q(renderTelemetryService(settings))}
readonly TELEMETRY_TIMER=${q(renderTelemetryTimer(settings))}
`;
}
