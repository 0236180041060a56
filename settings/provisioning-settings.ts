import { z } from "zod";
import { oneProblem, settingsProblemsFrom } from "./errors";
import { CADDY_DOWNLOAD_URL, CADDY_FIELDS, CADDY_SHA512, domainSettingsSchema } from "./domain-settings";
import { absolutePath, flag, matching, oneOf, text, wholeNumber } from "./rules";
import { gitKeepsIdent, isBracketedIPv6, isHostName, isIPv4Address, isNftTableName, isPort } from "./grammars";
import { pathsApart } from "./host-layout";
import { APP_PORT, HTTP_PORT } from "./ports";

/** MariaDB's own schemas: the app user gets ALL PRIVILEGES on its database (on `mysql`, it could read root's hash). */
export const RESERVED_DATABASE_NAMES = ["mysql", "information_schema", "performance_schema", "sys"] as const;
/** Accounts MariaDB creates or reserves (`mariadb.sys` cannot pass the user-name pattern anyway). */
export const RESERVED_DATABASE_USERS = ["root", "mysql", "mariadb.sys", "public"] as const;
/**
 * Service units of Amazon Linux 2023 (and of systemd) that `<app>.service` must not shadow, and
 * prefixes of families of them.
 */
export const RESERVED_UNIT_NAMES = [
  "mariadb",
  "mysqld",
  "mysql",
  "sshd",
  "ssh",
  "nftables",
  "iptables",
  "firewalld",
  "cloud-init",
  "cloud-config",
  "cloud-final",
  "cloud-init-local",
  "dbus",
  "dbus-broker",
  "chronyd",
  "crond",
  "atd",
  "rsyslog",
  "auditd",
  "sssd",
  "polkit",
  "gssproxy",
  "irqbalance",
  "rngd",
  "acpid",
  "amazon-ssm-agent",
  "amazon-ec2-net-utils",
  "ec2-instance-connect",
  "NetworkManager",
  "network",
  "getty",
  "serial-getty",
  "user",
  "emergency",
  "rescue",
  "kmod-static-nodes",
  "dnf-makecache",
  "nvm",
  "node",
  "yarn",
] as const;
export const RESERVED_UNIT_PREFIXES = ["systemd-", "cloud-", "dbus-", "getty", "user-", "mariadb", "mysql"] as const;
const inList = (list: readonly string[]) => (value: string) => !list.includes(value.toLowerCase());

/**
 * Settings of the first-boot provisioning script (docs/original-stack.md §3) and its service unit (§3.1),
 * one schema per setting. The script quotes every setting, but each also lands in other grammars
 * (a unit name, an nftables table, SQL, a git identity, a URL, a path in a unit file and in the file
 * system table), and is checked against every one of them (settings/grammars.ts), reserved words
 * included. Everything here is public: the three secrets never pass through these settings (see ScriptSecrets).
 */
const APP_NAME_EXPECTED =
  "a name of 1 to 64 letters, digits, _ . or -, starting with a letter, that is a systemd unit " +
  "name of no unit of the distribution (such as mariadb, sshd, nftables, cloud-init, systemd-…) and an nftables table name " +
  "that is no nftables keyword (such as ip, tcp, counter, log, meta, redirect) nor a table of the distribution (filter, nat, …)";
const DATABASE_NAME_EXPECTED =
  "a MariaDB database name of 1 to 64 letters, digits or _, each _ counting twice (GRANT writes it \\_), " +
  `not one of MariaDB's own schemas (${RESERVED_DATABASE_NAMES.join(", ")})`;
const DATABASE_USER_EXPECTED =
  "a MariaDB user name of 1 to 32 letters, digits or _, not an account MariaDB creates or " +
  `reserves (${RESERVED_DATABASE_USERS.join(", ")})`;
const REPO_URL_EXPECTED =
  "an https address of the repository without credentials, such as https://github.com/org/app.git " +
  "(a host name of labels of 1 to 63 letters, digits or -, an optional port from 1 to 65535, then a path of letters, " +
  "digits and . _ ~ + -, with no . or .. segment)";
const GIT_USER_EXPECTED =
  "1 to 100 printable characters that git keeps as written in a commit's author: no < or >, and " +
  "not starting or ending with a space or one of . , : ; \" ' \\";
const GIT_EMAIL_EXPECTED =
  "an e-mail address such as deploy@example.com (up to 64 letters, digits and . _ % + - before the @, " +
  "no dot at either end or twice; a domain after it)";
