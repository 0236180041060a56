/**
 * userdata/front.sh, the front of every single host (Caddy in front of the app, and its HTTPS server with a domain): in
 * the ops tool of every host, in the user data only with a domain; its header values, and its functions run for real (bash, curl on file:// addresses,
 * sha512sum, tar, Debian's caddy to read the Caddyfile it writes, systemd-analyze for its unit). The whole path on a
 * booted host, requests held through releases and a certificate from an ACME CA, is the boot test's.
 */
import { spawnSync } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { hostModules, renderProvisioningScript, renderScriptHeader, scriptModules, shellQuote } from "../../userdata";
import { renderFrontConstants } from "../../userdata/script";
import { HOST_FILES } from "../../settings/host-layout";
import { haveTool, PRODUCTION_SETTINGS, SECRETS, shellFunction } from "./fixtures";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import { hostFilesUnder, relocateHostFiles } from "../support/provisioning-harness";
import { StandInCommands } from "../support/harness/stand-in-commands";
import { withModules } from "../support/harness/module-parameters";

const DOMAIN_SETTINGS = parseStackSettings({
  ...exampleSettings,
  domain: { hostedZone: "example.com", name: "crm.example.com" },
}).provisioning;
const script = renderProvisioningScript(DOMAIN_SETTINGS, SECRETS, "vol-0123456789abcdef0", "203.0.113.25");
/** The modules' functions as Parameter Store holds them for the domain's first boot (hostModules). */
const moduleCode = hostModules(DOMAIN_SETTINGS)
  .map((m) => m.code)
  .join("");

