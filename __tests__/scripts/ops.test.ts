/**
 * The local command (`npm run ops`, scripts/ops.ts): its command line, the host from the stack's
 * outputs (a real Terraform on a state holding them), the ssh command line and the files it writes
 * for a key or known hosts given as text, and real ssh runs against a port where nothing listens
 * (the whole way to a host's ops command is the boot test's).
 */
import { CreateSecretCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { execFile, execFileSync, spawn, spawnSync } from "child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "fs";
import { createServer } from "net";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { renderOpsTool } from "../../userdata/ops-tool";
import {
  hostFromOutputs,
  OPS_ACTIONS,
  parseOpsArgs,
  runOps,
  sshArguments,
  sshFiles,
  stackSettings,
  USAGE,
} from "../../scripts/ops";
import { exampleStackJson } from "../../scripts/docs";
import { SNAPSHOT_ID_EXPECTED, SNAPSHOT_ID_SHAPE } from "../../settings/snapshot-id";
import { OPS_ACTION_LIST } from "../../userdata/ops-actions";
import { HelpRequested, UserError } from "../../scripts/cli-options";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { isolatedMotoEnvironment } from "../support/real-provider";
import { exampleStackSettings } from "../support/synth";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";
import { describeWithTools } from "../support/required-tools";
import { SINCE_EXPECTED } from "../../scripts/journal-since";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(120_000);

const KEY =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAsecretkeymaterial\n-----END OPENSSH PRIVATE KEY-----";
const KNOWN = "[203.0.113.25]:22 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleHostKey";
const ROOT = resolve(__dirname, "../..");

/** A loopback port where nothing listens (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((resolvePort) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** `parseOpsArgs`' error for a command line. */
function refusal(argv: string[], env: NodeJS.ProcessEnv = {}): { message: string; exitCode: number } {
  try {
    parseOpsArgs(argv, env);
  } catch (error) {
    if (error instanceof UserError) return { message: error.message.split("\n")[0], exitCode: error.exitCode };
    throw error;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

describe("the actions", () => {
  test("are the declared ones (userdata/ops-actions.ts): the host's, with their arguments, then the workstation's", () => {
    expect(OPS_ACTIONS).toEqual(
      OPS_ACTION_LIST.filter((action) => action.runs === "host").map((action) => action.name),
    );
    expect(OPS_ACTIONS).toEqual(
      expect.arrayContaining(["release", "rollback", "releases", "status", "patch", "reprovision", "rotate-secrets"]),
    );
    expect(OPS_ACTION_LIST.filter((action) => action.args).map(({ name, args }) => ({ name, args }))).toEqual([
      { name: "release", args: "<ref>" },
      { name: "rollback", args: "[release]" },
      { name: "patch", args: "[version]" },
      { name: "db", args: "[dump]" },
      { name: "run", args: "-- <command…>" },
      { name: "logs", args: "[log]" },
    ]);
  });

  test("--help lists every action with what it does and every option, one line each", () => {
    // Exactly the declared actions, each with its summary.
    const listed = USAGE.slice(USAGE.indexOf("actions:\n") + 9, USAGE.indexOf("\noptions of ")).split("\n");
    expect(listed).toEqual(
      OPS_ACTION_LIST.map(({ name, args, summary }) => `  ${`${name} ${args}`.trim().padEnd(24)}${summary}`),
    );
    for (const option of OPS_ACTION_LIST.flatMap((action) => action.options ?? []))
      expect(USAGE).toContain(`\n  ${option.usage.padEnd(24)}${option.summary}\n`);
    for (const option of [
      "--host",
      "--port",
      "--user",
      "--identity",
      "--known-hosts",
      "--accept-new-host-key",
      "--help",
    ]) {
      expect(USAGE).toMatch(new RegExp(`^  (-h, )?${option} .*\\S$`, "m"));
    }
    expect(() => parseOpsArgs(["--help"])).toThrow(HelpRequested);
    expect(() => parseOpsArgs(["CrmHostStack", "status", "-h"])).toThrow(HelpRequested);
  });

  test("--help says where a plain rollback goes: back, never forward (the ops-faults test runs it)", () => {
    expect(USAGE).toMatch(
      /^ {2}rollback .*default: the good release before the current one, further back each time; never a newer one\)$/m,
    );
  });
});

describe("parseOpsArgs", () => {
  test("reads the stack, the action, its arguments and the options; the key and known hosts also from the environment", () => {
    expect(
      parseOpsArgs(["CrmHostStack", "release", "v2.1", "--host", "203.0.113.25", "--port", "2222", "--user", "admin"], {
        CRM_OPS_SSH_KEY: KEY,
        CRM_OPS_KNOWN_HOSTS: "/ci/known_hosts",
      }),
    ).toEqual({
      stack: "CrmHostStack",
      action: "release",
      args: ["v2.1"],
      host: "203.0.113.25",
      port: 2222,
      user: "admin",
      identity: KEY,
      knownHosts: "/ci/known_hosts",
      acceptNewHostKey: false,
      extra: {},
    });
    expect(parseOpsArgs(["CrmHostStack", "rotate-secrets"], {})).toMatchObject({ action: "rotate-secrets", args: [] });
    expect(
      parseOpsArgs(["S", "rollback", "--identity", "key", "--known-hosts", "kh", "--accept-new-host-key"], {
        CRM_OPS_SSH_KEY: KEY,
      }),
    ).toMatchObject({
      action: "rollback",
      args: [],
      identity: resolve("key"),
      knownHosts: resolve("kh"),
      acceptNewHostKey: true,
      port: 22,
    });
  });

  test("run: the words after -- are the command as given (its options and --help too); the CLI's options come before", () => {
    const command = ["node", "-e", 'console.log("$HOME")', "--help", "it's"];
    expect(parseOpsArgs(["S", "run", "--host", "203.0.113.25", "--", ...command], {})).toMatchObject({
      stack: "S",
      action: "run",
      args: command,
      host: "203.0.113.25",
    });
    expect(parseOpsArgs(["S", "release", "--", "v2"], {})).toMatchObject({ action: "release", args: ["v2"] });
    expect(() => parseOpsArgs(["S", "run", "--help"], {})).toThrow(HelpRequested);
    expect(refusal(["S", "run", "ls"])).toEqual({
      message: "run takes its command after --: npm run ops -- S run -- ls",
      exitCode: 2,
    });
    expect(refusal(["S", "run"])).toEqual({
      message: 'run takes a command after --: npm run ops -- S run -- <command…> (e.g. run -- node -e "…")',
      exitCode: 2,
    });
    expect(refusal(["S", "run", "--"]).exitCode).toBe(2);
  });

  test("refuses a missing or unknown action, an unknown option, arguments the remote shell would read, a bad port or host", () => {
    expect(refusal(["CrmHostStack"])).toEqual({
      message: "usage: npm run ops -- <stack> <action> [args] [options]   (npm run ops -- --help: this text)",
      exitCode: 2,
    });
    // One line: the actions' names, and where the help is.
    expect(refusal(["CrmHostStack", "deploy"])).toEqual({
      message:
        'unknown action "deploy": the actions are release, rollback, patch, reprovision, ' +
        "rotate-secrets, restart, releases, status, db, run, db-setup, logs, backup, restore (npm run ops -- --help)",
      exitCode: 2,
    });
    expect(refusal(["CrmHostStack", "deploy"]).message.split("\n")).toHaveLength(1);
    // release without its ref is refused here, before ssh.
    expect(refusal(["CrmHostStack", "release"])).toEqual({
      message:
        "release takes one git ref (a branch, tag or commit): npm run ops -- CrmHostStack release <ref>; got none",
      exitCode: 2,
    });
    expect(refusal(["CrmHostStack", "release", "a", "b"]).message).toMatch(/^release takes one git ref .*; got "a b"$/);
    expect(refusal(["CrmHostStack", "status", "--verbose"]).message).toBe("unknown option --verbose");
    expect(refusal(["CrmHostStack", "status", "--host"]).message).toBe(
      "--host needs a value (a host name or an IP address)",
    );
    for (const bad of [
      "v2;reboot",
      "$(id)",
      "a b",
      "main'",
      "v1..2",
      "refs/heads/../x",
      "x.lock",
      "x/",
      "x.",
      ".x",
      "a//b",
    ]) {
      expect(refusal(["CrmHostStack", "release", bad]).message).toMatch(
        new RegExp(
          `^the ref "${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}" of release must be a branch, tag or commit`,
        ),
      );
    }
    expect(refusal(["CrmHostStack", "release", "-x"]).message).toBe("unknown option -x");
    expect(refusal(["CrmHostStack", "release", "--", "-x"]).message).toMatch(
      /^the argument "-x" must not start with -/,
    );
    expect(refusal(["CrmHostStack", "patch", "1;2"]).message).toBe(
      'the argument "1;2" is not a git ref, release or version (letters, digits and . _ / - only)',
    );
    expect(refusal(["S", "status", "--port", "0"]).message).toBe(
      '--port must be a port number from 1 to 65535, got "0"',
    );
    expect(refusal(["S", "status", "--host", "a;b"]).message).toBe(
      '--host must be a host name or an IP address, got "a;b"',
    );
  });
});

describe("the everyday actions' command lines", () => {
  test("are listed by --help with their options, and read", () => {
    for (const action of ["logs", "restart", "db", "backup", "restore"])
      expect(USAGE).toMatch(new RegExp(`^  ${action}( |$)`, "m"));
    for (const option of ["--lines", "--since", "--follow", "--output", "--drill", "--snapshot", "--var-file"])
      expect(USAGE).toMatch(new RegExp(`^  ${option} .*\\S$`, "m"));
    expect(parseOpsArgs(["S", "logs", "provisioning", "--lines", "20", "--follow"], {})).toMatchObject({
      action: "logs",
      args: ["provisioning"],
      extra: { lines: "20", follow: "true" },
    });
    expect(parseOpsArgs(["S", "logs", "--since", "2h ago"], {})).toMatchObject({ extra: { since: "2h ago" } });
    expect(parseOpsArgs(["S", "db", "dump", "--output", "crm.sql"], {})).toMatchObject({
      action: "db",
      args: ["dump"],
      extra: { output: resolve("crm.sql") },
    });
    expect(parseOpsArgs(["S", "restore", "--drill", "--snapshot", "snap-0123456789abcdef0"], {})).toMatchObject({
      action: "restore",
      extra: { drill: "true", snapshot: "snap-0123456789abcdef0" },
    });
  });

  test("refuse an option of another action, a bad value or arguments, in one line naming it", () => {
    expect(refusal(["S", "status", "--lines", "5"])).toEqual({
      message: "--lines is an option of logs, not of status",
      exitCode: 2,
    });
    expect(refusal(["S", "db", "--output", "x.sql"]).message).toBe("--output is an option of db dump, not of db");
    expect(refusal(["S", "backup", "--drill"]).message).toBe("--drill is an option of restore, not of backup");
    expect(refusal(["S", "logs", "--lines", "ten"]).message).toBe(
      '--lines must be a number of lines from 1 to 999999, got "ten"',
    );
    expect(refusal(["S", "logs", "--since", "-1h"]).message).toMatch(/^--since must not start with -/);
    expect(refusal(["S", "logs", "--since", "1h; reboot"]).message).toMatch(
      /^--since must be a date .*, got "1h; reboot"$/,
    );
    expect(refusal(["S", "logs", "syslog"]).message).toBe(
      'logs: no log "syslog": the logs are app, provisioning, ops, database',
    );
    // One rule and one message, the stack variable's: 8 or 17 digits, no length between.
    for (const id of ["vol-123", "snap-0123456789", "snap-0123456789abcdef", "snap-0123456789ABCDEF0"]) {
      expect(refusal(["S", "restore", "--snapshot", id]).message).toBe(
        `--snapshot must be ${SNAPSHOT_ID_EXPECTED}, got ${JSON.stringify(id)}`,
      );
    }
    for (const id of ["snap-01234567", "snap-0123456789abcdef0"])
      expect(parseOpsArgs(["S", "restore", "--snapshot", id], {}).extra.snapshot).toBe(id);
    const variable = (
      exampleStackJson() as { variable: Record<string, { validation: { condition: string; error_message: string }[] }> }
    ).variable.data_volume_snapshot_id;
    expect(variable.validation[0].error_message).toContain(SNAPSHOT_ID_EXPECTED);
    expect(variable.validation[0].condition).toContain(SNAPSHOT_ID_SHAPE);
    expect(refusal(["S", "backup", "now"]).message).toBe('backup takes no arguments; got "now"');
  });

  test("paths are read where the user typed them: against INIT_CWD (npm runs scripts in the package's root), else the working directory", () => {
    const argv = [
      "S",
      "restore",
      "--var-file",
      "dev.tfvars",
      "--identity",
      "keys/id",
      "--known-hosts",
      "../known",
      "--host",
      "h",
    ];
    expect(parseOpsArgs(argv, { INIT_CWD: "/home/me/work" })).toMatchObject({
      extra: { "var-file": "/home/me/work/dev.tfvars" },
      identity: "/home/me/work/keys/id",
      knownHosts: "/home/me/known",
    });
    expect(parseOpsArgs(["S", "db", "dump", "--output", "/abs/crm.sql"], { INIT_CWD: "/home/me" }).extra.output).toBe(
      "/abs/crm.sql",
    );
    expect(parseOpsArgs(argv, {}).extra["var-file"]).toBe(resolve("dev.tfvars"));
    // The variables that hold a file or its text: a file where the user is, else the text as it is.
    const where = mkdtempSync(join(tmpdir(), "crm-ops-init-cwd-"));
    try {
      writeFileSync(join(where, "id"), `${KEY}\n`, { mode: 0o600 });
      expect(
        parseOpsArgs(["S", "status"], { INIT_CWD: where, CRM_OPS_SSH_KEY: "id", CRM_OPS_KNOWN_HOSTS: KNOWN }),
      ).toMatchObject({ identity: join(where, "id"), knownHosts: KNOWN });
      expect(parseOpsArgs(["S", "status"], { INIT_CWD: where, CRM_OPS_SSH_KEY: KEY }).identity).toBe(KEY);
    } finally {
      rmSync(where, { recursive: true, force: true });
    }
  });

  test("refuse backup, restore, the database's logs, release, rollback and rotate-secrets on a scale-out stack, in one line, before anything runs", async () => {
    const scaleOut = exampleStackSettings(
      JSON.parse(readFileSync(resolve(ROOT, "examples/scale-out.json"), "utf8")) as Record<string, unknown>,
    );
    expect(scaleOut.provisioning.topology).toBe("scale-out");
    for (const argv of [
      ["S", "backup", "--host", "127.0.0.1"],
      ["S", "restore", "--drill"],
      ["S", "logs", "database", "--host", "127.0.0.1"],
    ]) {
      await expect(runOps(parseOpsArgs(argv, {}), scaleOut, "/nonexistent", "no-such-ssh")).rejects.toThrow(/RDS/);
    }
    // And every refusal the declaration gives a scale-out stack, with its message and exit 2, before ssh (there is none here).
    for (const action of OPS_ACTION_LIST) {
      for (const refusal of (action.refusals ?? []).filter(({ topology }) => topology === "scale-out")) {
        const argv = [
          "S",
          action.name,
          ...(refusal.argument ? [refusal.argument] : action.name === "release" ? ["main"] : []),
          "--host",
          "127.0.0.1",
        ];
        await expect(runOps(parseOpsArgs(argv, {}), scaleOut, "/nonexistent", "no-such-ssh")).rejects.toMatchObject({
          message: refusal.message,
          exitCode: 2,
        });
      }
    }
    expect(
      OPS_ACTION_LIST.filter(({ refusals }) => refusals?.some(({ topology }) => topology === "scale-out")).map(
        ({ name }) => name,
      ),
    ).toEqual(["release", "rollback", "rotate-secrets", "logs", "backup", "restore"]);
  });
});

describe("stackSettings", () => {
  test("finds the stack among the environments, or names the ones there are", () => {
    const environments = [exampleStackSettings(), exampleStackSettings({ stackName: "CrmHost-prod" })];
    expect(stackSettings("CrmHost-prod", environments).stackName).toBe("CrmHost-prod");
    expect(() => stackSettings("Nope", environments)).toThrow(
      'no stack "Nope" in the settings (CRM_SETTINGS): the stacks are CrmHostStack, CrmHost-prod',
    );
  });
});

describe("the ssh command line and its files", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-ops-test-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("checks host keys strictly, runs the settings' ops command through sudo -n, and holds no key", () => {
    const request = parseOpsArgs(["CrmHostStack", "release", "v2"], { CRM_OPS_SSH_KEY: KEY });
    const files = sshFiles(request, () => dir);
    const args = sshArguments(request, {
      host: "203.0.113.25",
      user: "ec2-user",
      command: "/usr/local/sbin/crm-ops",
      ...files,
    });
    expect(args).toEqual([
      "-o",
      "BatchMode=yes",
      "-o",
      "ConnectTimeout=15",
      "-o",
      "ServerAliveInterval=15",
      "-o",
      "ServerAliveCountMax=4",
      "-o",
      "StrictHostKeyChecking=yes",
      "-o",
      `IdentityFile="${join(dir, "key")}"`,
      "-o",
      "IdentitiesOnly=yes",
      "-l",
      "ec2-user",
      "-p",
      "22",
      "--",
      "203.0.113.25",
      "sudo",
      "-n",
      "/usr/local/sbin/crm-ops",
      "release",
      "v2",
    ]);
    expect(args.join(" ")).not.toContain("secretkeymaterial");
    const tofu = parseOpsArgs(["S", "status", "--accept-new-host-key", "--known-hosts", join(dir, "kh")]);
    expect(sshArguments(tofu, { host: "h", user: "u", command: "/c", knownHostsFile: join(dir, "kh") })).toEqual(
      expect.arrayContaining(["StrictHostKeyChecking=accept-new", `UserKnownHostsFile="${join(dir, "kh")}"`]),
    );
  });

  test("run's command reaches the remote shell word for word: a plain word as it is, any other quoted", () => {
    const command = ["node", "-e", "console.log(`$HOME` + '\\n'); \"x\"", "a b", "", "ü\nline"];
    const args = sshArguments(parseOpsArgs(["S", "run", "--", ...command], {}), {
      host: "h",
      user: "u",
      command: "/usr/local/sbin/crm-ops",
    });
    const remote = args.slice(args.indexOf("h") + 1).join(" ");
    expect(remote.startsWith("sudo -n /usr/local/sbin/crm-ops run node ")).toBe(true);
    // The remote shell (bash, as sshd runs the login shell) reads back the words.
    const words = execFileSync(
      "bash",
      ["-c", `set -- ${remote.replace(/^sudo -n \S+ run /, "")}; printf '%s\\0' "$@"`],
      { encoding: "utf8" },
    );
    expect(words.split("\0").slice(0, -1)).toEqual(command);
  });

  test("writes a key or known_hosts lines given as text to private files, keeps files as they are, refuses anything else", () => {
    const keyFile = join(dir, "id");
    writeFileSync(keyFile, KEY, { mode: 0o600 });
    let made = 0;
    const own = join(dir, "own");
    const make = () => {
      made++;
      mkdirSync(own, { recursive: true, mode: 0o700 });
      return own;
    };
    expect(sshFiles(parseOpsArgs(["S", "status", "--identity", keyFile]), make)).toEqual({
      keyFile,
      knownHostsFile: undefined,
    });
    expect(made).toBe(0);
    const written = sshFiles(parseOpsArgs(["S", "status"], { CRM_OPS_SSH_KEY: KEY, CRM_OPS_KNOWN_HOSTS: KNOWN }), make);
    expect(written).toEqual({ keyFile: join(own, "key"), knownHostsFile: join(own, "known_hosts") });
    expect(statSync(join(own, "key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(own, "known_hosts")).mode & 0o777).toBe(0o600);
    expect(() => sshFiles(parseOpsArgs(["S", "status", "--identity", "/no/such/key"]), make)).toThrow(
      "the key (--identity or CRM_OPS_SSH_KEY) is neither a file nor a private key",
    );
    expect(() => sshFiles(parseOpsArgs(["S", "status"], { CRM_OPS_KNOWN_HOSTS: "not a host key" }), make)).toThrow(
      "the known hosts (--known-hosts or CRM_OPS_KNOWN_HOSTS) is neither a file nor known_hosts lines",
    );
  });

  test("a host that does not answer: ssh's exit 255, and the key given as text is gone afterwards", async () => {
    const port = await closedPort();
    const before = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    const errors: string[] = [];
    const spy = jest.spyOn(console, "error").mockImplementation((line: string) => {
      errors.push(line);
    });
    try {
      const request = parseOpsArgs(["CrmHostStack", "status", "--host", "127.0.0.1", "--port", String(port)], {
        CRM_OPS_SSH_KEY: KEY,
      });
      expect(await runOps(request, exampleStackSettings())).toBe(255);
    } finally {
      spy.mockRestore();
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    expect(errors).toEqual([
      `ops: could not reach ec2-user@127.0.0.1 on port ${port} over ssh (exit 255): see ssh's message above`,
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a missing prerequisite names its fix: no Terraform to read the outputs, no ssh", async () => {
    expect(() => hostFromOutputs(dir, "CrmServer", join(dir, "terraform"))).toThrow(
      `Terraform (${join(dir, "terraform")}) is not installed: install Terraform 1.10 or later, or run \`npm run tools\``,
    );
    await expect(
      runOps(
        parseOpsArgs(["CrmHostStack", "status", "--host", "127.0.0.1"], {}),
        exampleStackSettings(),
        dir,
        "no-such-ssh",
      ),
    ).rejects.toThrow(
      "ssh is not installed (no no-such-ssh on PATH): install the OpenSSH client (npm run doctor checks every prerequisite)",
    );
  });

  test("npm run ops runs scripts/ops.ts: help exits 0, a usage error 2, an unknown stack 1, an unreachable host 255", async () => {
    const port = await closedPort();
    const npm = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
        execFile(
          "npm",
          ["run", "--silent", "ops", "--", ...args],
          { cwd: ROOT, timeout: 60_000, env: { ...process.env, CRM_SETTINGS: "", ...env } },
          (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code) : 0, stdout, stderr }),
        );
      });
    const [help, usage, unknown, unreachable, rotate, scaleOut] = await Promise.all([
      npm(["--help"]),
      npm(["CrmHostStack"]),
      npm(["NoSuchStack", "status"]),
      npm(["CrmHostStack", "status", "--host", "127.0.0.1", "--port", String(port)]),
      npm(["CrmHostStack", "rotate-secrets", "--host", "127.0.0.1", "--port", String(port)]),
      npm(["CrmHost-scale", "status"], { CRM_SETTINGS: resolve(ROOT, "examples/scale-out.json") }),
    ]);
    expect(help).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: "" });
    // rotate-secrets is accepted: the command went as far as ssh.
    expect(rotate.code).toBe(255);
    expect(rotate.stderr).toContain(`ops: could not reach ec2-user@127.0.0.1 on port ${port} over ssh (exit 255)`);
    expect(scaleOut.code).toBe(2);
    expect(scaleOut.stderr).toContain(
      'ops: the stack CrmHost-scale has "topology": "scale-out": its hosts come and go, so name one with --host <address>',
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("ops: usage: npm run ops -- <stack> <action>");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'ops: no stack "NoSuchStack" in the settings (CRM_SETTINGS): the stacks are CrmHostStack',
    );
    expect(unreachable.code).toBe(255);
    expect(unreachable.stderr).toContain(`ops: could not reach ec2-user@127.0.0.1 on port ${port} over ssh (exit 255)`);
  });
});

describeWithEngine("hostFromOutputs, with Terraform", (engine) => {
  let workspace: EngineWorkspace;
  afterEach(() => workspace?.remove());

  test("reads <instanceName>PublicIP from the stack's state", async () => {
    workspace = new EngineWorkspace(engine, {
      output: { CrmServerPublicIP: { value: "203.0.113.25" }, CrmServerPublicDns: { value: "ec2.example" } },
    });
    await workspace.init();
    expect((await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color"])).code).toBe(0);
    expect(hostFromOutputs(workspace.dir, "CrmServer", engine)).toBe("203.0.113.25");
  });

  test("a stack not deployed, or not synthesized, or a Terraform that fails: a message that says to deploy or give --host", async () => {
    workspace = new EngineWorkspace(engine, { output: { Other: { value: "x" } } });
    expect(() => hostFromOutputs(workspace.dir, "CrmServer", engine)).toThrow(
      "the stack has no output CrmServerPublicIP yet: deploy it first, or give --host",
    );
    await workspace.init();
    expect((await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color"])).code).toBe(0);
    expect(() => hostFromOutputs(workspace.dir, "CrmServer", engine)).toThrow(
      "the stack has no output CrmServerPublicIP yet",
    );
    expect(() => hostFromOutputs(join(workspace.dir, "missing"), "CrmServer", engine)).toThrow(
      `there is no ${join(workspace.dir, "missing")} (run npx cdktf synth): deploy it first, or give --host`,
    );
    writeFileSync(join(workspace.dir, "terraform.tfstate"), "{ not a state");
    // Terraform's error, not the warning it prints first about a CLI configuration file it cannot open.
    const saved = process.env.TF_CLI_CONFIG_FILE;
    process.env.TF_CLI_CONFIG_FILE = join(workspace.dir, "missing.tfrc");
    try {
      expect(() => hostFromOutputs(workspace.dir, "CrmServer", engine)).toThrow(
        `terraform output failed in ${workspace.dir} (Error: Unsupported state file format): deploy it first, or give --host`,
      );
    } finally {
      if (saved === undefined) delete process.env.TF_CLI_CONFIG_FILE;
      else process.env.TF_CLI_CONFIG_FILE = saved;
    }
  });
});

describeWithEngine("hostFromOutputs, the state in S3 (moto) without credentials", (engine) => {
  const motoServer = findMotoServer();
  let moto: MotoServer | undefined;
  let workspace: EngineWorkspace;
  const credentials = {
    AWS_ACCESS_KEY_ID: "moto",
    AWS_SECRET_ACCESS_KEY: "moto",
    AWS_SESSION_TOKEN: "",
    AWS_PROFILE: "",
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
    AWS_EC2_METADATA_DISABLED: "true",
  };
  afterAll(async () => {
    workspace?.remove();
    await moto?.stop();
  }, TEARDOWN_MS);

  (motoServer ? test : test.skip)(
    "not initialized (a fresh synth): names terraform init; no credentials: names them and how to check them",
    async () => {
      moto = await MotoServer.start(motoServer!);
      expect((await moto.http("PUT", "/crm-ops-state")).status).toBe(200);
      workspace = new EngineWorkspace(engine, {
        terraform: {
          backend: {
            s3: {
              bucket: "crm-ops-state",
              key: "ops/terraform.tfstate",
              region: "us-east-1",
              use_path_style: true,
              endpoints: { s3: moto.endpoint },
              skip_credentials_validation: true,
              skip_requesting_account_id: true,
              skip_metadata_api_check: true,
            },
          },
        },
        output: { CrmServerPublicIP: { value: "203.0.113.25" } },
      });
      const fresh = { ...process.env };
      Object.assign(process.env, { ...credentials, TF_CLI_CONFIG_FILE: join(workspace.dir, "cli.tfrc") });
      try {
        expect(() => hostFromOutputs(workspace.dir, "CrmServer", engine)).toThrow(
          new RegExp(
            `^terraform output in .* needs its backend initialized \\(.*\\): run \`terraform -chdir=${workspace.dir} init\`, or give --host$`,
          ),
        );
      } finally {
        for (const key of Object.keys(process.env)) if (!(key in fresh)) delete process.env[key];
        Object.assign(process.env, fresh);
      }
      expect((await workspace.run(["init", "-input=false", "-no-color"], credentials)).code).toBe(0);
      expect((await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color"], credentials)).code).toBe(0);
      const saved = { ...process.env };
      Object.assign(process.env, {
        ...credentials,
        AWS_ACCESS_KEY_ID: "",
        AWS_SECRET_ACCESS_KEY: "",
        TF_CLI_CONFIG_FILE: join(workspace.dir, "cli.tfrc"),
      });
      try {
        expect(() => hostFromOutputs(workspace.dir, "CrmServer", engine)).toThrow(
          /^terraform output failed in .*; reading the state in S3 needs AWS credentials: check them with `aws sts get-caller-identity` \(npm run doctor\): deploy it first, or give --host$/,
        );
        Object.assign(process.env, credentials);
        expect(hostFromOutputs(workspace.dir, "CrmServer", engine)).toBe("203.0.113.25");
      } finally {
        for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
        Object.assign(process.env, saved);
      }
    },
  );
});

describe("npm run ops backup and restore, EC2 through the SDK's usual chain (moto's server)", () => {
  const motoServer = findMotoServer();
  let moto: MotoServer | undefined;
  afterAll(async () => {
    await moto?.stop();
  }, TEARDOWN_MS);

  (motoServer ? test : test.skip)(
    "name what is missing in one line, before any ssh; and AWS's own refusals too",
    async () => {
      moto = await MotoServer.start(motoServer!);
      const aws = isolatedMotoEnvironment(moto.endpoint, "us-east-1");
      const npm = (args: string[], env: NodeJS.ProcessEnv) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
          execFile(
            "npm",
            ["run", "--silent", "ops", "--", "CrmHostStack", ...args],
            { cwd: ROOT, timeout: 60_000, env: { ...process.env, CRM_SETTINGS: "", ...env } },
            (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code) : 0, stdout, stderr }),
          );
        });
      const host = ["--host", "127.0.0.1", "--port", String(await closedPort())];
      const [backup, drill, guide, unreachable] = await Promise.all([
        npm(["backup", ...host], aws),
        npm(["restore", "--drill", ...host], aws),
        npm(["restore"], aws),
        npm(["backup", ...host], {
          ...aws,
          AWS_ENDPOINT_URL: `http://127.0.0.1:${await closedPort()}`,
          AWS_MAX_ATTEMPTS: "1",
        }),
      ]);
      expect(backup).toMatchObject({ code: 1, stdout: "" });
      expect(backup.stderr).toContain(
        "ops: no volumes tagged Backup=CrmHostStack/CrmServer/data in us-east-1: is the stack deployed there, with these credentials' account?",
      );
      expect(drill.code).toBe(1);
      expect(drill.stderr).toContain("ops: no volumes tagged Backup=CrmHostStack/CrmServer/data in us-east-1");
      expect(guide.code).toBe(1);
      expect(guide.stderr).toContain(
        "ops: no completed snapshot tagged Stack=CrmHostStack, Instance=CrmServer in us-east-1",
      );
      expect(unreachable.code).toBe(1);
      expect(
        unreachable.stderr
          .trim()
          .split("\n")
          .filter((line) => line.startsWith("ops: ")),
      ).toHaveLength(1);
    },
  );
});

describe("npm run ops db-setup: RDS's master secret through the SDK's usual chain (moto's server), to ssh's standard input only", () => {
  const motoServer = findMotoServer();
  let moto: MotoServer | undefined;
  let dir: string | undefined;
  afterAll(async () => {
    await moto?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, TEARDOWN_MS);

  (motoServer ? test : test.skip)(
    "reads the secret with the user's credentials and hands it to the host's db-setup on stdin; refused on a single host",
    async () => {
      moto = await MotoServer.start(motoServer!);
      dir = mkdtempSync(join(tmpdir(), "crm-ops-db-setup-"));
      const aws = isolatedMotoEnvironment(moto.endpoint, "us-east-1");
      const secret = JSON.stringify({ username: "admin", password: `Master '"$(id) ${Date.now()}` });
      const client = new SecretsManagerClient({
        region: "us-east-1",
        endpoint: moto.endpoint,
        credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
      });
      const arn = (
        await client.send(new CreateSecretCommand({ Name: "rds!db-0123456789abcdef", SecretString: secret }))
      ).ARN!;
      client.destroy();
      // An ssh that records its arguments and its standard input, as the host's sudo would pass them on; to the ops tool's
      // installer, which the CLI runs first, it answers as a host whose tool is the CLI's (its version, the first argument).
      const bin = join(dir, "bin");
      mkdirSync(bin);
      writeFileSync(
        join(bin, "ssh"),
        `#!/bin/bash
if [[ \${@: -1} == *" 'ops-install' '"* ]]; then
  cat >${join(dir, "tool")}; v=\${@: -1}; v=\${v#*" 'ops-install' '"}; echo "\${v%%"'"*}"; exit 0
fi
printf '%s\\n' "$@" >${join(dir, "argv")}\ncat >${join(dir, "stdin")}\n`,
        { mode: 0o755 },
      );
      const npm = (args: string[], settingsFile: string) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
          execFile(
            "npm",
            ["run", "--silent", "ops", "--", ...args],
            {
              cwd: ROOT,
              timeout: 60_000,
              env: {
                ...process.env,
                ...aws,
                PATH: `${bin}:${process.env.PATH}`,
                CRM_SETTINGS: resolve(ROOT, settingsFile),
              },
            },
            (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code) : 0, stdout, stderr }),
          );
        });

      const done = await npm(
        ["CrmHost-scale", "db-setup", "--host", "127.0.0.1", "--master-secret", arn],
        "examples/scale-out.json",
      );
      expect(done.code).toBe(0);
      expect(done.stderr).not.toMatch(/^ops: /m);
      expect(readFileSync(join(dir, "stdin"), "utf8")).toBe(secret);
      const argv = readFileSync(join(dir, "argv"), "utf8").trim().split("\n");
      expect(argv.slice(-4)).toEqual(["sudo", "-n", "/usr/local/sbin/crm-ops", "db-setup"]);
      expect(argv.join(" ")).not.toContain("Master");
      // The ops tool went first, whole, to its installer.
      expect(readFileSync(join(dir, "tool"), "utf8")).toBe(renderOpsTool().text);

      const missing = await npm(
        ["CrmHost-scale", "db-setup", "--host", "127.0.0.1", "--master-secret", `${arn.slice(0, -6)}XXXXXX`],
        "examples/scale-out.json",
      );
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^ops: AWS: ResourceNotFoundException: /m);
      // A secret of another Region or partition: refused in one line before Secrets Manager (or ssh) is reached.
      rmSync(join(dir, "stdin"), { force: true });
      for (const other of [arn.replace(":us-east-1:", ":eu-west-1:"), arn.replace(/^arn:aws:/, "arn:aws-cn:")]) {
        const refused = await npm(
          ["CrmHost-scale", "db-setup", "--host", "127.0.0.1", "--master-secret", other],
          "examples/scale-out.json",
        );
        expect(refused.code).toBe(2);
        expect(
          refused.stderr
            .trim()
            .split("\n")
            .filter((line) => line.startsWith("ops: ")),
        ).toEqual([
          `ops: --master-secret ${other} is in ${other.split(":")[1]}:${other.split(":")[3]}; expected a secret of the stack's Region, arn:aws:secretsmanager:us-east-1:…`,
        ]);
      }
      expect(existsSync(join(dir, "stdin"))).toBe(false);
      const single = await npm(["CrmHost-dev", "db-setup", "--host", "127.0.0.1"], "examples/dev.json");
      expect(single.code).toBe(2);
      expect(single.stderr).toMatch(
        /^ops: db-setup is the scale-out topology's: the single host's database is its own, set up by its first boot$/m,
      );
      expect(refusal(["S", "db-setup", "--master-secret", "rds!db-1"]).message).toMatch(
        /^--master-secret must be a Secrets Manager secret's ARN/,
      );
      expect(refusal(["S", "status", "--master-secret", arn]).message).toBe(
        "--master-secret is an option of db-setup, not of status",
      );
    },
  );
});