const METADATA_EXPECTED =
  "http:// and the address of a metadata service, IPv4 or IPv6 in brackets, with an optional port " +
  "from 1 to 65535 and no trailing slash, such as http://169.254.169.254 (an address: not a host name)";

/** The parts of an https address the script clones from, or undefined when it is not one. */
function repositoryAddress(url: string): { host: string; port?: string; path: string } | undefined {
  const match = /^https:\/\/([^/:]+)(?::([^/]*))?((?:\/[A-Za-z0-9._~+-]+)+)\/?$/.exec(url);
  return match ? { host: match[1], port: match[2], path: match[3] } : undefined;
}

function isRepositoryAddress(url: string): boolean {
  const address = repositoryAddress(url);
  return (
    address !== undefined &&
    isHostName(address.host) &&
    (address.port === undefined || isPort(address.port)) &&
    !address.path.split("/").some((segment) => segment === "." || segment === "..")
  );
}

function isMetadataAddress(url: string): boolean {
  const match = /^http:\/\/(\[[^\]]*\]|[0-9.]+)(?::([^/]*))?$/.exec(url);
  return (
    match !== null &&
    (isIPv4Address(match[1]) || isBracketedIPv6(match[1])) &&
    (match[2] === undefined || isPort(match[2]))
  );
}

/** The bounds of a release's build and release commands (releaseCommandTimeoutSeconds), and its default. */
export const RELEASE_COMMAND_TIMEOUT_SECONDS = 600;
export const MIN_RELEASE_COMMAND_TIMEOUT_SECONDS = 10;
export const MAX_RELEASE_COMMAND_TIMEOUT_SECONDS = 7200;
/** The longest build or release command, in characters. */
export const MAX_APP_COMMAND_LENGTH = 1000;
export const APP_COMMAND_EXPECTED =
  `one line of 1 to ${MAX_APP_COMMAND_LENGTH} printable characters, not only spaces, that bash -c ` +
  "runs as the app's user (no line break, tab or other control character, and no invisible formatting character)";
/**
 * One command line for `bash -c`: printable characters only. A line break would hide a second command from the
 * audit line and the one-line logs that show the command; a control or invisible formatting character (a
 * bidirectional override) would show the reviewer another command than the one that runs.
 */
export const APP_COMMAND = new RegExp(`^(?=.*\\S)[^\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]{1,${MAX_APP_COMMAND_LENGTH}}$`, "u");

function appCommand(description: string) {
  return matching(description, APP_COMMAND, APP_COMMAND_EXPECTED).optional();
}

/** The values of the `secrets` setting. */
export const SECRET_SOURCES = ["user-data", "parameter-store"] as const;

/** The values of the `topology` setting: the original stack's one host, or the managed engines of docs/scale-out.md. */
export const TOPOLOGIES = ["single-host", "scale-out"] as const;

/**
 * The master user of the scale-out topology's database (Amazon RDS for MariaDB), and the accounts RDS
 * keeps for itself: the app's user may be none of them.
 */
export const DATABASE_MASTER_USER = "admin";
export const RDS_RESERVED_USERS = [DATABASE_MASTER_USER, "rdsadmin", "rdsrepladmin", "rdsproxyadmin"] as const;

