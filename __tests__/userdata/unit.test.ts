import { spawnSync } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir, userInfo } from "os";
import { join } from "path";
import {
  NODE_VERSION,
  refreshUnitName,
  renderRefreshUnit,
  renderServiceUnit,
  renderTelemetryService,
  renderTelemetryTimer,
  RESTART_SEC,
  serviceUnitName,
  telemetryPaths,
} from "../../userdata";
import { haveTool, PRODUCTION_SETTINGS } from "./fixtures";

const unit = renderServiceUnit(PRODUCTION_SETTINGS);
const lines = unit.split("\n");

describe("renderServiceUnit (docs/original-stack.md §3.1)", () => {
  test("has the original stack's settings in their sections", () => {
    expect(unit).toBe(
      [
        "[Unit]",
        "Description=Node.js server of the CRM application",
        "Wants=network-online.target mariadb.service crm-public-uris.service",
        "After=network.target network-online.target mariadb.service crm-public-uris.service",
        "",
        "[Service]",
        "Type=simple",
        "User=ec2-user",
        "WorkingDirectory=/home/ec2-user/crm-app",
        "Environment=NODE_ENV=production",
        "Environment=PATH=/home/ec2-user/.nvm/versions/node/v21.7.3/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
        "ExecStart=/bin/bash -c 'cd /home/ec2-user/crm-app && /home/ec2-user/.nvm/versions/node/v21.7.3/bin/yarn install --ignore-engines && exec /home/ec2-user/.nvm/versions/node/v21.7.3/bin/node server.js'",
        "Restart=always",
        "RestartSec=10",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
      ].join("\n"),
    );
    expect(RESTART_SEC).toBe(10);
    expect(NODE_VERSION).toBe("21.7.3");
    expect(serviceUnitName(PRODUCTION_SETTINGS)).toBe("crm.service");
  });

  test("follows the settings", () => {
    const other = renderServiceUnit({
      ...PRODUCTION_SETTINGS,
      loginUser: "app",
      loginHome: "/srv/app",
      appDir: "/srv/app/crm",
    });
    expect(other).toContain("\nUser=app\n");
    expect(other).toContain("\nWorkingDirectory=/srv/app/crm\n");
    expect(other).toContain(
      "ExecStart=/bin/bash -c 'cd /srv/app/crm && /srv/app/.nvm/versions/node/v21.7.3/bin/yarn install",
    );
    expect(other).toContain("Environment=PATH=/srv/app/.nvm/versions/node/v21.7.3/bin:");
  });

  test("grants the capability to bind port 80 only when nftables does not redirect it", () => {
    expect(unit).not.toContain("AmbientCapabilities");
    const binds80 = renderServiceUnit({ ...PRODUCTION_SETTINGS, redirectHttpPort: false });
    expect(binds80).toContain("\nAmbientCapabilities=CAP_NET_BIND_SERVICE\n");
  });

  test("lets yarn's `#!/usr/bin/env node` find node 21.7.3 under systemd", () => {
    const path = lines.find((line) => line.startsWith("Environment=PATH="))!.slice("Environment=PATH=".length);
    expect(path.split(":")[0]).toBe(`/home/ec2-user/.nvm/versions/node/v${NODE_VERSION}/bin`);
  });

  const verify = haveTool("systemd-analyze") ? test : test.skip;
  verify("passes systemd-analyze verify, for production and for a local user and existing paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-unit-"));
    try {
      const local = {
        ...PRODUCTION_SETTINGS,
        appName: "crm-local",
        loginUser: userInfo().username,
        loginHome: dir,
        appDir: dir,
      };
      for (const settings of [PRODUCTION_SETTINGS, local]) {
        const file = join(dir, serviceUnitName(settings));
        writeFileSync(file, renderServiceUnit(settings));
        writeFileSync(join(dir, refreshUnitName(settings)), renderRefreshUnit(settings));
        const result = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
        // verify exits 0 on settings it ignores, so any diagnostic at all counts as a failure.
        expect(result.stderr + result.stdout).toBe("");
        expect(result.status).toBe(0);
      }
      // The check is real: a bad value is reported.
      const broken = join(dir, "broken.service");
      writeFileSync(broken, renderServiceUnit(PRODUCTION_SETTINGS).replace("RestartSec=10", "RestartSec=ten"));
      expect(spawnSync("systemd-analyze", ["verify", broken], { encoding: "utf8" }).stderr).toContain(
        "Failed to parse sec value",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("renderRefreshUnit", () => {
  test("runs the refresh script once per boot, before the app", () => {
    expect(renderRefreshUnit(PRODUCTION_SETTINGS)).toBe(
      [
        "[Unit]",
        "Description=Public addresses of crm in .env, from the instance metadata",
        "Wants=network-online.target",
        "After=network-online.target",
        "Before=crm.service",
        "",
        "[Service]",
        "Type=oneshot",
        "RemainAfterExit=yes",
        "ExecStart=/usr/local/sbin/crm-public-uris",
        "TimeoutStartSec=180",
        "",
      ].join("\n"),
    );
  });
});

describe("the telemetry units (userdata/telemetry.sh)", () => {
  test("a oneshot service runs the telemetry script, within the minute; its timer starts it every minute", () => {
    expect(telemetryPaths(PRODUCTION_SETTINGS)).toEqual({
      script: "/usr/local/sbin/crm-telemetry",
      stateDirectory: "/var/log/crm-telemetry",
    });
    expect(renderTelemetryService(PRODUCTION_SETTINGS)).toBe(
      [
        "[Unit]",
        "Description=Metrics and logs of crm to CloudWatch",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=oneshot",
        "ExecStart=/usr/local/sbin/crm-telemetry",
        "TimeoutStartSec=50",
        "",
      ].join("\n"),
    );
    expect(renderTelemetryTimer(PRODUCTION_SETTINGS)).toBe(
      [
        "[Unit]",
        "Description=Metrics and logs of crm every minute",
        "",
        "[Timer]",
        "OnCalendar=minutely",
        "AccuracySec=1s",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
      ].join("\n"),
    );
  });

  const verify = haveTool("systemd-analyze") ? test : test.skip;
  verify("pass systemd-analyze verify", () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-unit-"));
    try {
      const settings = { ...PRODUCTION_SETTINGS, scriptDirectory: dir };
      const script = telemetryPaths(settings).script;
      writeFileSync(script, "#!/bin/bash\n", { mode: 0o700 });
      writeFileSync(join(dir, "crm-telemetry.service"), renderTelemetryService(settings));
      writeFileSync(join(dir, "crm-telemetry.timer"), renderTelemetryTimer(settings));
      for (const file of ["crm-telemetry.service", "crm-telemetry.timer"]) {
        const result = spawnSync("systemd-analyze", ["verify", join(dir, file)], { encoding: "utf8" });
        expect(result.stderr + result.stdout).toBe("");
        expect(result.status).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
