import { readFileSync } from "fs";
import { join } from "path";
import {
  APP_PORT, CADDY_PATHS, DATA_FILE_SYSTEM, DATABASE_DROP_IN, DATABASE_SERVICE, DATABASE_USER, ELASTIC_IP_WAIT_SECONDS, ENV_FILE_MODE, HEALTH_SECONDS, HTTP_PORT,
  KEEP_RELEASES, METADATA_TOKEN_TTL_SECONDS, NETWORK_ATTEMPTS, NETWORK_RETRY_PAUSE_SECONDS, NFTABLES_SERVICE,
  NODE_MAJOR, NODE_VERSION, nodeBinDir, NVM_INSTALL_URL, PACKAGES, STEP_FUNCTIONS, SWAP_FILE_MODE, SWAP_SIZE,
  TOKEN_USERNAME, USER_DATA_COPY,
} from "./constants";
import { opsPaths } from "./ops";
import { ProvisioningSettings, ScriptSecrets, SecretParameterNames } from "./settings";
import { refreshScriptPath, refreshUnitName, renderRefreshUnit, renderServiceUnit } from "./unit";

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

/** A shell file of userdata/ as it goes into the user data: without its comment lines (see withoutCommentLines). */
function shellCode(name: string): string {
  return withoutCommentLines(readFileSync(join(__dirname, `${name}.sh`), "utf8"));
}

/**
 * The provisioning code, read once: userdata/provision.sh without its #! line and its comment lines
 * (shellcheck's directives kept, so that the rendered script is checked as the file is).
 * The comments are for readers of the file; left out of the user data, they leave room under EC2's
 * 16 KiB limit (about 2.4 KiB of the compressed script). Safe because no string or here-document of
 * the file holds a line starting with # (a test compares the functions bash reads from both).
 */
export const PROVISIONING_CODE = shellCode("provision");

/**
 * Shell modules of userdata/ (`<name>.sh`, function definitions only) that the settings need,
 * in the order they go into the script: after the header, before provision.sh, whose steps call
 * their functions. A feature that only some stacks use lives in a module of its own, so that the
 * user data of the others does not carry it (EC2's 16 KiB limit; see ProvisioningUserData).
 */
export function scriptModules(settings: ProvisioningSettings): string[] {
  return [
    // ops: the ops command (<app>-ops), which every host gets (installed before step 1).
    "ops",
    ...(settings.secrets === "parameter-store" ? ["parameter-store"] : []),
    ...(settings.domain ? ["https"] : []),
  ];
}

/** Stands for the public hostname in the URI templates of the header; the script puts the name it reads at boot there. */
export const PUBLIC_DNS_MARK = "@PUBLIC_DNS@";

/**
 * The app's addresses, FRONTENDURI and BACKENDURI (spec 2.5), on `host`: the front end over HTTP on
 * port 80, the back end on 3000. With a domain, the front end is HTTPS on its name (Caddy,
 * userdata/https.sh) and the back end stays on 3000 on that name, as the spec has it.
 */
export function applicationUris(host: string, domainName?: string): { readonly frontend: string; readonly backend: string } {
  const name = domainName ?? host;
  return { frontend: domainName ? `https://${name}` : `http://${name}`, backend: `http://${name}:${APP_PORT}` };
}

