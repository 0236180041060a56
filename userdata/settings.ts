import { requireAbsolutePath, requireMatch, requirePrintable, SettingsError } from "../settings/errors";

/**
 * Settings of the first-boot provisioning script (spec section 3) and its service unit (3.1).
 * Everything here is public: the three secrets never pass through these settings (see ScriptSecrets).
 */
export interface ProvisioningSettings {
  /** `<app>`: name of the systemd unit, written as `<unitDirectory>/<app>.service`. */
  readonly appName: string;
  /** `<app_dir>`: absolute path of the checkout, inside the login user's home. */
  readonly appDir: string;
  /** `<repo_url>`: https address of the private repository, without credentials. */
  readonly repoUrl: string;
  /** `<database_name>`: database created for the application. */
  readonly databaseName: string;
  /** `<app_db_user>`: database account, created as `<app_db_user>`@localhost. */
  readonly appDbUser: string;
  /** `<git_user>`: global git user.name of the login user. */
  readonly gitUser: string;
  /** `<EMAIL>`: global git user.email of the login user. */
  readonly gitEmail: string;
  /** Default login user of the image, who owns the checkout and runs the service. Spec: `ec2-user`. */
  readonly loginUser: string;
  /** Home directory of the login user. Spec: `/home/ec2-user`. */
  readonly loginHome: string;
  /** Directory the unit file is written to. Spec: `/etc/systemd/system`. */
  readonly unitDirectory: string;
  /** Swap file path. Spec: `/swapfile`. */
  readonly swapFile: string;
  /** File the script's output is appended to (besides cloud-init's own log). */
  readonly logFile: string;
  /** Base address of the instance metadata service (IMDSv2). Spec: `http://169.254.169.254`. */
  readonly metadataEndpoint: string;
  /**
   * The file the distribution's nftables service loads at boot; the script keeps its own block of
   * rules in it (the port-80 redirect, the metadata lock-down). Amazon Linux 2023:
   * `/etc/sysconfig/nftables.conf`; Debian: `/etc/nftables.conf`.
   */
  readonly nftablesConfig: string;
  /** The file system table the swap file is added to. `/etc/fstab`. */
  readonly fstab: string;
  /** Directory of root's helper scripts (the boot-time refresh of the public addresses). `/usr/local/sbin`. */
  readonly scriptDirectory: string;
  /**
   * Redirect tcp/80 to the app's port 3000 with nftables (the unit runs `server.js` as the login
   * user, who cannot bind ports below 1024). `false` for an app that binds 80 itself: the unit then
   * grants it `AmbientCapabilities=CAP_NET_BIND_SERVICE` instead. Default: true.
   */
  readonly redirectHttpPort: boolean;
}

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
  nftablesConfig: "/etc/sysconfig/nftables.conf",
  fstab: "/etc/fstab",
  scriptDirectory: "/usr/local/sbin",
} as const satisfies Partial<ProvisioningSettings>;

/** Defaults of the provisioning options that are not paths. */
export const PROVISIONING_DEFAULTS = {
  redirectHttpPort: true,
} as const satisfies Partial<ProvisioningSettings>;

/**
 * Throws a SettingsError naming the first bad setting (as `${prefix}${field}`) and what is expected.
 * The script relies on these rules: it quotes every setting, but unit names, SQL identifiers and
 * paths are also written into SQL and the systemd unit, where only these shapes are safe.
 */
export function validateProvisioningSettings(settings: ProvisioningSettings, prefix = ""): void {
  const name = (field: keyof ProvisioningSettings) => `${prefix}${field}`;
  const s = settings as unknown as Record<keyof ProvisioningSettings, unknown>;

  requireMatch(name("appName"), s.appName, /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
    "a systemd unit name of 1 to 64 letters, digits, _ . or -, starting with a letter or digit");
  requireMatch(name("loginUser"), s.loginUser, /^[a-z_][a-z0-9_-]{0,31}$/,
    "a Linux user name of 1 to 32 lower-case letters, digits, _ or -, starting with a letter or _");
  const loginHome = requireAbsolutePath(name("loginHome"), s.loginHome);
  const appDir = requireAbsolutePath(name("appDir"), s.appDir);
  if (!appDir.startsWith(`${loginHome}/`)) {
    throw new SettingsError(name("appDir"), `a directory inside the login user's home ${loginHome}`, appDir);
  }
  requireMatch(name("repoUrl"), s.repoUrl,
    /^https:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~+-]+)+\/?$/,
    "an https address of the repository without credentials, such as https://github.com/org/app.git");
  requireMatch(name("databaseName"), s.databaseName, /^[A-Za-z0-9_]{1,64}$/,
    "a MariaDB database name of 1 to 64 letters, digits or _");
  requireMatch(name("appDbUser"), s.appDbUser, /^[A-Za-z0-9_]{1,32}$/,
    "a MariaDB user name of 1 to 32 letters, digits or _");
  requirePrintable(name("gitUser"), s.gitUser, 100);
  requireMatch(name("gitEmail"), s.gitEmail,
    /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$/,
    "an e-mail address such as deploy@example.com");
  requireAbsolutePath(name("unitDirectory"), s.unitDirectory);
  requireAbsolutePath(name("swapFile"), s.swapFile);
  requireAbsolutePath(name("logFile"), s.logFile);
  requireAbsolutePath(name("nftablesConfig"), s.nftablesConfig);
  requireAbsolutePath(name("fstab"), s.fstab);
  requireAbsolutePath(name("scriptDirectory"), s.scriptDirectory);
  if (typeof s.redirectHttpPort !== "boolean") {
    throw new SettingsError(name("redirectHttpPort"), "true or false", s.redirectHttpPort);
  }
  requireMatch(name("metadataEndpoint"), s.metadataEndpoint,
    /^https?:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~-]+)*$/,
    "an http(s) base address without credentials or trailing slash, such as http://169.254.169.254");
}