describe("the front module in the user data", () => {
  test("is a module of the first boot only with a domain (else the ops tool brings it), in Parameter Store, and main runs it after step 15", () => {
    expect(scriptModules(DOMAIN_SETTINGS)).toEqual(["ops", "telemetry", "front", "local-database"]);
    expect(scriptModules(PRODUCTION_SETTINGS)).toEqual(["ops", "telemetry", "local-database"]);
    expect(hostModules(PRODUCTION_SETTINGS).map((m) => m.module)).not.toContain("front");
    expect(hostModules(DOMAIN_SETTINGS).map((m) => m.module)).toContain("front");
    // The first boot needs no front's firewall: the ops tool sets it before its first action (ensure_front).
    expect(moduleCode).not.toContain("front_firewall() {");
    expect(moduleCode).toContain("\ninstall_caddy() {\n");
    expect(script).not.toContain("install_front() {");
    expect(script).toMatch(/^readonly MODULES=\(.*'front:[0-9a-f]{64}'/m);
    const main = shellFunction(script, "main");
    expect(main.indexOf("run_step install_front")).toBeGreaterThan(main.indexOf("run_step step_15_install_service"));
  });

  test("sets the domain's values in the header, turns the port-80 redirect off and puts the URIs on the name", () => {
    const header = renderScriptHeader(DOMAIN_SETTINGS, SECRETS);
    const value = (expression: string) => {
      const result = spawnSync("bash", ["-c", `${header}\nprintf '%s' "\${${expression}}"`], { encoding: "utf8" });
      expect(result.stderr).toBe("");
      return result.stdout;
    };
    expect(value("DOMAIN_NAME")).toBe("crm.example.com");
    expect(value("ACME_DIRECTORY")).toBe("https://acme-v02.api.letsencrypt.org/directory");
    expect(value("CADDY_URL")).toBe(DOMAIN_SETTINGS.caddyUrl);
    expect(value("CADDY_SHA512")).toBe(DOMAIN_SETTINGS.caddySha512);
    expect(value("CADDY_BINARY")).toBe(HOST_FILES.caddyBinary);
    expect(value("FRONT")).toBe("true");
    expect(value("REDIRECT_HTTP_PORT")).toBe("false");
    expect([value("FRONTEND_URI"), value("BACKEND_URI")]).toEqual([
      "https://crm.example.com",
      "http://crm.example.com:3000",
    ]);
  });

  const shellcheck = haveTool("shellcheck") ? test : test.skip;
  shellcheck("passes shellcheck with the module", () => {
    const result = spawnSync("shellcheck", ["-s", "bash", "-"], { input: withModules(script), encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});

/**
 * A private directory for the module to install into (tmp, install, etc, units), with the provisioning harness's
 * stand-ins (standIns: no user caddy yet) and their Caddy release (a tarball as a release's) and its SHA-512.
 */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), "crm-https-"));
  for (const sub of ["tmp", "install", "etc", "units"]) mkdirSync(join(dir, sub));
  const { bin, commands } = standIns(dir, { caddy: false });
  return { dir, bin, commands, ...commands.caddyRelease, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs functions of the rendered script with the module's variables pointing into the workspace's directory. */
function runModule(
  { dir, bin }: { dir: string; bin: string },
  vars: { url: string; sha512: string; domain?: false },
  call: string,
) {
  const program = [
    "set -Eeuo pipefail",
    "log() { printf '%s\\n' \"$*\" >&2; }",
    "TEMP_FILES=() MAIN_SUBSHELL=0 CURRENT_STEP=test ATTEMPTS=2 PAUSE=0 APP_PORT=3000 APP_NAME=crm",
    renderFrontConstants(),
    `CADDY_URL=${shellQuote(vars.url)} CADDY_SHA512=${shellQuote(vars.sha512)}${vars.domain === false ? " REDIRECT_HTTP_PORT=true" : " DOMAIN_NAME=crm.example.com REDIRECT_HTTP_PORT=false"}`,
    "ACME_DIRECTORY=https://acme-v02.api.letsencrypt.org/directory",
    `CADDY_BINARY=${shellQuote(join(dir, "install", "caddy"))} CADDY_HOME=${shellQuote(join(dir, "home"))}`,
    `CADDY_CONFIG=${shellQuote(join(dir, "etc", "Caddyfile"))} UNIT_DIRECTORY=${shellQuote(join(dir, "units"))}`,
    "trap 'rm -f -- \"${TEMP_FILES[@]}\"' EXIT",
    ...["die", "retry", "install_file", "load_units", "enable_unit"].map((name) => shellFunction(script, name)),
    moduleCode,
    call,
  ].join("\n");
  return spawnSync("bash", ["-c", program], {
    encoding: "utf8",
    env: { PATH: `${bin}:${process.env.PATH}`, TMPDIR: join(dir, "tmp"), HOME: dir },
  });
}

describe("install_caddy", () => {
  test("refuses a download whose SHA-512 is not the pinned one, and leaves nothing behind", () => {
    const w = workspace();
    try {
      const result = runModule(w, { url: `file://${w.tarball}`, sha512: "0".repeat(128) }, "install_caddy");
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(
        `ERROR: the file at file://${w.tarball} is not the Caddy release of CADDY_SHA512; not installing it`,
      );
      expect(readdirSync(join(w.dir, "install"))).toEqual([]);
      expect(readdirSync(join(w.dir, "tmp"))).toEqual([]);
    } finally {
      w.remove();
    }
  });

  test("installs the matching release, and a rerun with that release installed downloads nothing", () => {
    const w = workspace();
    try {
      const first = runModule(w, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_caddy");
      expect(first.stderr).toContain("Caddy installed: v2.0.0 stand-in");
      expect(first.status).toBe(0);
      const binary = join(w.dir, "install", "caddy");
      expect(statSync(binary).mode & 0o777).toBe(0o755);
      expect(readFileSync(`${binary}.sha512`, "utf8")).toBe(`${w.sha512}\n`);
      expect(readdirSync(join(w.dir, "tmp"))).toEqual([]);
      rmSync(w.tarball);
      const again = runModule(w, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_caddy");
      expect({ status: again.status, stderr: again.stderr }).toEqual({
        status: 0,
        stderr: `Caddy of file://${w.tarball} is installed\n`,
      });
      // Another pin is another release: downloaded again (and here, gone, refused after the retries).
      expect(runModule(w, { url: `file://${w.tarball}`, sha512: "f".repeat(128) }, "install_caddy").status).not.toBe(0);
    } finally {
      w.remove();
    }
  });
});

describe("install_front", () => {
  const tools = haveTool("caddy") && haveTool("systemd-analyze") ? test : test.skip;
  /** Debian's caddy's JSON of a Caddyfile. */
  const adapt = (caddyfile: string) => {
    const adapted = spawnSync("caddy", ["adapt", "--config", caddyfile, "--adapter", "caddyfile"], {
      encoding: "utf8",
    });
    expect(adapted.status).toBe(0);
    return JSON.parse(adapted.stdout);
  };

  tools("creates the caddy user, writes a Caddyfile Caddy reads and a unit systemd accepts, (re)starts it", () => {
    const w = workspace();
    try {
      const result = runModule(w, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_front");
      expect(result.stderr).not.toContain("ERROR");
      expect(result.status).toBe(0);
      expect(w.commands.takeCalls().newCalls).toEqual([
        // The download (the curl stand-in passes file:// to curl), into a temporary file of the module's.
        expect.stringMatching(
          new RegExp(`^curl -fsSL --max-time 300 -o ${join(w.dir, "tmp")}/tmp\\.\\w+ file://${w.tarball}$`),
        ),
        `useradd --system --home-dir ${join(w.dir, "home")} --create-home --shell /sbin/nologin caddy`,
        // A unit systemd has not loaded: read from its file, no reload; nor by the enable.
        "systemctl show -p NeedDaemonReload --value caddy.service",
        "systemctl is-enabled --quiet caddy.service",
        "systemctl enable --no-reload caddy.service",
        "systemctl restart caddy.service",
      ]);
      const caddyfile = join(w.dir, "etc", "Caddyfile");
      expect(readFileSync(caddyfile, "utf8")).toBe(
        [
          "{",
          "\tadmin off",
          "\tacme_ca https://acme-v02.api.letsencrypt.org/directory",
          "}",
          "",
          "(app) {",
          "\treverse_proxy 127.0.0.1:3000 {",
          "\t\tlb_try_duration 60s",
          "\t\tlb_try_interval 250ms",
          "\t\ttransport http {",
          "\t\t\tkeepalive off",
          "\t\t}",
          "\t}",
          "}",
          "",
          "http://:3080 {",
          "\timport app",
          "}",
          "crm.example.com {",
          "\timport app",
          "}",
          "",
        ].join("\n"),
      );
      // Debian's caddy turns it into its JSON configuration: the front's listener and the site, the proxy with its
      // retries and no kept-alive connection, the CA, no admin endpoint.
      const config = adapt(caddyfile);
      expect(config.admin).toEqual({ disabled: true });
      const servers = JSON.stringify(config.apps.http.servers);
      expect(servers).toContain('"host":["crm.example.com"]');
      expect(servers).toContain('":3080"');
      expect(servers).toContain('"dial":"127.0.0.1:3000"');
      expect(servers).toContain('"try_duration":60000000000');
      expect(servers).toContain('"try_interval":250000000');
      expect(servers).toMatch(/"keep_alive":\{"enabled":false/);
      expect(JSON.stringify(config.apps.tls)).toContain('"ca":"https://acme-v02.api.letsencrypt.org/directory"');

      const unit = join(w.dir, "units", "caddy.service");
      const text = readFileSync(unit, "utf8");
      expect(text).toContain(
        `\nExecStart=${join(w.dir, "install", "caddy")} run --config ${caddyfile} --adapter caddyfile\n`,
      );
      for (const line of [
        "User=caddy",
        `Environment=HOME=${join(w.dir, "home")}`,
        "AmbientCapabilities=CAP_NET_BIND_SERVICE",
        "Restart=always",
        "Type=notify",
      ]) {
        expect(text).toContain(`\n${line}\n`);
      }
      // verify exits 0 on settings it ignores, so any diagnostic at all counts as a failure.
      const verified = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
      expect(verified.stdout + verified.stderr).toBe("");
      expect(verified.status).toBe(0);
      expect(existsSync(join(w.dir, "install", "caddy"))).toBe(true);

      // A rerun with nothing changed and Caddy running restarts nothing: no connection through it drops; nor does it
      // create the user, reload systemd or enable the unit again.
      const rerun = () => {
        expect(runModule(w, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_front").status).toBe(0);
        return w.commands.takeCalls().newCalls;
      };
      const unchanged = [
        "systemctl show -p NeedDaemonReload --value caddy.service",
        "systemctl is-enabled --quiet caddy.service",
        "systemctl is-active --quiet caddy.service",
      ];
      expect(rerun()).toEqual(unchanged);
      // A run killed between writing the unit and the reload: systemd holds another version, which the next run reloads.
      writeFileSync(w.commands.staleUnitsFile, "caddy.service\n");
      expect(rerun()).toEqual([...unchanged.slice(0, 1), "systemctl daemon-reload", ...unchanged.slice(1)]);
      expect(rerun()).toEqual(unchanged);
    } finally {
      w.remove();
    }
  });

  tools("without a domain: the front's two listeners (the app's port's, port 80's), no CA", () => {
    const w = workspace();
    try {
      expect(
        runModule(w, { url: `file://${w.tarball}`, sha512: w.sha512, domain: false }, "install_front").status,
      ).toBe(0);
      const caddyfile = join(w.dir, "etc", "Caddyfile");
      const text = readFileSync(caddyfile, "utf8");
      expect(text.startsWith("{\n\tadmin off\n}\n")).toBe(true);
      expect(text.endsWith("http://:3080 {\n\timport app\n}\nhttp://:3081 {\n\timport app\n}\n")).toBe(true);
      const config = adapt(caddyfile);
      expect(config.apps.tls).toBeUndefined();
      expect(
        Object.values(config.apps.http.servers as Record<string, { listen: string[] }>)
          .map((server) => server.listen)
          .sort(),
      ).toEqual([[":3080"], [":3081"]]);
    } finally {
      w.remove();
    }
  });
});

/**
 * The provisioning harness's stand-ins (nft keeps the rules it is given and the front's set `held`; id knows the users
 * useradd made, of uid 990, and here caddy unless `caddy` is false; systemctl answers is-enabled and NeedDaemonReload as
 * systemd does), copied into `dir`: their commands (bin), their log of calls, and the rules nft was given.
 */
function standIns(
  dir: string,
  { caddy = true } = {},
): { bin: string; commands: StandInCommands; rulesGiven: () => string } {
  const commands = new StandInCommands(dir);
  commands.write({});
  if (caddy) writeFileSync(commands.usersFile, "caddy\n");
  const rules = commands.nftRulesFile;
  return { bin: commands.binDir, commands, rulesGiven: () => (existsSync(rules) ? readFileSync(rules, "utf8") : "") };
}

describe("front_firewall", () => {
  /** The front's rules as front_firewall gives them to nft (a stand-in that keeps them), for `settings`, with caddy of uid 990. */
  function rules(settings: ProvisioningSettings): string {
    const dir = mkdtempSync(join(tmpdir(), "crm-front-firewall-"));
    try {
      const { bin, rulesGiven } = standIns(dir);
      const rendered = renderProvisioningScript(settings, SECRETS);
      // The header, and the tool's own constants where the header (a domain's) has none, as the ops tool reads them.
      const header = relocateHostFiles(renderScriptHeader(settings, SECRETS), dir);
      const program = [
        "set -u",
        header,
        header.includes("FRONT_PORT=") ? "" : renderFrontConstants(),
        "log() { :; }",
        "TEMP_FILES=() MAIN_SUBSHELL=0 CURRENT_STEP=test",
        ...["die", "install_file", "metadata_address", "enable_unit", "nft_block"].map((name) =>
          shellFunction(rendered, name),
        ),
        // The ops tool's (ensure_front): not in the user data.
        readFileSync(join(__dirname, "../../userdata/front.sh"), "utf8"),
        "front_firewall",
      ].join("\n");
      const result = spawnSync("bash", ["-c", program], {
        encoding: "utf8",
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      const kept = readFileSync(hostFilesUnder(dir).nftablesConfig, "utf8");
      const given = rulesGiven();
      expect(kept).toBe(`# BEGIN crm front (ops tool)\n${given}# END crm front (ops tool)\n`);
      return given;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("sends the app's port and port 80 from outside, and port 80 from the host, to Caddy; holds Caddy's connections to the app by the set held", () => {
    const given = rules(PRODUCTION_SETTINGS);
    expect(given).toContain(
      "table inet crm_front {\n  set held {\n    type inet_service; flags timeout;\n  }\n  chain hold {",
    );
    expect(given).toContain("meta skuid 990 tcp dport @held counter reject with tcp reset");
    // Port 80 to a listener of its own: one client port to both would meet at one local port (settings/ports.ts).
    expect(given).toContain(
      "type nat hook prerouting priority -110; policy accept;\n    tcp dport 3000 counter redirect to :3080\n" +
        "    tcp dport 80 counter redirect to :3081\n  }",
    );
    expect(given).toContain(
      "ip daddr 169.254.169.254 return\n    fib daddr type local tcp dport 80 counter redirect to :3081",
    );
  });

  test("with a domain (Caddy binds 80 and 443 itself), only the app's port", () => {
    const given = rules(DOMAIN_SETTINGS);
    expect(given).toContain("tcp dport 3000 counter redirect to :3080\n  }");
    expect(given).not.toContain("dport 80");
  });
});

describe("the hold (ops.sh: front_hold, front_open, front_state)", () => {
  /**
   * Runs `call` with ops.sh's functions and stand-ins: nft keeps the set `held` in a file (absent: no front), ss reports
   * a connection to the app for its first `inFlight` calls (Caddy's requests in flight). Returns the output, nft's calls
   * and how many times ss was asked.
   */
  function hold(call: string, opts: { front: boolean; inFlight: number; drainSeconds?: number }) {
    const dir = mkdtempSync(join(tmpdir(), "crm-hold-"));
    try {
      const { bin, commands, rulesGiven } = standIns(dir);
      if (opts.front) writeFileSync(commands.frontHeldFile, "");
      const write = (name: string, body: string) =>
        writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
      const count = join(dir, "ss-calls");
      write(
        "ss",
        `n=$(( $(cat ${shellQuote(count)} 2>/dev/null || echo 0) + 1 )); echo $n >${shellQuote(count)}; ` +
          `(( n <= ${opts.inFlight} )) && echo "ESTAB 0 0 127.0.0.1:41234 127.0.0.1:3000"; exit 0`,
      );
      const program = [
        "set -Eeuo pipefail",
        "log() { printf '%s\\n' \"$*\"; }",
        `APP_NAME=crm APP_PORT=3000 HOLD_SECONDS=160 DRAIN_SECONDS=${opts.drainSeconds ?? 30}`,
        readFileSync(join(__dirname, "../../userdata/ops.sh"), "utf8"),
        call,
      ].join("\n");
      const result = spawnSync("bash", ["-c", program], {
        encoding: "utf8",
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      });
      expect(result.stderr).toBe("");
      const calls = commands.calls().filter((call) => call.startsWith("nft "));
      return {
        status: result.status,
        stdout: result.stdout,
        calls,
        rules: rulesGiven(),
        ssCalls: existsSync(count) ? Number(readFileSync(count, "utf8")) : 0,
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("holds Caddy's new connections (one transaction, an element that expires), waits for the requests in flight, then opens", () => {
    const run = hold("front_state; front_hold; front_state; front_open; front_state", { front: true, inFlight: 3 });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      "open\nrequests held at the front\nheld\nthe front passes the requests to the app again\nopen\n",
    );
    expect(run.rules).toContain("flush set inet crm_front held\nadd element inet crm_front held { 3000 timeout 160s }");
    // Three answers with a connection in flight, then none: the drain asked a fourth time.
    expect(run.ssCalls).toBe(4);
  });

  test("gives the requests in flight DRAIN_SECONDS at most", () => {
    // 3 s: bash's SECONDS counts whole seconds, so a deadline of SECONDS + 1 can be a fraction of a second away, and
    // under load the first ss alone outlasted it (a fresh-clone run saw one call); SECONDS + 3 is at least 2 s away.
    const started = Date.now();
    const run = hold("front_hold; front_state", { front: true, inFlight: 1000, drainSeconds: 3 });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("requests held at the front\nheld\n");
    expect(Date.now() - started).toBeLessThan(8000);
    expect(run.ssCalls).toBeGreaterThan(1);
  });

  test("without the front (a scale-out host, one launched before it), holds nothing and opens nothing", () => {
    const run = hold("front_hold; front_open; front_state", { front: false, inFlight: 3 });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("none\n");
    expect(run.calls.every((call) => call.startsWith("nft list "))).toBe(true);
    expect(run.rules).toBe("");
    expect(run.ssCalls).toBe(0);
  });
});
