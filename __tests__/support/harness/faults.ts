/**
 * The faults a test arms on the provisioning harness (`h.fault = …`): the harness writes the name to its
 * fault file, which the stand-in commands (__tests__/support/stand-ins/lib.sh: fault, fail) and the
 * stand-in servers (harness/metadata-service.ts, harness/source-host.ts) read.
 */

/** What each fault breaks: the step's own failure, as a stand-in or a stand-in server produces it. */
export const FAULTS = {
  step_01_update_packages: "dnf upgrade fails",
  step_02_install_packages: "dnf install fails",
  step_03_start_database: "systemctl start mariadb fails",
  step_04_set_root_password: "SET PASSWORD fails (the one tolerated failure)",
  step_05_create_database: "CREATE DATABASE fails",
  step_06_create_app_user: "CREATE USER fails",
  step_07_configure_git: "git config fails",
  step_08_fetch_repository: "the git server answers 500",
  step_09_import_database: "the import of export.sql fails",
  step_10_read_public_hostname: "the metadata service answers 500 for the public addresses",
  step_11_write_env_file: "chown of the new .env fails",
  step_12_install_node: "the nvm download fails",
  step_13_enable_swap: "swapon fails",
  step_14_install_dependencies: "yarn install fails",
  step_15_install_service: "systemctl daemon-reload fails",
  "modules-unreachable": "Parameter Store (the aws stand-in without moto) fails to answer for the modules",
  "kill:step_08_fetch_repository": "SIGKILL while the git server sends the pack",
  "kill:step_09_import_database": "SIGKILL after half of export.sql",
  "kill:step_11_write_env_file": "SIGKILL once the temporary .env is written",
  "echo-token": "the git server refuses the clone with a message holding the token it was given",
  // The ops command's phases (app mode): what the stand-ins do to the action's unit (its process group).
  "ops:kill-build": "SIGKILL to the action while yarn builds the new release",
  "ops:slow-build": "yarn takes 30 s (its pid in <dir>/build.pid)",
  "ops:leave-child":
    "yarn leaves a process behind (a daemon of its own session, with the descriptors it inherited but stdio), whose pid is in <dir>/leftover.pid",
  "ops:fill-build": "yarn builds, then fills the file system of the login user's home",
  "ops:kill-after-app-password": "SIGKILL to the action once the app user's new password is set (ALTER USER)",
  "ops:kill-before-root-password": "SIGKILL to the action before the root password is set (SET PASSWORD FOR 'root')",
  "ops:kill-restart": "SIGKILL to the action at the app's restart, after the switch",
  "ops:kill-health": "SIGKILL to the action at its first health check of the app",
  "ops:hup-health": "SIGHUP to the action's shell at its first health check of the app",
  "ops:term-health": "SIGTERM to the action's shell at its first health check of the app",
  "ops:int-health": "SIGINT to the action's shell at its first health check of the app",
  "ops:pipe-health": "SIGPIPE to the action's shell at its first health check of the app",
} as const;
/**
 * Also `ops:kill-at:WORDS`: SIGKILL to the script instead of the runuser call (as_login, as_node) whose
 * command contains WORDS (bin/runuser.sh): a kill at that exact line.
 */
export type Fault = keyof typeof FAULTS | `ops:kill-at:${string}`;
