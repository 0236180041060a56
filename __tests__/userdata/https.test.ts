/**
 * userdata/https.sh, the module of a stack with a domain: in the user data only then, its header
 * values, and its functions run for real (bash, curl on file:// addresses, sha512sum, tar, Debian's
 * caddy to read the Caddyfile it writes, systemd-analyze for its unit). The whole path on a booted
 * host, with a certificate from an ACME CA, is the boot test's host C.
 */
import { spawnSync } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { parseStackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { CADDY_PATHS, renderProvisioningScript, renderScriptHeader, scriptModules, shellQuote } from "../../userdata";
import { haveTool, PRODUCTION_SETTINGS, SECRETS, shellFunction } from "./fixtures";

const DOMAIN_SETTINGS = parseStackSettings({ ...exampleSettings, domain: { hostedZone: "example.com", name: "crm.example.com" } }).provisioning;
const script = renderProvisioningScript(DOMAIN_SETTINGS, SECRETS, "vol-0123456789abcdef0", "203.0.113.25");
/** The modules as the user data carries them: between the rendered header and provision.sh (its top-level code first). */
const moduleCode = script.slice(renderScriptHeader(DOMAIN_SETTINGS, SECRETS, "vol-0123456789abcdef0", "203.0.113.25").length, script.indexOf("\nset -Eeuo pipefail\n"));

describe("the HTTPS module in the user data", () => {
  test("is in the script only with a domain, between the header and provision.sh, and main runs it after step 15", () => {
    expect(scriptModules(DOMAIN_SETTINGS)).toEqual(["ops", "telemetry", "https", "local-database"]);
    expect(scriptModules(PRODUCTION_SETTINGS)).toEqual(["ops", "telemetry", "local-database"]);
    expect(moduleCode).toContain("\ninstall_caddy() {\n");
    const module = script.indexOf("\ninstall_https() {\n");
    expect(module).toBeGreaterThan(script.indexOf("\nreadonly SERVICE_UNIT="));
    expect(module).toBeLessThan(script.indexOf("\nstep_01_update_packages() {\n"));
    expect(renderProvisioningScript(PRODUCTION_SETTINGS, SECRETS)).not.toContain("install_https() {");
    const main = shellFunction(script, "main");
    expect(main.indexOf("run_step install_https")).toBeGreaterThan(main.indexOf("run_step step_15_install_service"));
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
    expect(value("CADDY_URL")).toBe(DOMAIN_SETTINGS.domain!.caddyUrl);
    expect(value("CADDY_SHA512")).toBe(DOMAIN_SETTINGS.domain!.caddySha512);
    expect(value("CADDY_BINARY")).toBe(CADDY_PATHS.binary);
    expect(value("REDIRECT_HTTP_PORT")).toBe("false");
    expect([value("FRONTEND_URI"), value("BACKEND_URI")]).toEqual(["https://crm.example.com", "http://crm.example.com:3000"]);
  });

  const shellcheck = haveTool("shellcheck") ? test : test.skip;
  shellcheck("passes shellcheck with the module", () => {
    const result = spawnSync("shellcheck", ["-s", "bash", "-"], { input: script, encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });
});

/** A private directory with a release-shaped tarball (a `caddy` at its top that prints a version), its SHA-512, and stand-ins. */
function workspace() {
  const dir = mkdtempSync(join(tmpdir(), "crm-https-"));
  for (const sub of ["release", "bin", "tmp", "install", "etc", "units"]) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, "release", "caddy"), "#!/bin/sh\necho v2.99.0 test-build\n", { mode: 0o755 });
  const tarball = join(dir, "caddy_linux_amd64.tar.gz");
  expect(spawnSync("tar", ["-czf", tarball, "-C", join(dir, "release"), "caddy"]).status).toBe(0);
  const sha512 = spawnSync("sha512sum", [tarball], { encoding: "utf8" }).stdout.split(" ")[0];
  const calls = join(dir, "calls.log");
  for (const name of ["systemctl", "useradd"]) {
    writeFileSync(join(dir, "bin", name), `#!/bin/bash\nprintf '%s\\n' "${name} $*" >>${shellQuote(calls)}\n`, { mode: 0o755 });
  }
  // No user caddy here: install_https must create it.
  writeFileSync(join(dir, "bin", "id"), `#!/bin/bash\n[[ $1 != caddy ]] && exec /usr/bin/id "$@"; exit 1\n`, { mode: 0o755 });
  return { dir, tarball, sha512, calls, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs functions of the rendered script with the module's variables pointing into `dir`. */
function runModule(dir: string, vars: { url: string; sha512: string }, call: string) {
  const program = [
    "set -Eeuo pipefail",
    "log() { printf '%s\\n' \"$*\" >&2; }",
    "TEMP_FILES=() MAIN_SUBSHELL=0 CURRENT_STEP=test ATTEMPTS=2 PAUSE=0 APP_PORT=3000",
    `CADDY_URL=${shellQuote(vars.url)} CADDY_SHA512=${shellQuote(vars.sha512)} DOMAIN_NAME=crm.example.com`,
    "ACME_DIRECTORY=https://acme-v02.api.letsencrypt.org/directory",
    `CADDY_BINARY=${shellQuote(join(dir, "install", "caddy"))} CADDY_HOME=${shellQuote(join(dir, "home"))}`,
    `CADDY_CONFIG=${shellQuote(join(dir, "etc", "Caddyfile"))} UNIT_DIRECTORY=${shellQuote(join(dir, "units"))}`,
    "trap 'rm -f -- \"${TEMP_FILES[@]}\"' EXIT",
    ...["die", "retry", "install_file"].map((name) => shellFunction(script, name)),
    moduleCode,
    call,
  ].join("\n");
  return spawnSync("bash", ["-c", program], {
    encoding: "utf8", env: { PATH: `${join(dir, "bin")}:${process.env.PATH}`, TMPDIR: join(dir, "tmp"), HOME: dir },
  });
}

describe("install_caddy", () => {
  test("refuses a download whose SHA-512 is not the pinned one, and leaves nothing behind", () => {
    const w = workspace();
    try {
      const result = runModule(w.dir, { url: `file://${w.tarball}`, sha512: "0".repeat(128) }, "install_caddy");
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(`ERROR: the file at file://${w.tarball} is not the Caddy release of CADDY_SHA512; not installing it`);
      expect(readdirSync(join(w.dir, "install"))).toEqual([]);
      expect(readdirSync(join(w.dir, "tmp"))).toEqual([]);
    } finally {
      w.remove();
    }
  });

  test("installs the matching release, and a rerun with that release installed downloads nothing", () => {
    const w = workspace();
    try {
      const first = runModule(w.dir, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_caddy");
      expect(first.stderr).toContain("Caddy installed: v2.99.0 test-build");
      expect(first.status).toBe(0);
      const binary = join(w.dir, "install", "caddy");
      expect(statSync(binary).mode & 0o777).toBe(0o755);
      expect(readFileSync(`${binary}.sha512`, "utf8")).toBe(`${w.sha512}\n`);
      expect(readdirSync(join(w.dir, "tmp"))).toEqual([]);
      rmSync(w.tarball);
      const again = runModule(w.dir, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_caddy");
      expect({ status: again.status, stderr: again.stderr }).toEqual({ status: 0, stderr: `Caddy of file://${w.tarball} is installed\n` });
      // Another pin is another release: downloaded again (and here, gone, refused after the retries).
      expect(runModule(w.dir, { url: `file://${w.tarball}`, sha512: "f".repeat(128) }, "install_caddy").status).not.toBe(0);
    } finally {
      w.remove();
    }
  });
});

describe("install_https", () => {
  const tools = haveTool("caddy") && haveTool("systemd-analyze") ? test : test.skip;
  tools("creates the caddy user, writes a Caddyfile Caddy reads and a unit systemd accepts, and (re)starts it", () => {
    const w = workspace();
    try {
      const result = runModule(w.dir, { url: `file://${w.tarball}`, sha512: w.sha512 }, "install_https");
      expect(result.status).toBe(0);
      expect(readFileSync(w.calls, "utf8").split("\n").filter(Boolean)).toEqual([
        `useradd --system --home-dir ${join(w.dir, "home")} --create-home --shell /sbin/nologin caddy`,
        "systemctl daemon-reload", "systemctl enable caddy.service", "systemctl restart caddy.service",
      ]);
      const caddyfile = join(w.dir, "etc", "Caddyfile");
      expect(readFileSync(caddyfile, "utf8")).toBe([
        "{", "\tadmin off", "\tacme_ca https://acme-v02.api.letsencrypt.org/directory", "}", "",
        "crm.example.com {", "\treverse_proxy 127.0.0.1:3000", "}", "",
      ].join("\n"));
      // Debian's caddy turns it into its JSON configuration: the site, the proxy, the CA, no admin endpoint.
      const adapted = spawnSync("caddy", ["adapt", "--config", caddyfile, "--adapter", "caddyfile"], { encoding: "utf8" });
      expect(adapted.status).toBe(0);
      const config = JSON.parse(adapted.stdout);
      expect(config.admin).toEqual({ disabled: true });
      expect(JSON.stringify(config.apps.http.servers)).toContain('"host":["crm.example.com"]');
      expect(JSON.stringify(config.apps.http.servers)).toContain('"dial":"127.0.0.1:3000"');
      expect(JSON.stringify(config.apps.tls)).toContain('"ca":"https://acme-v02.api.letsencrypt.org/directory"');

      const unit = join(w.dir, "units", "caddy.service");
      const text = readFileSync(unit, "utf8");
      expect(text).toContain(`\nExecStart=${join(w.dir, "install", "caddy")} run --config ${caddyfile} --adapter caddyfile\n`);
      for (const line of ["User=caddy", `Environment=HOME=${join(w.dir, "home")}`, "AmbientCapabilities=CAP_NET_BIND_SERVICE", "Restart=on-failure"]) {
        expect(text).toContain(`\n${line}\n`);
      }
      // verify exits 0 on settings it ignores, so any diagnostic at all counts as a failure.
      const verified = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
      expect(verified.stdout + verified.stderr).toBe("");
      expect(verified.status).toBe(0);
      expect(existsSync(join(w.dir, "install", "caddy"))).toBe(true);
    } finally {
      w.remove();
    }
  });
});
