/**
 * Every value the settings accept is valid in every grammar it lands in: settings at the edges of
 * their rules are rendered into the user data, and each artifact goes through its own tool: the
 * script through bash -n and shellcheck, the units through systemd-analyze verify, the firewall's
 * rules and the file the nftables service loads through `nft -c` (Debian's nftables), the file
 * system table through libmount (findmnt), the git identity and the repository address through git
 * itself, the metadata address through curl. The values just beyond the edges are refused with one
 * line naming the setting, the value and what is expected.
 */
import { spawn, spawnSync, SpawnSyncReturns } from "child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "fs";
import http from "http";
import { AddressInfo } from "net";
import { tmpdir } from "os";
import { dirname, join } from "path";
import { SettingsError } from "../../settings/errors";
import exampleSettings from "../../settings/example.json";
import { parseStackSettings } from "../../settings/stack-settings";
import { NFT_KEYWORDS } from "../../settings/grammars";
import { ProvisioningSettings } from "../../settings/provisioning-settings";
import {
  refreshScriptPath,
  refreshUnitName,
  renderProvisioningScript,
  renderRefreshUnit,
  renderScriptHeader,
  renderServiceUnit,
  serviceUnitName,
} from "../../userdata";
import { HostFiles, PATH_SETTINGS, PathSettingName } from "../../settings/host-layout";
import { haveTool, SECRETS, shellFunction } from "../userdata/fixtures";
import { hostFilesUnder, relocateHostFiles } from "../support/provisioning-harness";
import { withModules } from "../support/harness/module-parameters";

jest.setTimeout(60_000);

/** `unit` repeated to `length` characters (code points: an emoji is never cut in half). */
const long = (unit: string, length: number) => [...unit.repeat(length)].slice(0, length).join("");
/** A path of exactly `length` characters inside `base`. */
const pathOf = (base: string, length: number) => `${base}/${long("abcdefghi/", length - base.length - 2)}z`;

/** Settings files at the edges of the rules, on top of the example: each is accepted whole. */
const EDGES: Record<string, Record<string, unknown>> = {
  "the shortest values": {
    appName: "z",
    repoUrl: "https://h/r",
    databaseName: "d",
    appDbUser: "u",
    gitUser: "x",
    gitEmail: "a@b.co",
    loginUser: "a",
    loginHome: "/home/a",
    appDir: "/home/a/b",
    swapFile: "/s",
    logFile: "/var/log/l",
    dataMount: "/d",
    scriptDirectory: "/opt/s",
    dataVolumeWaitSeconds: 1,
  },
  "the longest values, IPv6 metadata and the other directories": {
    appName: `a${long("-_.9", 63)}`,
    repoUrl: `https://${long("a", 63)}.${long("b", 63)}.${long("c", 63)}.${long("d", 61)}:65535/${long("a~b+c_d.e-f/", 120)}x/`,
    databaseName: `${"crm_".repeat(12)}abcd`,
    appDbUser: long("app_", 32),
    gitUser: long(`O'Brien "Deploy" $(id) \`x\` \\ ; & | Jérôme 🔑 `, 99).trimEnd() + "Z",
    gitEmail: `${long("a+b%c_d-e.", 63)}z@${long("x-y.", 200)}example.co`,
    loginUser: `_${long("d-1", 30)}`,
    loginHome: pathOf("/home", 150),
    swapFile: pathOf("/var/swap", 200),
    logFile: pathOf("/var/log/crm", 200),
    dataMount: pathOf("/srv/crm-data", 200),
    scriptDirectory: pathOf("/opt/crm", 200),
    metadataEndpoint: "http://[fd00:ec2::254]",
    dataVolumeWaitSeconds: 3600,
    redirectHttpPort: false,
  },
  "names beside reserved words": {
    appName: "Table",
    databaseName: "select",
    appDbUser: "update",
    repoUrl: "https://10.0.0.5:8443/git/app.git",
    gitUser: "A. B. Deploy",
    loginUser: "ec2-user2",
    loginHome: "/home/ec2-user2",
    appDir: "/home/ec2-user2/.app",
    dataMount: "/data",
  },
};
// The longest checkout: its home's length plus a segment, 200 characters in all.
EDGES["the longest values, IPv6 metadata and the other directories"].appDir =
  `${EDGES["the longest values, IPv6 metadata and the other directories"].loginHome}/${long("x", 49)}`;

