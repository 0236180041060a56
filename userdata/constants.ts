/**
 * Constants of the provisioning sequence (docs/original-stack.md §3, §3.1, §8 and §9), in one place so the
 * renderer, the tests and the documentation cannot drift apart.
 */

/** Exact Node.js version the service runs (docs/original-stack.md §9). */
export const NODE_VERSION = "21.7.3";
/** Node.js major version installed by nvm and made the default (docs/original-stack.md §9). */
export const NODE_MAJOR = "21";
/** Version of the node version manager (docs/original-stack.md §9). */
export const NVM_VERSION = "v0.39.4";
/** Address of the nvm installer of {@link NVM_VERSION}. */
export const NVM_INSTALL_URL = `https://raw.githubusercontent.com/nvm-sh/nvm/${NVM_VERSION}/install.sh`;
/** Swap file size (docs/original-stack.md §8: 2 GiB), as given to fallocate, and in bytes. */
export const SWAP_SIZE = "2G";
export const SWAP_SIZE_BYTES = 2 * 1024 * 1024 * 1024;
/** Swap file mode (docs/original-stack.md §8). */
export const SWAP_FILE_MODE = "600";
/** Lifetime of the IMDSv2 session token in seconds (docs/original-stack.md §8). */
export const METADATA_TOKEN_TTL_SECONDS = 21600;
/** Delay before systemd restarts the service (docs/original-stack.md §3.1 and §8). */
export const RESTART_SEC = 10;
/** Description of the service unit (docs/original-stack.md §3.1). */
export const SERVICE_DESCRIPTION = "Node.js server of the CRM application";
/** Mode of `<app_dir>/.env`, which holds the application's database password. */
export const ENV_FILE_MODE = "600";
/** The distribution's nftables service, which loads HOST_FILES.nftablesConfig at boot. */
export const NFTABLES_SERVICE = "nftables";
/** Amazon Linux 2023 package of the MySQL-compatible server, and its systemd unit. */
export const DATABASE_PACKAGE = "mariadb105-server";
export const DATABASE_SERVICE = "mariadb";
/** System user MariaDB runs as (created by the package); owns the data directory on the data volume. */
export const DATABASE_USER = "mysql";
/** File system created on an empty data volume: XFS, as Amazon Linux uses for its root. */
export const DATA_FILE_SYSTEM = "xfs";
/** Name of the systemd drop-in that makes the database wait for its data directory's mount. */
export const DATABASE_DROP_IN = "crm-data-volume.conf";
/** Packages of step 2 (docs/original-stack.md §3) besides the "Development Tools" group. */
export const PACKAGES = ["nftables", "git", DATABASE_PACKAGE, "gcc-c++", "make"] as const;
/** Amazon Linux 2023 package of the MariaDB client alone (mariadb, mariadb-admin): the scale-out topology's hosts run no server. */
export const DATABASE_CLIENT_PACKAGE = "mariadb105";
/** Step 2's packages in the scale-out topology: the client in place of the server. */
export const CLIENT_PACKAGES = PACKAGES.map((name) => (name === DATABASE_PACKAGE ? DATABASE_CLIENT_PACKAGE : name));
/** Scale-out topology: how long step 3 waits for the database to answer, and a step for the database lock (GET_LOCK) another host holds. */
export const DATABASE_WAIT_SECONDS = 300;
export const DATABASE_LOCK_SECONDS = 900;
/**
 * Scale-out topology: how long step 4 waits for the app's account that the operator's db-setup makes (the hosts
 * hold no administrator's secret): below the health-check grace, so that a host that waited in vain is
 * replaced by the group, and its replacement finds the account.
 */
export const DATABASE_SETUP_WAIT_SECONDS = 600;
/** How often network steps (dnf, git, nvm, npm, yarn, metadata) are tried, and the pause between tries. */
export const NETWORK_ATTEMPTS = 5;
export const NETWORK_RETRY_PAUSE_SECONDS = 10;
/** The bounds of every git transfer with the source host (a clone, a pull, a token check): it fails (and is tried again,
 * NETWORK_ATTEMPTS in all) after GIT_SECONDS in all, or after GIT_STALL_SECONDS at less than 1 KiB/s. */
export const GIT_SECONDS = 600;
export const GIT_STALL_SECONDS = 60;
/** The free space a release needs on the releases' file system before its build, beyond the current release's size (MiB). */
export const FREE_MARGIN_MB = 512;
/** cloud-init's root-only copy of the instance's user data (gzip, as EC2 gives it), which the ops command reads secrets from. */
export const USER_DATA_COPY = "/var/lib/cloud/instance/user-data.txt";
/** How long a release or rollback waits for the app to answer before it switches back (seconds). */
export const HEALTH_SECONDS = 120;
/**
 * A single host's front (userdata/front.sh) during a switch: how long the requests already in the app may take to finish
 * once Caddy holds new ones (DRAIN_SECONDS); how long one hold lasts at most, which a killed action cannot stretch (the
 * nftables element expires: HOLD_SECONDS, a drain, a restart and its health check); how long Caddy holds one request
 * before it answers 502 (FRONT_WAIT_SECONDS: also what a request waits while the app is down for any other reason).
 */
export const DRAIN_SECONDS = 30;
export const HOLD_SECONDS = DRAIN_SECONDS + HEALTH_SECONDS + 10;
export const FRONT_WAIT_SECONDS = 60;
/** How many releases the ops command keeps (besides the current one, always kept). */
export const KEEP_RELEASES = 5;
/** Username put in front of the token in the clone address (accepted by GitHub and GitLab for tokens). */
export const TOKEN_USERNAME = "x-access-token";

/** The 15 steps of docs/original-stack.md §3, as the names of the script's shell functions, in that order. */
export const STEP_FUNCTIONS = [
  "step_01_update_packages",
  "step_02_install_packages",
  "step_03_start_database",
  "step_04_set_root_password",
  "step_05_create_database",
  "step_06_create_app_user",
  "step_07_configure_git",
  "step_08_fetch_repository",
  "step_09_import_database",
  "step_10_read_public_hostname",
  "step_11_write_env_file",
  "step_12_install_node",
  "step_13_enable_swap",
  "step_14_install_dependencies",
  "step_15_install_service",
] as const;

/**
 * What step 6 grants the app's database user on its database, by topology. The single host: ALL
 * PRIVILEGES, as step 6 of docs/original-stack.md §3 says. The scale-out topology's database is RDS's,
 * whose master user (who grants) lacks DELETE HISTORY, and MariaDB refuses to grant ALL PRIVILEGES from a user
 * who does not hold them all: there the list is every database-level privilege of MariaDB 10.5 but DELETE
 * HISTORY (which only removes the history rows of system-versioned tables).
 */
export const APP_DB_GRANTS = {
  "single-host": "ALL PRIVILEGES",
  "scale-out":
    "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, REFERENCES, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, " +
    "EXECUTE, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER",
} as const;
/** The host part of the app's database user, by topology: the scale-out topology's hosts come and go (the database's security group admits them only). */
export const APP_DB_USER_HOST = { "single-host": "localhost", "scale-out": "%" } as const;

/** Paths of the Node.js 21.7.3 installation under the login user's home. */
export function nodeBinDir(loginHome: string): string {
  return `${loginHome}/.nvm/versions/node/v${NODE_VERSION}/bin`;
}

/** How long the first boot waits for the metadata service to report the Elastic IP (associated once the instance runs). */
export const ELASTIC_IP_WAIT_SECONDS = 300;
