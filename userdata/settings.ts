import { z } from "zod";
import { settingsErrorFrom } from "../settings/errors";
import { absolutePath, flag, matching, printable, text, wholeNumber } from "../settings/rules";

/** MariaDB's own schemas: the app user gets ALL PRIVILEGES on its database (on `mysql`, it could read root's hash). */
export const RESERVED_DATABASE_NAMES = ["mysql", "information_schema", "performance_schema", "sys"] as const;
/** Accounts MariaDB creates or reserves (`mariadb.sys` cannot pass the user-name pattern anyway). */
export const RESERVED_DATABASE_USERS = ["root", "mysql", "mariadb.sys", "public"] as const;
/**
 * Service units of Amazon Linux 2023 (and of systemd) that `<app>.service` must not shadow, and
 * prefixes of families of them.
 */
export const RESERVED_UNIT_NAMES = [
  "mariadb", "mysqld", "mysql", "sshd", "ssh", "nftables", "iptables", "firewalld", "cloud-init", "cloud-config",
  "cloud-final", "cloud-init-local", "dbus", "dbus-broker", "chronyd", "crond", "atd", "rsyslog", "auditd", "sssd",
  "polkit", "gssproxy", "irqbalance", "rngd", "acpid", "amazon-ssm-agent", "amazon-ec2-net-utils", "ec2-instance-connect",
  "NetworkManager", "network", "getty", "serial-getty", "user", "emergency", "rescue", "kmod-static-nodes", "dnf-makecache",
  "nvm", "node", "yarn",
] as const;
export const RESERVED_UNIT_PREFIXES = ["systemd-", "cloud-", "dbus-", "getty", "user-", "mariadb", "mysql"] as const;
/** Where a swap file cannot live: pseudo, memory and boot file systems, configuration, homes, MariaDB's data. */
export const SWAP_FILE_FORBIDDEN_DIRECTORIES = ["/proc", "/sys", "/dev", "/run", "/tmp", "/boot", "/etc", "/home", "/var/lib/mysql", "/var/lib/crm-data"] as const;
/** Top-level system directories, which a swap file path must not name itself. */
const SYSTEM_DIRECTORIES = ["/bin", "/sbin", "/lib", "/lib64", "/usr", "/var", "/opt", "/srv", "/mnt", "/media", "/root", "/snap"];

const inList = (list: readonly string[]) => (value: string) => !list.includes(value.toLowerCase());

function swapFileAllowed(path: string): boolean {
  const inside = (dir: string) => path === dir || path.startsWith(`${dir}/`);
  return !SWAP_FILE_FORBIDDEN_DIRECTORIES.some(inside) && !SYSTEM_DIRECTORIES.includes(path);
}

/**
 * Settings of the first-boot provisioning script (spec section 3) and its service unit (3.1),
 * one schema per setting. The script quotes every setting, but unit names, SQL identifiers and
 * paths are also written into SQL and the systemd unit, where only these shapes are safe.
 * Everything here is public: the three secrets never pass through these settings (see ScriptSecrets).
 */
const APP_NAME_EXPECTED = "a systemd unit name of 1 to 64 letters, digits, _ . or -, starting with a letter or digit, " +
  "that is not a unit of the distribution (such as mariadb, sshd, nftables, cloud-init, systemd-…)";
const DATABASE_NAME_EXPECTED = "a MariaDB database name of 1 to 64 letters, digits or _, not one of MariaDB's own schemas " +
  `(${RESERVED_DATABASE_NAMES.join(", ")})`;
const DATABASE_USER_EXPECTED = "a MariaDB user name of 1 to 32 letters, digits or _, not an account MariaDB creates or " +
  `reserves (${RESERVED_DATABASE_USERS.join(", ")})`;
const SWAP_FILE_EXPECTED = "an absolute path such as /swapfile (letters, digits, / . _ - only; no .. or //), " +
  `not inside ${SWAP_FILE_FORBIDDEN_DIRECTORIES.join(", ")} and not a system directory itself`;