/** appName values beside nftables keywords, systemd's units and the distribution's tables: accepted. */
const NAMES = [
  "Table",
  "ip6x",
  "tcp-app",
  "counter2",
  "logs",
  "filter.d",
  "nat_app",
  "firewalld2",
  "x-",
  "x.",
  "z9",
  "maria",
];

/** Values just beyond the edges: [setting, value, words of what is expected]. */
const BEYOND: [string, unknown, string][] = [
  ["appName", `a${long("b", 64)}`, "1 to 64 letters"],
  ["appName", "1crm", "starting with a letter"],
  ["appName", "counter", "no nftables keyword"],
  ["appName", "filter", "nor a table of the distribution"],
  ["appName", "crm@x", "a name of 1 to 64"],
  ["appName", "systemd-app", "no unit of the distribution"],
  ["repoUrl", "https://h:65536/r", "port from 1 to 65535"],
  ["repoUrl", `https://${long("a", 64)}/r`, "labels of 1 to 63"],
  ["repoUrl", `https://${long("a.", 254)}/r`, "labels of 1 to 63"],
  ["repoUrl", "https://h/r/..", "no . or .. segment"],
  ["databaseName", long("d", 65), "1 to 64 letters"],
  ["databaseName", `${"crm_".repeat(12)}abcde`, "each _ counting twice"],
  ["databaseName", "sys", "not one of MariaDB's own schemas"],
  ["appDbUser", long("u", 33), "1 to 32 letters"],
  ["gitUser", long("x", 101), "1 to 100 printable"],
  ["gitUser", "Deploy <bot>", "no < or >"],
  ["gitUser", "Deploy.", "not starting or ending with"],
  ["gitUser", "\u202eDeploy", "1 to 100 printable"],
  ["gitEmail", `${long("a", 65)}@b.co`, "up to 64"],
  ["gitEmail", "a.@b.co", "no dot at either end"],
  ["gitEmail", `a@${long("b", 64)}.co`, "an e-mail address"],
  ["loginUser", "root", "not root nor a system account"],
  ["loginUser", "systemd-x", "not root nor a system account"],
  ["loginUser", long("a", 32), "a Linux user name of 1 to 31"],
  ["appDir", pathOf("/home/ec2-user", 201), "at most 200 characters"],
  ["swapFile", "/var/log/swap", "apart from the system's own paths: it lies inside /var/log"],
  ["logFile", "/var/log", "a path inside /var/log"],
  ["scriptDirectory", "/usr/local", "a path inside /usr/local or /opt"],
  ["metadataEndpoint", "http://169.254.169.254/", "no trailing slash"],
  ["metadataEndpoint", "http://[fd00:ec2::254", "IPv6 in brackets"],
  ["metadataEndpoint", "http://169.254.169.253", "the instance metadata service's own address"],
  ["dataVolumeWaitSeconds", 3601, "from 1 to 3600"],
];

/** The settings of a settings file that adds `changes` to the example, as the stack validates them. */
const accepted = (changes: Record<string, unknown>) =>
  parseStackSettings({ ...exampleSettings, ...changes }).provisioning;

/** The same settings with every path inside `root`: the same grammar, in places a test may write. */
/** Settings with every path under `root`, and the host's own paths there too (the stand-in hosts' route). */
type Here = ProvisioningSettings & { readonly root: string; readonly host: HostFiles };

function local(settings: ProvisioningSettings, root: string): Here {
  const moved: Record<string, unknown> = { ...settings };
  for (const name of Object.keys(PATH_SETTINGS) as PathSettingName[]) moved[name] = `${root}${settings[name]}`;
  return { ...(moved as unknown as ProvisioningSettings), root, host: hostFilesUnder(root) };
}

function run(
  command: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync(command, args, { encoding: "utf8", timeout: 30_000, ...options });
}

/** `nft -c -f file`: in a network namespace of its own where this process may not change the host's firewall. */
function nftCheck(file: string): SpawnSyncReturns<string> {
  const direct = run("nft", ["-c", "-f", file]);
  return /Operation not permitted/.test(direct.stderr) ? run("unshare", ["-rn", "nft", "-c", "-f", file]) : direct;
}

