import { dirname } from "path";
import { ProvisioningSettings } from "../settings/provisioning-settings";

/** Where the telemetry script (userdata/telemetry.sh) and its positions live on the host. */
export interface TelemetryPaths {
  /** The script the timer runs, root only: `<scriptDirectory>/<appName>-telemetry`. */
  readonly script: string;
  /** Root's directory of the logs' positions (a cursor or an offset per log), next to the provisioning log. */
  readonly stateDirectory: string;
}

/** The telemetry paths of a host with these settings. */
export function telemetryPaths(settings: ProvisioningSettings): TelemetryPaths {
  return {
    script: `${settings.scriptDirectory}/${settings.appName}-telemetry`,
    stateDirectory: `${dirname(settings.logFile)}/${settings.appName}-telemetry`,
  };
}

/** The log streams of each host in the log group, `<instance id>/<name>`: what each one holds. */
export const LOG_STREAMS = {
  app: "the app's journal (journalctl -u <app>)",
  provisioning: "the provisioning log (logFile)",
  ops: "the ops command's audit log",
} as const;
