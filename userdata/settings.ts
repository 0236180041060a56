import { z } from "zod";
import { settingsErrorFrom } from "../settings/errors";
import { absolutePath, flag, matching, printable } from "../settings/rules";

/**
 * Settings of the first-boot provisioning script (spec section 3) and its service unit (3.1),
 * one schema per setting. The script quotes every setting, but unit names, SQL identifiers and
 * paths are also written into SQL and the systemd unit, where only these shapes are safe.
 * Everything here is public: the three secrets never pass through these settings (see ScriptSecrets).
 */
export const PROVISIONING_FIELDS = {
  appName: matching("`<app>`: name of the systemd unit, written as `<unitDirectory>/<app>.service`.",
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
    "a systemd unit name of 1 to 64 letters, digits, _ . or -, starting with a letter or digit"),
  appDir: absolutePath("`<app_dir>`: absolute path of the checkout, inside the login user's home."),
  repoUrl: matching("`<repo_url>`: https address of the private repository, without credentials.",
    /^https:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~+-]+)+\/?$/,
    "an https address of the repository without credentials, such as https://github.com/org/app.git"),
  databaseName: matching("`<database_name>`: database created for the application.",
    /^[A-Za-z0-9_]{1,64}$/, "a MariaDB database name of 1 to 64 letters, digits or _"),
  appDbUser: matching("`<app_db_user>`: database account, created as `<app_db_user>`@localhost.",
    /^[A-Za-z0-9_]{1,32}$/, "a MariaDB user name of 1 to 32 letters, digits or _"),
  gitUser: printable("`<git_user>`: global git user.name of the login user.", 100),
  gitEmail: matching("`<EMAIL>`: global git user.email of the login user.",
    /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$/,
    "an e-mail address such as deploy@example.com"),
  loginUser: matching("Default login user of the image, who owns the checkout and runs the service. Spec: `ec2-user`.",
    /^[a-z_][a-z0-9_-]{0,31}$/,
    "a Linux user name of 1 to 32 lower-case letters, digits, _ or -, starting with a letter or _"),
  loginHome: absolutePath("Home directory of the login user. Spec: `/home/ec2-user`."),
  unitDirectory: absolutePath("Directory the unit file is written to. Spec: `/etc/systemd/system`."),
  swapFile: absolutePath("Swap file path. Spec: `/swapfile`."),
  logFile: absolutePath("File the script's output is appended to (besides cloud-init's own log)."),
  metadataEndpoint: matching("Base address of the instance metadata service (IMDSv2). Spec: `http://169.254.169.254`.",
    /^https?:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(\/[A-Za-z0-9._~-]+)*$/,
    "an http(s) base address without credentials or trailing slash, such as http://169.254.169.254"),
  nftablesConfig: absolutePath("The file the distribution's nftables service loads at boot, where the script keeps its "
    + "block of rules (port-80 redirect, metadata lock-down). Amazon Linux 2023: `/etc/sysconfig/nftables.conf`; Debian: `/etc/nftables.conf`."),
  fstab: absolutePath("The file system table the swap file is added to. `/etc/fstab`."),
  scriptDirectory: absolutePath("Directory of root's helper script that refreshes the public addresses in .env at each boot. `/usr/local/sbin`."),
  redirectHttpPort: flag("Redirect tcp/80 to the app's port 3000 with nftables (the app runs as the login user, who cannot "
    + "bind 80). `false` for an app that binds 80 itself: its unit then gets `AmbientCapabilities=CAP_NET_BIND_SERVICE`."),
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

/** The provisioning settings as one object, every setting required. */
export const provisioningSettingsSchema = z.object(PROVISIONING_FIELDS)
  .check((ctx) => appDirInsideHome(ctx.value, ctx));

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
 */
export function validateProvisioningSettings(settings: ProvisioningSettings, prefix = ""): void {
  const result = provisioningSettingsSchema.safeParse(settings);
  if (!result.success) throw settingsErrorFrom(result.error, settings, provisioningSettingsSchema, prefix);
}