/** Debian's own /etc/nftables.conf, which the script's block joins. */
const DEBIAN_NFTABLES_CONF = `#!/usr/sbin/nft -f

flush ruleset

table inet filter {
\tchain input {
\t\ttype filter hook input priority filter;
\t}
\tchain forward {
\t\ttype filter hook forward priority filter;
\t}
\tchain output {
\t\ttype filter hook output priority filter;
\t}
}
`;

/** A temporary directory with stand-ins `nft` (keeps the rules it is given) and `systemctl` (does nothing). */
function sandbox(): { dir: string; bin: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), "crm-grammars-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "nft"), `#!/bin/bash\ncat >"${join(dir, "rules.nft")}"\n`, { mode: 0o755 });
  writeFileSync(join(bin, "systemctl"), "#!/bin/bash\nexit 0\n", { mode: 0o755 });
  return { dir, bin, env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir } };
}

/** Runs shell functions of the rendered script after its header, then `calls`. */
function runFunctions(
  here: Here,
  functions: string[],
  calls: string,
  env: NodeJS.ProcessEnv,
): SpawnSyncReturns<string> {
  const script = renderProvisioningScript(here, SECRETS);
  const program = [
    relocateHostFiles(renderScriptHeader(here, SECRETS), here.root),
    "set -Eeuo pipefail",
    "TEMP_FILES=() PUBLIC_DNS=''",
    ...functions.map((name) => shellFunction(script, name)),
    calls,
  ].join("\n");
  return run("bash", ["-c", program], { env });
}

/** Writes the two units (and the helper script the refresh unit runs) where `here` says; their paths. */
function writeUnits(here: Here): string[] {
  mkdirSync(here.host.unitDirectory, { recursive: true });
  mkdirSync(dirname(refreshScriptPath(here)), { recursive: true });
  writeFileSync(refreshScriptPath(here), "#!/bin/bash\n");
  chmodSync(refreshScriptPath(here), 0o755);
  return [
    [serviceUnitName(here), renderServiceUnit(here)],
    [refreshUnitName(here), renderRefreshUnit(here)],
  ].map(([name, text]) => {
    writeFileSync(join(here.host.unitDirectory, name), text);
    return join(here.host.unitDirectory, name);
  });
}

/** Runs the script's configure_firewall `times` times on the file the nftables service loads, as `here` names it. */
function configureFirewall(here: Here, env: NodeJS.ProcessEnv, times: number): SpawnSyncReturns<string> {
  mkdirSync(dirname(here.host.nftablesConfig), { recursive: true });
  return runFunctions(
    here,
    ["metadata_address", "install_file", "enable_unit", "nft_block", "configure_firewall"],
    Array(times).fill("configure_firewall").join("\n"),
    env,
  );
}

const haveNft = haveTool("nft");
const haveSystemd = haveTool("systemd-analyze");
const haveShellcheck = haveTool("shellcheck");
const haveFindmnt = haveTool("findmnt");
const haveGit = haveTool("git");
const withTool = (have: boolean) => (have ? test : test.skip);