export const PROVISIONING_FIELDS = {
  appName: text(
    "`<app>`: name of the systemd units `<app>.service` and `<app>-public-uris.service` and of the nftables table " +
      "`inet <app>`; not a unit of the distribution, which it would shadow (RESERVED_UNIT_NAMES and RESERVED_UNIT_PREFIXES in " +
      "settings/provisioning-settings.ts), nor an nftables keyword or a distribution's table (NFT_KEYWORDS, NFT_RESERVED_TABLES in settings/grammars.ts).",
    APP_NAME_EXPECTED,
    (schema) =>
      schema
        .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, { error: APP_NAME_EXPECTED })
        .refine(
          (name) =>
            inList(RESERVED_UNIT_NAMES.map((unit) => unit.toLowerCase()))(name) &&
            !RESERVED_UNIT_PREFIXES.some((prefix) => name.toLowerCase().startsWith(prefix)) &&
            isNftTableName(name),
          { error: APP_NAME_EXPECTED },
        ),
  ),
  appDir: absolutePath("`<app_dir>`: absolute path of the checkout, inside the login user's home."),
  // The shape as a pattern too (for editors, through the JSON Schema); the numbers and lengths by refinement.
  repoUrl: text(
    "`<repo_url>`: https address of the private repository, without credentials.",
    REPO_URL_EXPECTED,
    (schema) =>
      schema
        .regex(/^https:\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~+-]+)+\/?$/, { error: REPO_URL_EXPECTED })
        .refine(isRepositoryAddress, { error: REPO_URL_EXPECTED }),
  ),
  databaseName: text(
    "`<database_name>`: database created for the application; not one of MariaDB's own schemas " +
      `(${RESERVED_DATABASE_NAMES.join(", ")}).`,
    DATABASE_NAME_EXPECTED,
    (schema) =>
      schema
        .regex(/^[A-Za-z0-9_]{1,64}$/, { error: DATABASE_NAME_EXPECTED })
        .refine((name) => name.replace(/_/g, "\\_").length <= 64, { error: DATABASE_NAME_EXPECTED })
        .refine(inList(RESERVED_DATABASE_NAMES), { error: DATABASE_NAME_EXPECTED }),
  ),
  appDbUser: text(
    "`<app_db_user>`: database account, created as `<app_db_user>`@localhost (`@'%'` on the scale-out topology's " +
      "database); not an account MariaDB " +
      `creates or reserves (${RESERVED_DATABASE_USERS.join(", ")}).`,
    DATABASE_USER_EXPECTED,
    (schema) =>
      schema
        .regex(/^[A-Za-z0-9_]{1,32}$/, { error: DATABASE_USER_EXPECTED })
        .refine(inList(RESERVED_DATABASE_USERS), { error: DATABASE_USER_EXPECTED }),
  ),
  gitUser: text(
    "`<git_user>`: global git user.name of the login user, as git writes it into commits.",
    GIT_USER_EXPECTED,
    (schema) =>
      schema
        .regex(/^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]{1,100}$/u, { error: GIT_USER_EXPECTED })
        .refine(gitKeepsIdent, { error: GIT_USER_EXPECTED }),
  ),
  gitEmail: matching(
    "`<EMAIL>`: global git user.email of the login user.",
    /^(?=[^@]{1,64}@)[A-Za-z0-9_%+-]+(\.[A-Za-z0-9_%+-]+)*@(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/,
    GIT_EMAIL_EXPECTED,
  ),
  loginUser: matching(
    "Default login user of the image, who owns the checkout and runs the service; not root nor a system " +
      "account (SYSTEM_ACCOUNTS in settings/host-layout.ts). As in the original stack: `ec2-user`.",
    /^[a-z_][a-z0-9_-]{0,30}$/,
    "a Linux user name of 1 to 31 lower-case letters, digits, _ or -, starting with a letter or _ (systemd's strict rule for User=)",
  ),
  loginHome: absolutePath("Home directory of the login user. As in the original stack: `/home/ec2-user`."),
  swapFile: absolutePath(
    "Swap file path. As in the original stack: `/swapfile`. Clear of the system's own paths and " +
      "of the other path settings.",
  ),
  logFile: absolutePath("File the script's output is appended to (besides cloud-init's own log), inside /var/log."),
  metadataEndpoint: text(
    "Base address of the instance metadata service (IMDSv2): `http://169.254.169.254` (the " +
      "original stack's), or its IPv6 form `http://[fd00:ec2::254]`, which the instance then enables.",
    METADATA_EXPECTED,
    (schema) =>
      schema
        .regex(/^http:\/\/(\[[0-9A-Fa-f:.]+\]|[0-9.]+)(:[0-9]+)?$/, { error: METADATA_EXPECTED })
        .refine(isMetadataAddress, { error: METADATA_EXPECTED }),
  ),
  dataMount: absolutePath(
    "Mount point of the data volume; MariaDB's data lives in its `mysql` directory. Production: `/var/lib/crm-data`.",
  ),
  dataVolumeWaitSeconds: wholeNumber(
    "How long the first boot waits for the data volume's device. Production: 300.",
    1,
    3600,
    "seconds",
  ),
  scriptDirectory: absolutePath(
    "Directory of root's helper scripts: the one that refreshes the public addresses in .env at each boot, " +
      "and the ops command `<app>-ops` (releases, rollback, patch, reprovision, rotate-secrets). `/usr/local/sbin`.",
  ),
  secrets: oneOf(
    "Where the host gets the three secrets. `user-data`: Terraform variables written into the user data " +
      "(the original stack). `parameter-store`: SecureString parameters `/<stackName>/crm/…` read at boot with the " +
      "instance role; the stack then holds no secret (docs/secrets.md).",
    SECRET_SOURCES,
  ),
  redirectHttpPort: flag(
    `Redirect tcp/${HTTP_PORT} to the app's port ${APP_PORT} with nftables (the app runs as the login user, who cannot ` +
      `bind ${HTTP_PORT}). \`false\` for an app that binds ${HTTP_PORT} itself: its unit then gets \`AmbientCapabilities=CAP_NET_BIND_SERVICE\`. ` +
      `With a \`domain\`, the HTTPS server takes port ${HTTP_PORT} (to redirect it) and nothing is redirected.`,
  ),
  domain: domainSettingsSchema.optional(),
  ...CADDY_FIELDS,
  topology: oneOf(
    "How the stack runs the app. `single-host`: one EC2 instance with its own MariaDB (the original " +
      "stack). `scale-out`: hosts of an Auto Scaling group behind an Application Load Balancer, on a database of " +
      "Amazon RDS for MariaDB; it needs " +
      '`"secrets": "parameter-store"` (docs/scale-out.md).',
    TOPOLOGIES,
  ),
  healthCheckPath: matching(
    `Path a release or rollback of the ops command (\`<app>-ops\`) asks on port ${APP_PORT}: the new release is kept ` +
      "when it answers with an HTTP status below 500 (docs/operations.md).",
    /^\/[A-Za-z0-9._~%/-]{0,200}(\?[A-Za-z0-9._~%=&-]{0,200})?$/,
    "a path starting with / such as / or /health?full=1 (letters, digits and . _ ~ % / - only, then an optional ?query)",
  ),
  buildCommand: appCommand(
    "A command a release runs in the new release's directory after its `yarn install`, before the release " +
      "command (e.g. `yarn build`): as the app's user, with the app's environment, bounded by `releaseCommandTimeoutSeconds`; " +
      "its failure ends the release with the serving release still serving (docs/operations.md). Default: none.",
  ),
  releaseCommand: appCommand(
    "A command a release runs in the new release's directory after the build, before the switch " +
      "(e.g. `yarn migrate`): as the app's user, with the app's `.env` and its unit's environment, bounded by " +
      "`releaseCommandTimeoutSeconds`; its failure ends the release with the serving release still serving, and a rollback " +
      'does not undo it (docs/operations.md, "The release command"). Runs at `npm run ops -- <stack> release` only, ' +
      "not at a host's first boot. Default: none.",
  ),
  releaseCommandTimeoutSeconds: wholeNumber(
    "How long the build command and the release command may each run before the " +
      `release is ended, the serving release still serving. Default: ${RELEASE_COMMAND_TIMEOUT_SECONDS}.`,
    MIN_RELEASE_COMMAND_TIMEOUT_SECONDS,
    MAX_RELEASE_COMMAND_TIMEOUT_SECONDS,
    "seconds",
  ).optional(),
} as const;