export const PROVISIONING_FIELDS = {
  appName: text("`<app>`: name of the systemd unit, written as `<unitDirectory>/<app>.service`; not a unit of the " +
    "distribution, which it would shadow (RESERVED_UNIT_NAMES and RESERVED_UNIT_PREFIXES in userdata/settings.ts).",
  APP_NAME_EXPECTED,
  (schema) => schema.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, { error: APP_NAME_EXPECTED })
    .refine((name) => inList(RESERVED_UNIT_NAMES.map((unit) => unit.toLowerCase()))(name) &&
      !RESERVED_UNIT_PREFIXES.some((prefix) => name.toLowerCase().startsWith(prefix)), { error: APP_NAME_EXPECTED })),
  appDir: absolutePath("`<app_dir>`: absolute path of the checkout, inside the login user's home."),
  repoUrl: matching("`<repo_url>`: https address of the private repository, without credentials.",
    /^https:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~+-]+)+\/?$/,
    "an https address of the repository without credentials, such as https://github.com/org/app.git"),
  databaseName: text("`<database_name>`: database created for the application; not one of MariaDB's own schemas " +
    `(${RESERVED_DATABASE_NAMES.join(", ")}).`, DATABASE_NAME_EXPECTED,
  (schema) => schema.regex(/^[A-Za-z0-9_]{1,64}$/, { error: DATABASE_NAME_EXPECTED })
    .refine(inList(RESERVED_DATABASE_NAMES), { error: DATABASE_NAME_EXPECTED })),
  appDbUser: text("`<app_db_user>`: database account, created as `<app_db_user>`@localhost; not an account MariaDB " +
    `creates or reserves (${RESERVED_DATABASE_USERS.join(", ")}).`, DATABASE_USER_EXPECTED,
  (schema) => schema.regex(/^[A-Za-z0-9_]{1,32}$/, { error: DATABASE_USER_EXPECTED })
    .refine(inList(RESERVED_DATABASE_USERS), { error: DATABASE_USER_EXPECTED })),
  gitUser: printable("`<git_user>`: global git user.name of the login user.", 100),
  gitEmail: matching("`<EMAIL>`: global git user.email of the login user.",
    /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$/,
    "an e-mail address such as deploy@example.com"),
  loginUser: matching("Default login user of the image, who owns the checkout and runs the service. Spec: `ec2-user`.",
    /^[a-z_][a-z0-9_-]{0,31}$/,
    "a Linux user name of 1 to 32 lower-case letters, digits, _ or -, starting with a letter or _"),
  loginHome: absolutePath("Home directory of the login user. Spec: `/home/ec2-user`."),
  unitDirectory: absolutePath("Directory the unit file is written to. Spec: `/etc/systemd/system`."),
  swapFile: absolutePath("Swap file path. Spec: `/swapfile`. Not inside " +
    `${SWAP_FILE_FORBIDDEN_DIRECTORIES.join(", ")} (no swap file can live there, or it would sit among configuration, ` +
    "homes or data) nor a system directory itself.", SWAP_FILE_EXPECTED, (schema) => schema.refine(swapFileAllowed, { error: SWAP_FILE_EXPECTED })),
  logFile: absolutePath("File the script's output is appended to (besides cloud-init's own log)."),
  metadataEndpoint: matching("Base address of the instance metadata service (IMDSv2). Spec: `http://169.254.169.254`.",
    /^https?:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~-]+)*$/,
    "an http(s) base address without credentials or trailing slash, such as http://169.254.169.254"),
  deviceDirectory: absolutePath("Where the data volume's device appears: `<deviceDirectory>/disk/by-id/nvme-Amazon_Elastic_Block_Store_vol…` (Nitro), else `<deviceDirectory>/sdf` or `xvdf`. Production: `/dev`."),
  dataMount: absolutePath("Mount point of the data volume; MariaDB's data lives in its `mysql` directory. Production: `/var/lib/crm-data`."),
  databaseDir: absolutePath("MariaDB's data directory, bind-mounted from `<dataMount>/mysql`. Production: `/var/lib/mysql`."),
  fstabFile: absolutePath("The file system table the mounts are written to. Production: `/etc/fstab`."),
  dataVolumeWaitSeconds: wholeNumber("How long the first boot waits for the data volume's device. Production: 300.", 1, 3600, "seconds"),
  nftablesConfig: absolutePath("The file the distribution's nftables service loads at boot, where the script keeps its "
    + "block of rules (port-80 redirect, metadata lock-down). Amazon Linux 2023: `/etc/sysconfig/nftables.conf`; Debian: `/etc/nftables.conf`."),
  scriptDirectory: absolutePath("Directory of root's helper scripts: the one that refreshes the public addresses in .env at each boot, "
    + "and the ops command `<app>-ops` (releases, rollback, patch, reprovision). `/usr/local/sbin`."),
  redirectHttpPort: flag("Redirect tcp/80 to the app's port 3000 with nftables (the app runs as the login user, who cannot "
    + "bind 80). `false` for an app that binds 80 itself: its unit then gets `AmbientCapabilities=CAP_NET_BIND_SERVICE`."),
  healthCheckPath: matching("Path a release or rollback of the ops command (`<app>-ops`) asks on port 3000: the new release is kept "
    + "when it answers with an HTTP status below 500 (docs/operations.md).", /^\/[A-Za-z0-9._~%/-]{0,200}(\?[A-Za-z0-9._~%=&-]{0,200})?$/,
  "a path starting with / such as / or /health?full=1 (letters, digits and . _ ~ % / - only, then an optional ?query)"),
} as const;