describeWithTools(
  "logs --since, held against the real journalctl (systemd's parse_timestamp, as on the host)",
  existsSync("/usr/bin/journalctl") || existsSync("/bin/journalctl") ? [] : ["journalctl"],
  () => {
    /** Whether journalctl takes the value: it exits non-zero on a --since it cannot read. */
    const journalctl = (value: string) =>
      spawnSync("journalctl", [`--since=${value}`, "-n", "0", "--no-pager"], { timeout: 10_000 }).status === 0;
    const GOOD = [
      "today",
      "yesterday",
      "now",
      "tomorrow",
      "2026-05-01",
      "2026-05-01 14:00",
      "2026-05-01 14:00:30",
      "2024-02-29",
      "1970-01-01",
      "9999-12-30",
      "2026-05-01 23:59:59",
      "2026-05-01 00:00",
      "14:00",
      "00:00",
      "23:59",
      "23:59:59",
      "2h ago",
      "2 h ago",
      "30 min ago",
      "1 day ago",
      "3 weeks ago",
      "5s ago",
      "5 sec ago",
      "1 hr ago",
      "10m ago",
      "1 month ago",
      "1y ago",
      "0 days ago",
      "2 hours ago",
      "1 minutes ago",
      // strptime's leniency, which journalctl keeps: any day up to 31 (carried into the next month), a leap second.
      "2026-02-30",
      "2026-04-31",
      "2023-02-29",
      "2026-05-01 23:59:60",
    ];
    const BAD = [
      "2026-05-01T14:00",
      "2026-05-01T14:00:00",
      "2026-02-32",
      "2026-13-01",
      "2026-00-10",
      "2026-01-00",
      "2026-05-01 24:00",
      "2026-05-01 23:60",
      "25:00",
      "24:00",
      "1969-12-31",
      "9999-12-31",
      "10000-01-01",
      "0000-01-01",
      "99999 days ago",
      "2hago",
      "ago",
      "5 fortnights ago",
      "TODAY",
      "Today",
      "1 HOUR ago",
      "2026-05-01 14",
      "2026-05-01 ",
      "1h; reboot",
      "$(reboot)",
      "2026-05-01 -1:00",
    ];

    test("the CLI takes a value exactly when journalctl does, over a corpus of good and bad values", () => {
      const disagree = [...GOOD, ...BAD].filter((value) => (refusalOf(value) === undefined) !== journalctl(value));
      expect(disagree).toEqual([]);
      expect(GOOD.filter((value) => !journalctl(value))).toEqual([]);
      expect(BAD.filter((value) => journalctl(value))).toEqual([]);
    });

    test("forms journalctl also reads that the CLI does not offer are refused, naming the forms it takes", () => {
      // Two-digit years, one-digit fields, an epoch, a zone, fractions of seconds: journalctl reads them; --help and the page name the others.
      for (const value of [
        "26-05-01",
        "2026-5-1",
        "9:00",
        "@0",
        "2026-05-01 UTC",
        "2026-05-01 14:00:00.5",
        "1h 30min ago",
      ]) {
        expect(journalctl(value)).toBe(true);
        expect(refusalOf(value)).toBe(`--since must be ${SINCE_EXPECTED}, got ${JSON.stringify(value)}`);
      }
    });

    function refusalOf(value: string): string | undefined {
      try {
        parseOpsArgs(["S", "logs", "--since", value], {});
        return undefined;
      } catch (error) {
        if (error instanceof UserError) return error.message;
        throw error;
      }
    }
  },
);