describe.each(Object.entries(EDGES))("settings at the edges: %s", (_name, changes) => {
  const settings = accepted(changes);
  let box: ReturnType<typeof sandbox>;
  let here: Here;
  beforeAll(() => {
    box = sandbox();
    here = local(settings, box.dir);
  });
  afterAll(() => rmSync(box.dir, { recursive: true, force: true }));

  test("the settings file is accepted, the values as given", () => {
    expect(settings).toMatchObject(changes);
  });

  withTool(haveShellcheck)("the rendered script passes bash -n and shellcheck", () => {
    const script = renderProvisioningScript(settings, SECRETS);
    expect(run("bash", ["-n"], { input: script })).toMatchObject({ status: 0, stderr: "" });
    const checked = run("shellcheck", ["-s", "bash", "-"], { input: withModules(script) });
    expect(checked.stdout + checked.stderr).toBe("");
  });

  withTool(haveSystemd)("the units pass systemd-analyze verify, and the service's shell command bash -n", () => {
    const units = writeUnits(here);
    const verified = run("systemd-analyze", ["verify", ...units]);
    expect({ status: verified.status, output: verified.stdout + verified.stderr }).toEqual({ status: 0, output: "" });
    const command = /^ExecStart=\/bin\/bash -c '(.*)'$/m.exec(renderServiceUnit(here))![1];
    expect(run("bash", ["-n", "-c", command])).toMatchObject({ status: 0, stderr: "" });
  });

  withTool(haveNft)(
    "the firewall's rules, and the file the nftables service loads, pass nft -c (twice run, after Debian's own)",
    () => {
      mkdirSync(dirname(here.host.nftablesConfig), { recursive: true });
      writeFileSync(here.host.nftablesConfig, DEBIAN_NFTABLES_CONF);
      const result = configureFirewall(here, box.env, 2);
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" });
      const rules = join(box.dir, "rules.nft");
      expect(readFileSync(rules, "utf8")).toContain(`table inet ${settings.appName} {`);
      expect(readFileSync(rules, "utf8")).toContain(
        settings.metadataEndpoint.includes("[") ? "ip6 daddr fd00:ec2::254" : "ip daddr 169.254.169.254",
      );
      for (const file of [rules, here.host.nftablesConfig]) {
        const checked = nftCheck(file);
        expect({ file, status: checked.status, stderr: checked.stderr }).toEqual({ file, status: 0, stderr: "" });
      }
      expect(
        readFileSync(here.host.nftablesConfig, "utf8").split(`# BEGIN ${settings.appName} (provisioning script)`),
      ).toHaveLength(2);
    },
  );

  withTool(haveFindmnt)("the file system table's lines read back through libmount as written", () => {
    mkdirSync(dirname(here.host.fstabFile), { recursive: true });
    writeFileSync(here.host.fstabFile, "");
    const script = renderProvisioningScript(here, SECRETS);
    const entries = shellFunction(script, "mount_data_volume")
      .split("\n")
      .filter((line) => /^\s*set_fstab_entry /.test(line));
    expect(entries).toHaveLength(2);
    const uuid = "0b7f1c52-3d2e-4a43-9a0e-6c0f3b1f2d61";
    const result = runFunctions(
      here,
      ["install_file", "set_fstab_entry", "add_swap_to_fstab"],
      `uuid=${uuid} fs_type=xfs\n${entries.join("\n")}\nadd_swap_to_fstab`,
      box.env,
    );
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" });
    const table = run("findmnt", [
      "--tab-file",
      here.host.fstabFile,
      "--raw",
      "--noheadings",
      "--output",
      "SOURCE,TARGET,FSTYPE",
    ]);
    // findmnt --raw writes spaces and other unsafe characters as \x escapes: none here.
    expect(table.stdout.trim().split("\n")).toEqual([
      `UUID=${uuid} ${here.dataMount} xfs`,
      `${here.dataMount}/mysql ${here.host.databaseDir} none`,
      `${here.swapFile} none swap`,
    ]);
  });

  withTool(haveGit)(
    "git keeps the identity as written, and parses the repository address into its host and path",
    () => {
      const identity = runFunctions(
        here,
        [],
        'git config --global user.name "$GIT_USER" && git config --global user.email "$GIT_EMAIL" && git var GIT_AUTHOR_IDENT',
        box.env,
      );
      expect(identity.stderr).toBe("");
      expect(identity.stdout).toMatch(/^.* <.*> \d+ [+-]\d{4}\n$/);
      expect(identity.stdout.slice(0, identity.stdout.lastIndexOf(">") + 1)).toBe(
        `${settings.gitUser} <${settings.gitEmail}>`,
      );
      const parsed = join(box.dir, "credential-request");
      const helper = `!f() { cat >"${parsed}"; printf "username=u\\npassword=p\\n"; }; f`;
      const fill = runFunctions(
        here,
        [],
        `printf 'url=%s\\n\\n' "$REPO_URL" | git -c credential.useHttpPath=true -c credential.helper= -c credential.helper='${helper}' credential fill`,
        box.env,
      );
      expect({ status: fill.status, stderr: fill.stderr }).toEqual({ status: 0, stderr: "" });
      const url = new URL(settings.repoUrl);
      expect(
        readFileSync(parsed, "utf8")
          .split("\n")
          .filter((line) => line !== "" && !line.startsWith("capability")),
      ).toEqual(["protocol=https", `host=${url.host}`, `path=${url.pathname.slice(1).replace(/\/$/, "")}`]);
    },
  );
});

