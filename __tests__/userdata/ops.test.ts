/**
 * userdata/ops.sh and userdata/ops.ts: the module as the user data carries it and the paths of the
 * ops command (the command itself runs in __tests__/integration/ops.test.ts and in the boot test).
 */
import { spawnSync } from "child_process";
import { readFileSync } from "fs";
import { join } from "path";
import {
  hostModules,
  HEALTH_SECONDS,
  KEEP_RELEASES,
  opsPaths,
  renderOpsTool,
  renderProvisioningScript,
  renderScriptHeader,
  USER_DATA_COPY,
  compactShell,
} from "../../userdata";
import { PRODUCTION_SETTINGS, SECRETS } from "./fixtures";
import { withModules } from "../support/harness/module-parameters";

const OPS_SH = readFileSync(join(__dirname, "../../userdata/ops.sh"), "utf8");

/** The value bash gives a variable after running the rendered header. */
function headerValue(name: string, settings = PRODUCTION_SETTINGS): string {
  const result = spawnSync("bash", ["-c", `${renderScriptHeader(settings, SECRETS)}\nprintf '%s' "$${name}"`], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout;
}

describe("opsPaths", () => {
  test("the command in scriptDirectory, the releases in the login user's home, the audit log and lock beside the provisioning log", () => {
    expect(opsPaths(PRODUCTION_SETTINGS)).toEqual({
      command: "/usr/local/sbin/crm-ops",
      releasesDirectory: "/home/ec2-user/crm-releases",
      auditLog: "/var/log/crm-ops.log",
      lockFile: "/var/log/crm-ops.lock",
      stateFile: "/var/log/crm-ops.state",
    });
    expect(opsPaths({ ...PRODUCTION_SETTINGS, appName: "sales", logFile: "/var/log/crm/provision.log" }).lockFile).toBe(
      "/var/log/crm/sales-ops.lock",
    );
  });
});

describe("the ops module", () => {
  test("defines functions only: sourcing it runs nothing, and leaving out its comment lines changes none of them", () => {
    const defined = (code: string) =>
      spawnSync("bash", ["-c", `${code}\ndeclare -F | cut -d' ' -f3; declare -f`], { encoding: "utf8" });
    const full = defined(OPS_SH);
    expect(full.stderr).toBe("");
    expect(full.stdout.split("\n")).toEqual(
      expect.arrayContaining([
        "ops_main",
        "ops_release",
        "ops_rollback",
        "ops_releases",
        "ops_status",
        "ops_patch",
        "ops_reprovision",
        "ops_lock",
        "ops_finish",
        "audit_line",
        "settle_unverified",
      ]),
    );
    expect(defined(compactShell(OPS_SH)).stdout).toBe(full.stdout);
    const body = OPS_SH.split("\n").filter(
      (line) => line !== "" && !/^\s*#/.test(line) && !/^\s/.test(line) && !/^[a-z_]+\(\) \{$|^\}$/.test(line),
    );
    expect(body).toEqual([]);
  });

  test("is in the ops tool, not the first boot's (but the lock, in its ops module), and the header gives it its paths and limits, quoted", () => {
    const firstBoot = withModules(renderProvisioningScript(PRODUCTION_SETTINGS, SECRETS));
    expect(firstBoot).not.toContain(`\nops_main() {\n`);
    expect(hostModules(PRODUCTION_SETTINGS).find((m) => m.module === "ops")?.code).toMatch(/^ops_lock\(\) \{$/m);
    expect(renderOpsTool().text).toContain(`\nops_main() {\n`);
    const settings = { ...PRODUCTION_SETTINGS, healthCheckPath: "/health?deep=1&x=%20" };
    expect(headerValue("HEALTH_PATH", settings)).toBe("/health?deep=1&x=%20");
    expect(headerValue("OPS_COMMAND")).toBe("/usr/local/sbin/crm-ops");
    expect(headerValue("RELEASES_DIR")).toBe("/home/ec2-user/crm-releases");
    expect(headerValue("OPS_LOG")).toBe("/var/log/crm-ops.log");
    expect(headerValue("OPS_LOCK")).toBe("/var/log/crm-ops.lock");
    expect(headerValue("USER_DATA_COPY")).toBe(USER_DATA_COPY);
    expect([headerValue("HEALTH_SECONDS"), headerValue("KEEP_RELEASES")]).toEqual([
      String(HEALTH_SECONDS),
      String(KEEP_RELEASES),
    ]);
  });
});