describe("npm run ops's own process: checks before ssh, and signals", () => {
  let dir: string;
  let bin: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-ops-process-"));
    bin = join(dir, "bin");
    mkdirSync(bin);
    // An ssh that says it ran and who ran it (the command's own node process), then hangs as a host whose dump
    // takes long (the test ends it by its signal).
    writeFileSync(
      join(bin, "ssh"),
      `#!/bin/bash\necho "$PPID" >${join(dir, "ssh-ran")}.new\nmv ${join(dir, "ssh-ran")}.new ${join(dir, "ssh-ran")}\n` +
        'echo "-- a dump starts"\nexec sleep 60\n',
      { mode: 0o755 },
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  /** The environment of a run: the ssh above first on PATH; no INIT_CWD of this test's own npm (npm sets the run's). */
  const env = (extra: NodeJS.ProcessEnv = {}) => {
    const result: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      CRM_SETTINGS: "",
      ...extra,
    };
    delete result.INIT_CWD;
    return result;
  };
  const npm = (args: string[], cwd: string) =>
    new Promise<{ code: number; stderr: string }>((resolveRun) => {
      execFile(
        "npm",
        ["run", "--silent", "ops", "--", ...args],
        { cwd, timeout: 60_000, env: env() },
        (error, _stdout, stderr) => resolveRun({ code: error ? Number(error.code) : 0, stderr }),
      );
    });

  test("db dump --output to a directory, or into a missing one (read from where npm was run), is refused in one line before ssh", async () => {
    const [missing, directory] = await Promise.all([
      npm(["CrmHostStack", "db", "dump", "--output", "no-such-dir/crm.sql", "--host", "127.0.0.1"], join(ROOT, "docs")),
      npm(["CrmHostStack", "db", "dump", "--output", dir, "--host", "127.0.0.1"], ROOT),
    ]);
    expect(missing).toEqual({
      code: 2,
      stderr:
        `ops: --output "${join(ROOT, "docs", "no-such-dir", "crm.sql")}": the directory ${join(ROOT, "docs", "no-such-dir")} ` +
        "is not there; expected a file in an existing directory\n",
    });
    expect(directory).toEqual({
      code: 2,
      stderr: `ops: --output "${dir}" is a directory or another non-file; expected a file (new or replaced)\n`,
    });
    expect(existsSync(join(dir, "ssh-ran"))).toBe(false);
  });

  test.each(["SIGHUP", "SIGQUIT", "SIGTERM", "SIGINT"] as NodeJS.Signals[])(
    "%s to npm run ops's whole process group mid-dump (as a closed terminal, Ctrl-C or Ctrl-\\ send it) leaves no partial dump and no key file",
    async (signal) => {
      const run = join(dir, signal);
      const temporary = join(run, "tmp");
      mkdirSync(temporary, { recursive: true });
      const marker = join(dir, "ssh-ran");
      rmSync(marker, { force: true });
      const child = spawn(
        "npm",
        [
          "run",
          "--silent",
          "ops",
          "--",
          "CrmHostStack",
          "db",
          "dump",
          "--output",
          join(run, "crm.sql"),
          "--host",
          "127.0.0.1",
        ],
        { cwd: ROOT, detached: true, stdio: "ignore", env: env({ TMPDIR: temporary, CRM_OPS_SSH_KEY: KEY }) },
      );
      const running = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      try {
        // Bounded: the dump is running once ssh started.
        for (let waited = 0; !existsSync(marker); waited += 100) {
          if (waited > 60_000) throw new Error("ssh did not start within 60 s");
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(readdirSync(run).filter((name) => name.startsWith("crm.sql.partial-"))).toHaveLength(1);
        expect(readdirSync(temporary).filter((name) => name.startsWith("crm-ops-"))).toHaveLength(1);
        const ops = Number(readFileSync(marker, "utf8"));
        process.kill(-child.pid!, signal);
        // npm may end before the command it ran: wait for that one, bounded.
        for (let waited = 0; running(ops); waited += 100) {
          if (waited > 30_000) throw new Error("still running 30 s after the signal");
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          /* gone */
        }
      }
      expect(readdirSync(run).filter((name) => name !== "tmp")).toEqual([]);
      // tsx keeps its cache there too (tsx-<uid>).
      expect(readdirSync(temporary).filter((name) => name.startsWith("crm-ops-"))).toEqual([]);
    },
  );
});