/** Shell code without its full-line comments (the #! line among them), but for shellcheck's directives. */
export function withoutCommentLines(code: string): string {
  return code.split("\n").filter((line) => !/^\s*#/.test(line) || /^\s*# shellcheck /.test(line)).join("\n");
}

/** The header's secret lines: the secrets in base64 (`user-data`), or where the module reads them (`parameter-store`). */
function renderSecretLines(settings: ProvisioningSettings, secrets: SecretsInput): string {
  if (settings.secrets === "parameter-store") {
    if (!("region" in secrets)) throw new Error("In parameter-store mode the script takes the secrets' parameter names, not their values.");
    const names = (Object.keys(SECRET_PARAMETER_VARIABLES) as (keyof typeof SECRET_PARAMETER_VARIABLES)[]).map((key) => {
      if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(secrets[key])) throw new Error(`The parameter name ${JSON.stringify(secrets[key])} must be a path of letters, digits, _ . -.`);
      return `readonly ${SECRET_PARAMETER_VARIABLES[key]}=${shellQuote(secrets[key])}`;
    });
    return `# The secrets: read at boot from Parameter Store with the instance role (parameter-store.sh), never written here.
readonly SECRETS_REGION=${shellQuote(secrets.region)}
${names.join("\n")}
${Object.values(SECRET_VARIABLES).map((name) => `${name}=''`).join(" ")}`;
  }
  if ("region" in secrets) throw new Error("In user-data mode the script takes the secrets themselves, in base64.");
  const lines = (Object.keys(SECRET_VARIABLES) as (keyof ScriptSecrets)[]).map((key) => {
    const value = secrets[key];
    // eslint-disable-next-line no-control-regex
    if (typeof value !== "string" || value === "" || /['\u0000-\u001f\u007f]/.test(value)) {
      throw new Error(`The secret ${key} must be base64 text or a Terraform expression, without ' or control characters.`);
    }
    return `readonly ${SECRET_VARIABLES[key]}='${value}'`;
  });
  return `# The secrets, in base64: decoded at run time, so their content is data, never shell or SQL.
${lines.join("\n")}`;
}

/** Bash array literal of words that need no quoting (package names). */
function shellArray(words: readonly string[]): string {
  return `(${words.map(shellQuote).join(" ")})`;
}

/**
 * Renders the first-boot provisioning script (spec section 3) for Amazon Linux 2023, run as root
 * by cloud-init: a header of settings, constants and base64 secrets, the modules the settings
 * need (scriptModules), then userdata/provision.sh.
 * Settings are rendered as given (validate them first with validateProvisioningSettings). Each
 * secret is inserted verbatim, exactly once, inside single quotes: it must be base64 text or a
 * Terraform expression that evaluates to base64.
 */
export function renderProvisioningScript(settings: ProvisioningSettings, secrets: SecretsInput, dataVolumeId = "", elasticIp = ""): string {
  const modules = scriptModules(settings).map((name) => `${shellCode(name).replace(/^#!.*\n/, "")}\n`).join("");
  return `${renderScriptHeader(settings, secrets, dataVolumeId, elasticIp)}\n${modules}${PROVISIONING_CODE}`;
}

/**
 * The header of the script alone: `#!/bin/bash`, then assignments of the secrets (or, in `parameter-store`
 * mode, of the parameters' names), settings and constants.
 * `dataVolumeId` is the EBS volume that holds the database (`vol-…`, or a Terraform expression that
 * evaluates to one); empty leaves the database on the root disk. `elasticIp` is the host's Elastic IP
 * (an IPv4 address or a Terraform expression), which the first boot waits to see in the metadata
 * before it reads the public hostname; empty reads it at once.
 */
export function renderScriptHeader(settings: ProvisioningSettings, secrets: SecretsInput, dataVolumeId = "", elasticIp = ""): string {
  // eslint-disable-next-line no-control-regex
  const expression = /^\$\{[^'\u0000-\u001f\u007f]*\}$/;
  if (dataVolumeId !== "" && !/^vol-([0-9a-f]{8}|[0-9a-f]{17})$/.test(dataVolumeId) && !expression.test(dataVolumeId)) {
    throw new Error(`The data volume id must be vol- and 8 or 17 hexadecimal digits, or a Terraform expression; got ${JSON.stringify(dataVolumeId)}.`);
  }
  if (elasticIp !== "" && !/^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(elasticIp) && !expression.test(elasticIp)) {
    throw new Error(`The Elastic IP must be an IPv4 address or a Terraform expression; got ${JSON.stringify(elasticIp)}.`);
  }
  const q = shellQuote;
  const { domain } = settings;
  const uris = applicationUris(PUBLIC_DNS_MARK, domain?.name);
  const ops = opsPaths(settings);
  return `#!/bin/bash
# First-boot provisioning of the CRM host (spec section 3): this header is rendered by
# userdata/script.ts, the code below it is userdata/ops.sh and userdata/provision.sh.

${renderSecretLines(settings, secrets)}

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
readonly UNIT_DIRECTORY=${q(settings.unitDirectory)}
readonly SWAP_FILE=${q(settings.swapFile)}
readonly LOG_FILE=${q(settings.logFile)}
readonly METADATA_ENDPOINT=${q(settings.metadataEndpoint)}
readonly DATA_VOLUME_ID='${dataVolumeId}'
readonly DEVICE_DIR=${q(settings.deviceDirectory)}
readonly DATA_MOUNT=${q(settings.dataMount)}
readonly DATABASE_DIR=${q(settings.databaseDir)}
readonly FSTAB=${q(settings.fstabFile)}
readonly DATA_VOLUME_WAIT_SECONDS=${settings.dataVolumeWaitSeconds}
readonly NFTABLES_CONFIG=${q(settings.nftablesConfig)}
readonly REDIRECT_HTTP_PORT=${settings.redirectHttpPort && !domain ? "true" : "false"}
readonly ELASTIC_IP='${elasticIp}'
readonly FRONTEND_URI=${q(uris.frontend)} BACKEND_URI=${q(uris.backend)}
${domain ? `readonly DOMAIN_NAME=${q(domain.name)} ACME_DIRECTORY=${q(domain.acmeDirectory)}
readonly CADDY_URL=${q(domain.caddyUrl)} CADDY_SHA512=${q(domain.caddySha512)}
readonly CADDY_BINARY=${q(CADDY_PATHS.binary)} CADDY_HOME=${q(CADDY_PATHS.home)} CADDY_CONFIG=${q(CADDY_PATHS.config)}
` : ""}
# Constants (userdata/constants.ts).
readonly PACKAGES=${shellArray(PACKAGES)}
readonly DATABASE_SERVICE=${q(DATABASE_SERVICE)} DATABASE_USER=${q(DATABASE_USER)}
readonly DATA_FILE_SYSTEM=${q(DATA_FILE_SYSTEM)} DATABASE_DROP_IN=${q(DATABASE_DROP_IN)}
readonly METADATA_TOKEN_TTL_SECONDS=${METADATA_TOKEN_TTL_SECONDS} ELASTIC_IP_WAIT_SECONDS=${ELASTIC_IP_WAIT_SECONDS}
readonly ENV_FILE_MODE=${ENV_FILE_MODE}
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
readonly OPS_COMMAND=${q(ops.command)} RELEASES_DIR=${q(ops.releasesDirectory)}
readonly OPS_LOG=${q(ops.auditLog)} OPS_LOCK=${q(ops.lockFile)}
readonly USER_DATA_COPY=${q(USER_DATA_COPY)} HEALTH_PATH=${q(settings.healthCheckPath)}
readonly HEALTH_SECONDS=${HEALTH_SECONDS} KEEP_RELEASES=${KEEP_RELEASES}
`;
}
