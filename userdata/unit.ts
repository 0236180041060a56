import { DATABASE_SERVICE, nodeBinDir, RESTART_SEC, SERVICE_DESCRIPTION } from "./constants";
import { ProvisioningSettings } from "../settings/provisioning-settings";
import { telemetryPaths } from "./telemetry";

/** Search path of the service after the Node.js bin directory (Amazon Linux's default for services). */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin";

/**
 * The systemd unit `<HOST_FILES.unitDirectory>/<appName>.service` (docs/original-stack.md §3.1). Node and yarn are
 * called by absolute path, and PATH names their directory too, because yarn starts with
 * `#!/usr/bin/env node` and systemd reads no shell profile where nvm would set PATH.
 * Paths are validated settings (no spaces, quotes or %), so they need no quoting here.
 */
export function renderServiceUnit(settings: ProvisioningSettings): string {
  const bin = nodeBinDir(settings.loginHome);
  const command = `cd ${settings.appDir} && ${bin}/yarn install --ignore-engines && exec ${bin}/node server.js`;
  // After a reboot the app needs its database and the network, and the public addresses of this
  // boot in .env (the refresh unit): the original stack's network.target alone let it start before MariaDB.
  const needs = ["network-online.target", `${DATABASE_SERVICE}.service`, refreshUnitName(settings)].join(" ");
  return [
    "[Unit]",
    `Description=${SERVICE_DESCRIPTION}`,
    `Wants=${needs}`,
    `After=network.target ${needs}`,
    "",
    "[Service]",
    "Type=simple",
    `User=${settings.loginUser}`,
    `WorkingDirectory=${settings.appDir}`,
    "Environment=NODE_ENV=production",
    `Environment=PATH=${bin}:${SYSTEM_PATH}`,
    `ExecStart=/bin/bash -c '${command}'`,
    // Without the nftables redirect of port 80, an app that binds 80 itself needs this capability.
    ...(settings.redirectHttpPort ? [] : ["AmbientCapabilities=CAP_NET_BIND_SERVICE"]),
    "Restart=always",
    `RestartSec=${RESTART_SEC}`,
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
}

/** File name of the unit. */
export function serviceUnitName(settings: ProvisioningSettings): string {
  return `${settings.appName}.service`;
}

/** File name of the oneshot unit that refreshes the public addresses in .env at each boot. */
export function refreshUnitName(settings: ProvisioningSettings): string {
  return `${settings.appName}-public-uris.service`;
}

/** Path of the root-owned script that unit runs (written by the provisioning script). */
export function refreshScriptPath(settings: ProvisioningSettings): string {
  return `${settings.scriptDirectory}/${settings.appName}-public-uris`;
}

/**
 * The oneshot unit `<HOST_FILES.unitDirectory>/<appName>-public-uris.service`: EC2 gives an instance a new
 * public hostname at every stop and start, so before the app starts, at each boot, it rewrites
 * FRONTENDURI and BACKENDURI in .env from the metadata service (IMDSv2), keeping every other line.
 * Pulled in by the app's unit (Wants/After), so it needs no [Install] section.
 */
export function renderRefreshUnit(settings: ProvisioningSettings): string {
  return [
    "[Unit]",
    `Description=Public addresses of ${settings.appName} in .env, from the instance metadata`,
    "Wants=network-online.target",
    "After=network-online.target",
    `Before=${serviceUnitName(settings)}`,
    "",
    "[Service]",
    "Type=oneshot",
    "RemainAfterExit=yes",
    `ExecStart=${refreshScriptPath(settings)}`,
    // Bounded: the script's retries of the metadata service take at most about a minute.
    "TimeoutStartSec=180",
    "",
  ].join("\n");
}

/**
 * The oneshot unit `<appName>-telemetry.service` that runs the telemetry script (userdata/telemetry.sh) once:
 * the host's metrics, then its logs, to CloudWatch. Started by its timer only, so it has no [Install] section.
 */
export function renderTelemetryService(settings: ProvisioningSettings): string {
  return [
    "[Unit]",
    `Description=Metrics and logs of ${settings.appName} to CloudWatch`,
    "Wants=network-online.target",
    "After=network-online.target",
    "",
    "[Service]",
    "Type=oneshot",
    `ExecStart=${telemetryPaths(settings).script}`,
    // Within the minute: a longer round is stopped (SIGTERM) after its batch in flight, whose position it keeps; the next one goes on.
    "TimeoutStartSec=50",
    "",
  ].join("\n");
}

/** The timer `<appName>-telemetry.timer`: the telemetry unit at the start of every minute (the alarms' period). */
export function renderTelemetryTimer(settings: ProvisioningSettings): string {
  return [
    "[Unit]",
    `Description=Metrics and logs of ${settings.appName} every minute`,
    "",
    "[Timer]",
    "OnCalendar=minutely",
    "AccuracySec=1s",
    "",
    "[Install]",
    "WantedBy=timers.target",
    "",
  ].join("\n");
}
