/**
 * configure_firewall's rules (step 2), run by bash with the provisioning harness's stand-ins for nft (which
 * records the ruleset) and systemctl, and one for id: the metadata service stays root's, and EC2 Instance Connect's user's where the
 * image has one (by uid: nft refuses a user name it cannot resolve); no port-80 redirect with a
 * domain. The boot test loads these rules into a real kernel (host A: the user may, the login user may not).
 */
import { spawnSync } from "child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { renderProvisioningScript, renderScriptHeader } from "../../userdata";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { relocateHostFiles } from "../support/provisioning-harness";
import { StandInCommands } from "../support/harness/stand-in-commands";
import { PRODUCTION_SETTINGS, SECRETS, shellFunction } from "./fixtures";

/**
 * Runs configure_firewall `runs` times with the provisioning harness's stand-ins (StandInCommands: nft keeps the rules it
 * is given; systemctl answers is-enabled as systemd does, enabled once enabled, or nftables `enabled` from the start) and
 * an id of its own (`ec2-instance-connect` has `uid`; undefined: no such user); resolves with the rules nft was given and
 * systemctl's calls.
 */
function configureFirewall(
  settings: ProvisioningSettings,
  options: { uid?: number; runs?: number; enabled?: boolean } = {},
): { ruleset: string; systemctl: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "crm-firewall-"));
  try {
    const commands = new StandInCommands(dir);
    commands.write({});
    if (options.enabled) writeFileSync(commands.enabledUnitsFile, "nftables\n");
    const script = renderProvisioningScript(settings, SECRETS);
    const { uid } = options;
    writeFileSync(
      join(commands.binDir, "id"),
      `#!/bin/bash\n${
        uid === undefined
          ? "echo \"id: '$2': no such user\" >&2; exit 1"
          : `[[ $* == "-u ec2-instance-connect" ]] && echo ${uid} && exit 0; exit 1`
      }\n`,
      { mode: 0o755 },
    );
    const program = [
      relocateHostFiles(renderScriptHeader(settings, SECRETS), dir),
      "log() { :; }",
      "TEMP_FILES=() MAIN_SUBSHELL=0 CURRENT_STEP=test",
      ...["die", "install_file", "metadata_address", "enable_unit", "nft_block", "configure_firewall"].map((name) =>
        shellFunction(script, name),
      ),
      ...Array(options.runs ?? 1).fill("configure_firewall"),
    ].join("\n");
    const result = spawnSync("bash", ["-c", program], {
      encoding: "utf8",
      env: { ...process.env, PATH: `${commands.binDir}:${process.env.PATH}` },
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const systemctl = commands
      .calls()
      .filter((call) => call.startsWith("systemctl "))
      .map((call) => call.slice("systemctl ".length));
    return { ruleset: readFileSync(commands.nftRulesFile, "utf8"), systemctl };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ruleset configure_firewall gives nft, where `ec2-instance-connect` has `uid` (undefined: no such user). */
const ruleset = (settings: ProvisioningSettings, uid?: number) => configureFirewall(settings, { uid }).ruleset;

describe("nft_block", () => {
  test("enables the nftables service once, without reloading systemd: nor does a rerun, or an action's front_firewall", () => {
    expect(configureFirewall(PRODUCTION_SETTINGS, { runs: 2 }).systemctl).toEqual([
      "is-enabled --quiet nftables",
      "enable --no-reload nftables",
      "is-enabled --quiet nftables",
    ]);
    expect(configureFirewall(PRODUCTION_SETTINGS, { enabled: true }).systemctl).toEqual([
      "is-enabled --quiet nftables",
    ]);
  });
});

describe("configure_firewall", () => {
  test("lets root and EC2 Instance Connect's user reach the metadata service, by uid, and nothing else that is not root", () => {
    expect(ruleset(PRODUCTION_SETTINGS, 996)).toContain(
      'ip daddr 169.254.169.254 meta skuid != { 0, 996 } counter reject comment "metadata service: root and ec2-instance-connect only"',
    );
  });

  test("keeps it to root on an image without that user", () => {
    expect(ruleset(PRODUCTION_SETTINGS)).toContain("ip daddr 169.254.169.254 meta skuid != 0 counter reject");
  });

  test("redirects port 80 to the app without a domain, and not with one (Caddy serves 80 and 443)", () => {
    expect(ruleset(PRODUCTION_SETTINGS)).toContain("tcp dport 80 counter redirect to :3000");
    const domain = parseStackSettings({
      ...exampleSettings,
      domain: { hostedZone: "example.com", name: "crm.example.com" },
    }).provisioning;
    const rules = ruleset(domain, 996);
    expect(rules).not.toContain("redirect");
    expect(rules).toContain("meta skuid != { 0, 996 }");
  });
});