/** Where the script's secrets come from: the user data, as the original stack, or Parameter Store (docs/secrets.md). */
export type SecretSource = (typeof SECRET_SOURCES)[number];

/** How the stack runs the app (docs/scale-out.md). */
export type Topology = (typeof TOPOLOGIES)[number];

/**
 * What the scale-out topology needs of the provisioning settings: its secrets from Parameter Store (a
 * launch template's user data is copied to every host and anyone who may describe launch templates reads
 * it), and an app user that is not one of RDS's own accounts.
 */
export function scaleOutProvisioning(
  settings: {
    topology: Topology;
    secrets: SecretSource;
    appDbUser: string;
    buildCommand?: string;
    releaseCommand?: string;
  },
  ctx: z.core.ParsePayload<unknown>,
): void {
  if (settings.topology !== "scale-out") return;
  for (const key of ["buildCommand", "releaseCommand"] as const) {
    if (settings[key] === undefined) continue;
    ctx.issues.push({
      code: "custom",
      path: [key],
      input: settings[key],
      message:
        `no ${key} with "topology": "scale-out" yet (its hosts deploy release_ref at their first boot, which does not run it; ` +
        "only a single host's npm run ops release does)",
    });
  }
  if (settings.secrets !== "parameter-store") {
    ctx.issues.push({
      code: "custom",
      path: ["secrets"],
      input: settings.secrets,
      message:
        '"parameter-store" with "topology": "scale-out" (a launch template\'s user data is copied to every host ' +
        "and readable through the EC2 API, ec2:DescribeLaunchTemplateVersions: no secret may be in it)",
    });
  }
  if ((RDS_RESERVED_USERS as readonly string[]).includes(settings.appDbUser.toLowerCase())) {
    ctx.issues.push({
      code: "custom",
      path: ["appDbUser"],
      input: settings.appDbUser,
      message: `a user other than RDS's own accounts with "topology": "scale-out" (${RDS_RESERVED_USERS.join(", ")}; ${DATABASE_MASTER_USER} is the database's master user)`,
    });
  }
}

