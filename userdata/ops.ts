import { dirname } from "path";
import { ProvisioningSettings } from "../settings/provisioning-settings";

/** Where the ops command and its state live on the host (docs/operations.md). */
export interface OpsPaths {
  /** The command, root only: `<scriptDirectory>/<appName>-ops`. */
  readonly command: string;
  /** The releases, each a directory `<UTC time>-<commit>` owned by the login user; `<app_dir>` links to the current one. */
  readonly releasesDirectory: string;
  /** The audit log: one line per changing action (when, who, what, from, to, result). */
  readonly auditLog: string;
  /** The lock of every changing action and of the provisioning script (a flock held by a process whose arguments name the run); the file keeps the last holder's line. */
  readonly lockFile: string;
  /** The releases' state (root's): the known good ones, the failed ones, a switch not verified yet. */
  readonly stateFile: string;
}

/** The paths of the ops command of a host with these settings (the log and lock next to the provisioning log). */
export function opsPaths(settings: ProvisioningSettings): OpsPaths {
  const logDirectory = dirname(settings.logFile);
  return {
    command: `${settings.scriptDirectory}/${settings.appName}-ops`,
    releasesDirectory: `${settings.loginHome}/${settings.appName}-releases`,
    auditLog: `${logDirectory}/${settings.appName}-ops.log`,
    lockFile: `${logDirectory}/${settings.appName}-ops.lock`,
    stateFile: `${logDirectory}/${settings.appName}-ops.state`,
  };
}