describe("app names beside nftables keywords, systemd's units and the distribution's tables", () => {
  let box: ReturnType<typeof sandbox>;
  beforeAll(() => {
    box = sandbox();
  });
  afterAll(() => rmSync(box.dir, { recursive: true, force: true }));

  withTool(haveNft && haveSystemd)("are accepted, and nft and systemd take them", () => {
    for (const appName of NAMES) {
      const here = local(accepted({ appName }), join(box.dir, appName));
      const result = configureFirewall(here, box.env, 1);
      expect({ appName, status: result.status, stderr: result.stderr }).toEqual({ appName, status: 0, stderr: "" });
      const checked = nftCheck(here.host.nftablesConfig);
      expect({ appName, status: checked.status, stderr: checked.stderr }).toEqual({ appName, status: 0, stderr: "" });
      const verified = run("systemd-analyze", ["verify", ...writeUnits(here)]);
      expect({ appName, output: verified.stdout + verified.stderr }).toEqual({ appName, output: "" });
    }
  });

  withTool(haveNft)("the check is real: nft refuses a table named by a keyword, which the settings refuse too", () => {
    for (const keyword of ["counter", "ip", "redirect", "table"]) {
      expect(NFT_KEYWORDS.has(keyword)).toBe(true);
      expect(() => accepted({ appName: keyword })).toThrow(SettingsError);
      const file = join(box.dir, `${keyword}.nft`);
      writeFileSync(file, `table inet ${keyword} {\n}\n`);
      expect(nftCheck(file).stderr).toMatch(/syntax error/);
    }
  });
});

describe("values just beyond the edges", () => {
  test.each(BEYOND)(
    "%s = %j is refused in one line naming the setting, the value and what is expected",
    (setting, value, expected) => {
      let message = "";
      try {
        accepted({ [setting]: value });
      } catch (error) {
        expect(error).toBeInstanceOf(SettingsError);
        message = (error as Error).message;
      }
      expect(message.split("\n")).toHaveLength(1);
      expect(message).toMatch(new RegExp(`^Invalid setting "${setting}" \\(got .+\\): expected `));
      expect(message).toContain(expected);
    },
  );
});

describe("the metadata service at its IPv6 address", () => {
  withTool(haveTool("curl"))("is read through curl at http://[…]:port, as at [fd00:ec2::254]", async () => {
    const server = http.createServer((request, response) => {
      if (request.method === "PUT" && request.url === "/latest/api/token") return void response.end("token-1");
      const authorized = request.headers["x-aws-ec2-metadata-token"] === "token-1";
      response.statusCode = authorized && request.url === "/latest/meta-data/public-hostname" ? 200 : 404;
      response.end(authorized ? "ec2-203-0-113-7.compute-1.amazonaws.com" : "");
    });
    const listening = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(0, "::1", () => resolve(true));
    });
    if (!listening) {
      console.warn("SKIPPED: no IPv6 loopback on this machine");
      return;
    }
    try {
      const port = (server.address() as AddressInfo).port;
      const settings = {
        ...accepted({ metadataEndpoint: "http://[fd00:ec2::254]" }),
        metadataEndpoint: `http://[::1]:${port}`,
      };
      const script = renderProvisioningScript(settings, SECRETS);
      const program = [
        renderScriptHeader(settings, SECRETS),
        "set -Eeuo pipefail",
        "PUBLIC_DNS=''",
        ...[
          "log",
          "die",
          "retry",
          "metadata",
          "variant",
          "read_public_hostname",
          "read_public_hostname_single_host",
        ].map((name) => shellFunction(script, name)),
        'read_public_hostname\nprintf "%s" "$PUBLIC_DNS"',
      ].join("\n");
      const child = await new Promise<{ status: number | null; stdout: string }>((resolve) => {
        let stdout = "";
        const bash = spawn("bash", ["-c", program], { stdio: ["ignore", "pipe", "ignore"], timeout: 30_000 });
        bash.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
        bash.on("close", (status) => resolve({ status, stdout }));
      });
      expect(child).toEqual({ status: 0, stdout: "ec2-203-0-113-7.compute-1.amazonaws.com" });
    } finally {
      server.close();
    }
  });
});