/** Refuses a `domain` beside `redirectHttpPort: false`: the app and the HTTPS server would both bind port 80. */
export function domainBesideOwnPort80(
  settings: { redirectHttpPort: boolean; domain?: unknown },
  ctx: z.core.ParsePayload<unknown>,
): void {
  if (settings.domain !== undefined && !settings.redirectHttpPort) {
    ctx.issues.push({
      code: "custom",
      path: ["redirectHttpPort"],
      input: false,
      message: `true with a domain (the HTTPS server binds port ${HTTP_PORT} to redirect it; the app cannot bind it too)`,
    });
  }
}

/**
 * The provisioning settings as one object, every setting required: each value valid in its grammars,
 * and the paths apart from each other and from the login user's own files (pathsApart). Where they
 * may be on the instance is checked for a stack's settings (hostLayout, settings/stack-settings.ts).
 */
export const provisioningSettingsSchema = z
  .object(PROVISIONING_FIELDS)
  .check((ctx) => pathsApart(ctx.value, ctx))
  .check((ctx) => domainBesideOwnPort80(ctx.value, ctx))
  .check((ctx) => scaleOutProvisioning(ctx.value, ctx));

/** Settings of the first-boot provisioning script and its service unit (see PROVISIONING_FIELDS). */
export type ProvisioningSettings = Readonly<z.infer<typeof provisioningSettingsSchema>>;

/**
 * The secrets, each given as base64 text (in the synthesized stack: a Terraform expression
 * that evaluates to base64). The script decodes them at run time, so their content is never
 * shell or SQL source.
 */
export interface ScriptSecrets {
  readonly dbRootPasswordBase64: string;
  readonly appDbPasswordBase64: string;
  readonly sourceHostTokenBase64: string;
}

/**
 * Where the script reads the secrets in `parameter-store` mode: the names of the three SecureString
 * parameters and their region. The user data then holds no secret.
 */
export interface SecretParameterNames {
  readonly region: string;
  /** Not on the scale-out topology: its hosts read the database's master password from RDS's own secret. */
  readonly dbRootPassword?: string;
  readonly appDbPassword: string;
  readonly sourceHostToken: string;
}

/** The production values of the instance-side paths and users (docs/original-stack.md §1, §3 and §3.1). */
export const PRODUCTION_PATHS = {
  loginUser: "ec2-user",
  loginHome: "/home/ec2-user",
  swapFile: "/swapfile",
  logFile: "/var/log/crm-provisioning.log",
  metadataEndpoint: "http://169.254.169.254",
  dataMount: "/var/lib/crm-data",
  // The attachment is made only after the instance is running: the first boot may get there first.
  dataVolumeWaitSeconds: 300,
  scriptDirectory: "/usr/local/sbin",
} as const satisfies Partial<ProvisioningSettings>;

/** Defaults of the provisioning options that are not paths. */
export const PROVISIONING_DEFAULTS = {
  redirectHttpPort: true,
  secrets: "user-data",
  topology: "single-host",
  healthCheckPath: "/",
  caddyUrl: CADDY_DOWNLOAD_URL,
  caddySha512: CADDY_SHA512,
} as const satisfies Partial<ProvisioningSettings>;

/**
 * Throws a SettingsProblem naming every bad setting (as `${prefix}${field}`) and what is expected, one line each.
 */
export function validateProvisioningSettings(settings: ProvisioningSettings, prefix = ""): void {
  const result = provisioningSettingsSchema.safeParse(settings);
  if (!result.success)
    throw oneProblem(settingsProblemsFrom(result.error, settings, provisioningSettingsSchema, prefix));
}
