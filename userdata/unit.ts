import { nodeBinDir, RESTART_SEC, SERVICE_DESCRIPTION } from "./constants";
import { ProvisioningSettings } from "./settings";

/** Search path of the service after the Node.js bin directory (Amazon Linux's default for services). */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin";

/**
 * The systemd unit `<unitDirectory>/<appName>.service` (spec 3.1). Node and yarn are called by
 * absolute path, and PATH names their directory too, because yarn starts with
 * `#!/usr/bin/env node` and systemd reads no shell profile where nvm would set PATH.
 * Paths are validated settings (no spaces, quotes or %), so they need no quoting here.
 */
export function renderServiceUnit(settings: ProvisioningSettings): string {
  const bin = nodeBinDir(settings.loginHome);
  const command = `cd ${settings.appDir} && ${bin}/yarn install --ignore-engines && exec ${bin}/node server.js`;
  return [
    "[Unit]",
    `Description=${SERVICE_DESCRIPTION}`,
    "After=network.target",
    "",
    "[Service]",
    "Type=simple",
    `User=${settings.loginUser}`,
    `WorkingDirectory=${settings.appDir}`,
    "Environment=NODE_ENV=production",
    `Environment=PATH=${bin}:${SYSTEM_PATH}`,
    `ExecStart=/bin/bash -c '${command}'`,
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
