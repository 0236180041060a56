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