/** Refuses an `appDir` outside `loginHome` (the checkout belongs to the login user). */
export function appDirInsideHome(settings: { appDir: string; loginHome: string }, ctx: z.core.ParsePayload<unknown>): void {
  if (!settings.appDir.startsWith(`${settings.loginHome}/`)) {
    ctx.issues.push({
      code: "custom", path: ["appDir"], input: settings.appDir,
      message: `a directory inside the login user's home ${settings.loginHome}`,
    });
  }
}

/** Refuses a `databaseDir` inside, equal to or around `dataMount` (one is bind-mounted from the other's subdirectory). */
export function databaseDirApartFromDataMount(settings: { dataMount: string; databaseDir: string }, ctx: z.core.ParsePayload<unknown>): void {
  const { dataMount, databaseDir } = settings;
  if (databaseDir === dataMount || databaseDir.startsWith(`${dataMount}/`) || dataMount.startsWith(`${databaseDir}/`)) {
    ctx.issues.push({
      code: "custom", path: ["databaseDir"], input: databaseDir,
      message: `a directory neither inside nor around dataMount ${dataMount}`,
    });
  }
}

/** The provisioning settings as one object, every setting required. */
export const provisioningSettingsSchema = z.object(PROVISIONING_FIELDS)
  .check((ctx) => appDirInsideHome(ctx.value, ctx))
  .check((ctx) => databaseDirApartFromDataMount(ctx.value, ctx));

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

/** The production values of the instance-side paths and users (spec sections 1, 3 and 3.1). */
export const PRODUCTION_PATHS = {
  loginUser: "ec2-user",
  loginHome: "/home/ec2-user",
  unitDirectory: "/etc/systemd/system",
  swapFile: "/swapfile",
  logFile: "/var/log/crm-provisioning.log",
  metadataEndpoint: "http://169.254.169.254",
  deviceDirectory: "/dev",
  dataMount: "/var/lib/crm-data",
  databaseDir: "/var/lib/mysql",
  fstabFile: "/etc/fstab",
  // The attachment is made only after the instance is running: the first boot may get there first.
  dataVolumeWaitSeconds: 300,
  nftablesConfig: "/etc/sysconfig/nftables.conf",
  scriptDirectory: "/usr/local/sbin",
} as const satisfies Partial<ProvisioningSettings>;

/** Defaults of the provisioning options that are not paths. */
export const PROVISIONING_DEFAULTS = {
  redirectHttpPort: true,
  healthCheckPath: "/",
} as const satisfies Partial<ProvisioningSettings>;

/**
 * Throws a SettingsError naming the first bad setting (as `${prefix}${field}`) and what is expected.
 */
export function validateProvisioningSettings(settings: ProvisioningSettings, prefix = ""): void {
  const result = provisioningSettingsSchema.safeParse(settings);
  if (!result.success) throw settingsErrorFrom(result.error, settings, provisioningSettingsSchema, prefix);
}
