/**
 * The command lines' one rule set (scripts/cli-options.ts): no value that starts with -, no empty value or
 * control character, each option's kind; and the ssh command line read back by the real ssh client
 * (`ssh -G` prints the configuration it parsed, without connecting).
 */
import { spawnSync } from "child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { CommandLineError, parseCommandLine, sshFileOption, UserError } from "../../scripts/cli-options";
import { parseOpsArgs, sshArguments } from "../../scripts/ops";
import { parseArguments, SecretsCommandError } from "../../scripts/secrets";

const SPEC = { host: "host", port: "port", user: "user", file: "path", yes: "flag" } as const;

function refusal(argv: string[]): string {
  try {
    parseCommandLine(argv, SPEC);
  } catch (error) {
    if (error instanceof CommandLineError) return error.message;
    throw error;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

/** ssh's parsed configuration for `args` (the options before the destination), as key → values. */
function sshConfig(args: string[]): Map<string, string[]> {
  const result = spawnSync("ssh", ["-G", ...args], { encoding: "utf8", timeout: 10_000 });
  expect(result.status).toBe(0);
  const config = new Map<string, string[]>();
  for (const line of result.stdout.split("\n").filter(Boolean)) {
    const [key, ...rest] = line.split(" ");
    config.set(key, [...(config.get(key) ?? []), rest.join(" ")]);
  }
  return config;
}

describe("parseCommandLine", () => {
  test("reads options as --name value or --name=value, flags, and positionals (all after --)", () => {
    expect(parseCommandLine(["S", "--port", "2222", "--user=admin", "--yes", "x", "--", "y"], SPEC)).toEqual({
      positional: ["S", "x", "y"],
      options: { port: "2222", user: "admin", yes: "true" },
    });
  });

  test("refuses a value that starts with -, for every option and positional, naming the option", () => {
    expect(refusal(["S", "--user", "-oProxyCommand=touch /tmp/x"])).toBe(
      "--user must not start with - (it would be read as an option): expected a login user name of 1 to 32 letters, digits and . _ -, starting with a letter or _",
    );
    expect(refusal(["S", "--host=-oProxyCommand=x"])).toMatch(/^--host must not start with -/);
    expect(refusal(["S", "--file", "-i"])).toMatch(/^--file must not start with -/);
    expect(refusal(["S", "--", "-x"])).toMatch(/^the argument "-x" must not start with -/);
    expect(refusal(["-x"])).toBe("unknown option -x");
  });

  test("refuses empty values, control characters, bad kinds, a flag with a value and a missing value", () => {
    expect(refusal(["S", "--file", ""])).toBe("--file needs a value (a file's path, without control characters)");
    expect(refusal(["S", "--file", "a\nProxyCommand x"])).toMatch(/^--file must not hold control characters/);
    expect(refusal(["S", "--user", "a b"])).toMatch(/^--user must be a login user name/);
    expect(refusal(["S", "--user", "root@evil"])).toMatch(/^--user must be a login user name/);
    expect(refusal(["S", "--port", "65536"])).toBe('--port must be a port number from 1 to 65535, got "65536"');
    expect(refusal(["S", "--host", "a b"])).toBe('--host must be a host name or an IP address, got "a b"');
    expect(refusal(["S", "--yes=1"])).toBe("--yes takes no value");
    expect(refusal(["S", "--port"])).toBe("--port needs a value (a port number from 1 to 65535)");
  });

  test("both commands apply it: ops exits 2 naming the option, secrets refuses a positional that starts with -", () => {
    expect(() => parseOpsArgs(["CrmHostStack", "status", "--user", "-oProxyCommand=id"], {})).toThrow(UserError);
    try {
      parseOpsArgs(["CrmHostStack", "status", "--user", "-oProxyCommand=id"], {});
    } catch (error) {
      expect((error as UserError).exitCode).toBe(2);
      expect((error as UserError).message.split("\n")[0]).toMatch(/^--user must not start with -/);
    }
    expect(() => parseArguments(["CrmHostStack", "set", "-oProxyCommand=id"])).toThrow(SecretsCommandError);
    expect(() => parseArguments(["-v", "check"])).toThrow(/unknown option -v/);
  });
});

describe("the ssh command line, read back by ssh -G", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crm cli options %h "q" \\ '));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("a known_hosts path with spaces, quotes, a backslash and % is one file, as given", () => {
    const file = join(dir, "known hosts");
    writeFileSync(file, "");
    const config = sshConfig(["-o", sshFileOption("UserKnownHostsFile", file), "host.example"]);
    expect(config.get("userknownhostsfile")).toEqual([file]);
  });

  test("the ops command's whole line: user, port, both files and the host as ssh reads them; no value becomes an option", () => {
    mkdirSync(join(dir, "keys dir"), { recursive: true });
    const key = join(dir, "keys dir", "id 1");
    const known = join(dir, "kh");
    const request = parseOpsArgs(
      ["CrmHostStack", "status", "--port", "2222", "--user", "deploy.user", "--identity", key, "--known-hosts", known],
      {},
    );
    const args = sshArguments(request, {
      host: "203.0.113.25",
      user: "deploy.user",
      command: "/usr/local/sbin/crm-ops",
      keyFile: key,
      knownHostsFile: known,
    });
    const config = sshConfig(args.slice(0, args.indexOf("--") + 2));
    expect(config.get("user")).toEqual(["deploy.user"]);
    expect(config.get("port")).toEqual(["2222"]);
    expect(config.get("hostname")).toEqual(["203.0.113.25"]);
    expect(config.get("userknownhostsfile")).toEqual([known]);
    // IdentityFile is printed before its % tokens are expanded: %% is a literal %.
    expect(config.get("identityfile")).toEqual([key.replace(/%/g, "%%")]);
    expect(config.get("proxycommand")).toBeUndefined();
  });
});
