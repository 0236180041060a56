/**
 * `npm run secrets -- <stack> set|rotate|check`, run as the operator runs it, against moto's server on
 * loopback (AWS_ENDPOINT_URL). A watch of /proc reads every process's arguments and environment while
 * `set` runs: no value is ever in them.
 */
import { GetParameterCommand, ListTagsForResourceCommand, SSMClient } from "@aws-sdk/client-ssm";
import { spawn } from "child_process";
import { randomBytes } from "crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { SECRET_PARAMETER_TAG, secretParameterNames } from "../../constructs/secret-parameters";
import exampleSettings from "../../settings/example.json";
import { findMotoServer, MotoServer } from "../support/moto-server";
import { describeWithTools } from "../support/required-tools";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(120_000);

const STACK = "CrmHost-secrets-test";
const NAMES = secretParameterNames(STACK);
const ROOT = resolve(__dirname, "../..");

/** Everything the machine's processes show in /proc: arguments and environment, NUL-separated. */
function processTexts(): string[] {
  const texts: string[] = [];
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    for (const file of ["cmdline", "environ"]) {
      try {
        texts.push(readFileSync(`/proc/${pid}/${file}`, "latin1"));
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return texts;
}

interface Watched {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Every distinct argument list and environment seen in /proc while the command ran. */
  readonly seen: Set<string>;
}

/** Runs a command with `input` on stdin, reading /proc over and over until it exits (bounded). */
async function watched(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string,
  timeoutMs = 60_000,
): Promise<Watched> {
  const child = spawn(file, args, { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdin.end(input);
  const exited = new Promise<number | null>((done) => child.on("close", done));
  let finished = false;
  void exited.then(() => (finished = true));
  const seen = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  while (!finished) {
    if (Date.now() > deadline) child.kill("SIGKILL");
    for (const text of processTexts()) seen.add(text);
    await new Promise((next) => setImmediate(next));
  }
  return { code: await exited, stdout, stderr, seen };
}

describeWithTools("npm run secrets, against moto's server", findMotoServer() ? [] : ["moto_server"], () => {
  let moto: MotoServer;
  let ssm: SSMClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const values = {
    root: `Root ${randomBytes(8).toString("hex")} '"$(id)`,
    app: `app-${randomBytes(8).toString("hex")}`,
    token: `ghp_${randomBytes(12).toString("hex")}`,
  };

  const secrets = (args: string[], input = "") =>
    watched("npm", ["run", "-s", "secrets", "--", STACK, ...args], env, input);
  const valueOf = async (name: string) =>
    (await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter?.Value;

  beforeAll(async () => {
    moto = await MotoServer.start(findMotoServer()!);
    ssm = new SSMClient({
      region: "eu-west-1",
      endpoint: moto.endpoint,
      credentials: { accessKeyId: "moto", secretAccessKey: "moto" },
    });
    dir = mkdtempSync(join(tmpdir(), "crm-secrets-"));
    const settings = join(dir, "stack.json");
    writeFileSync(
      settings,
      JSON.stringify({
        ...exampleSettings,
        $schema: undefined,
        stackName: STACK,
        region: "eu-west-1",
        secrets: "parameter-store",
      }),
    );
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      CRM_SETTINGS: settings,
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: "moto",
      AWS_SECRET_ACCESS_KEY: "moto",
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    };
  });

  afterAll(async () => {
    ssm?.destroy();
    await moto?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, TEARDOWN_MS);

  it("check finds nothing before set, and exits 1 naming the missing parameters", async () => {
    const result = await secrets(["check"]);
    expect(result.code).toBe(1);
    expect(result.stdout.trim().split("\n")).toEqual(Object.values(NAMES).map((name) => `MISSING ${name}`));
  });

  it("set puts the three values from standard input as tagged SecureStrings, and no value is ever in a process's arguments or environment", async () => {
    const result = await secrets(["set"], `${values.root}\n${values.app}\n${values.token}\n`);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await valueOf(NAMES.dbRootPassword)).toBe(values.root);
    expect(await valueOf(NAMES.appDbPassword)).toBe(values.app);
    expect(await valueOf(NAMES.sourceHostToken)).toBe(values.token);
    const tags = await ssm.send(
      new ListTagsForResourceCommand({ ResourceType: "Parameter", ResourceId: NAMES.appDbPassword }),
    );
    expect(tags.TagList).toEqual([{ Key: SECRET_PARAMETER_TAG, Value: STACK }]);
    // The watch saw the command itself (so it watched the right moment), and never a value.
    const seen = [...result.seen];
    expect(seen.some((text) => text.includes("scripts/secrets.ts") && text.includes(STACK))).toBe(true);
    expect(Object.values(values).filter((value) => seen.some((text) => text.includes(value)))).toEqual([]);
    expect(Object.values(values).filter((value) => result.stdout.includes(value))).toEqual([]);
  });

  it("the watch catches a value in a process's arguments (a control: the test above can fail)", async () => {
    // Two commands, so that bash stays (with one, it execs sleep, whose arguments hold no value).
    const result = await watched("bash", ["-c", "sleep 0.5; true", "leak", values.token], env, "");
    expect([...result.seen].some((text) => text.includes(values.token))).toBe(true);
  });

  it("check then reports the three, without their values", async () => {
    const result = await secrets(["check"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^ok +${NAMES.dbRootPassword}: SecureString, key alias/aws/ssm, version 1`, "m"),
    );
    expect(Object.values(values).filter((value) => result.stdout.includes(value))).toEqual([]);
  });

  it("rotate makes new database passwords, never shown, and leaves the token", async () => {
    const result = await secrets(["rotate"]);
    expect(result.code).toBe(0);
    const [root, app] = [await valueOf(NAMES.dbRootPassword), await valueOf(NAMES.appDbPassword)];
    expect(root).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(app).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect([root, app]).not.toContain(values.root);
    expect(root).not.toBe(app);
    expect(result.stdout).not.toContain(root);
    expect(result.stdout).not.toContain(app);
    expect(result.stdout).toContain(`npm run ops -- ${STACK} rotate-secrets`);
    expect(await valueOf(NAMES.sourceHostToken)).toBe(values.token);
  });

  it.each([
    [
      ["set", "app-db-password"],
      "has # and ' \" ` all three\n",
      2,
      /\/app-db-password: app-db-password must be a value the app's \.env file can carry/,
    ],
    [["set", "db-root-password"], "tab\there\n", 2, /db-root-password must be 1 to 256 characters/],
    [["set"], "only one line\n", 2, /standard input holds 1 line\(s\); expected 3/],
    [
      ["set"],
      "",
      2,
      /^standard input is empty; expected 3 line\(s\), one for each of db-root-password, app-db-password, source-host-token \(or run it on a terminal/,
    ],
    [["set", "password=hunter2"], "", 2, /unknown secret "password=hunter2": expected one of/],
    [["get"], "", 2, /unknown command "get"/],
  ])("refuses %j with one line and puts nothing", async (args, input, code, message) => {
    const before = await valueOf(NAMES.appDbPassword);
    const result = await secrets(args, input);
    expect(result.code).toBe(code);
    expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(message)]);
    expect(await valueOf(NAMES.appDbPassword)).toBe(before);
  });

  it("names the stacks it knows when the settings define no such stack", async () => {
    const result = await watched("npm", ["run", "-s", "secrets", "--", "NoSuchStack", "check"], env, "");
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(
      `no settings file of CRM_SETTINGS defines the stack "NoSuchStack" (it defines ${STACK})`,
    );
  });

  it.each([["set"], ["rotate"]])(
    '%s on a stack whose settings say "secrets": "user-data" is refused in one line before AWS, and puts nothing',
    async (command) => {
      const stack = "CrmHost-secrets-user-data";
      const settings = join(dir, "user-data.json");
      writeFileSync(
        settings,
        JSON.stringify({
          ...exampleSettings,
          $schema: undefined,
          stackName: stack,
          region: "eu-west-1",
          secrets: "user-data",
        }),
      );
      const result = await watched(
        "npm",
        ["run", "-s", "secrets", "--", stack, command],
        { ...env, CRM_SETTINGS: settings },
        `${values.root}\n${values.app}\n${values.token}\n`,
      );
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toEqual([
        `the settings of ${stack} say "secrets": "user-data", so the stack reads no parameter; ` +
          'set "secrets": "parameter-store" in its settings file first (docs/secrets.md, Moving a running stack to Parameter Store); nothing was put',
      ]);
      for (const name of Object.values(secretParameterNames(stack)))
        await expect(valueOf(name)).rejects.toThrow(/not found/);
    },
  );

  it("for a scale-out stack, knows no database root password: set and check take the other two, and naming it is refused", async () => {
    const stack = "CrmHost-secrets-scale";
    const names = secretParameterNames(stack);
    const settings = join(dir, "scale-out.json");
    writeFileSync(
      settings,
      JSON.stringify({
        ...exampleSettings,
        $schema: undefined,
        stackName: stack,
        region: "eu-west-1",
        secrets: "parameter-store",
        topology: "scale-out",
      }),
    );
    const scaleOut = (args: string[], input = "") =>
      watched("npm", ["run", "-s", "secrets", "--", stack, ...args], { ...env, CRM_SETTINGS: settings }, input);
    const refused = await scaleOut(["set", "db-root-password"], "x\n");
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toMatch(
      /^db-root-password: the stack CrmHost-secrets-scale has "topology": "scale-out", .*nothing was put$/,
    );
    const set = await scaleOut(["set"], `${values.app}\n${values.token}\n`);
    expect(set.code).toBe(0);
    expect([await valueOf(names.appDbPassword), await valueOf(names.sourceHostToken)]).toEqual([
      values.app,
      values.token,
    ]);
    await expect(valueOf(names.dbRootPassword)).rejects.toThrow();
    const check = await scaleOut(["check"]);
    expect(check.code).toBe(0);
    expect(
      check.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(":")[0]),
    ).toEqual([`ok      ${names.appDbPassword}`, `ok      ${names.sourceHostToken}`]);
    // rotate names the way this topology applies new values: an instance refresh, not the ops command.
    const rotate = await scaleOut(["rotate"]);
    expect(rotate.code).toBe(0);
    expect(rotate.stdout).toContain(
      "now roll them out: the group's hosts read them at boot, so start an instance refresh: " +
        "aws autoscaling start-instance-refresh --region eu-west-1 --auto-scaling-group-name <the stack's output CrmServerAutoScalingGroupName>",
    );
    expect(rotate.stdout).not.toContain("rotate-secrets");
  });

  it("on a terminal, prompts for each value and echoes none of it (Node's readline)", async () => {
    const secret = `typed-${randomBytes(8).toString("hex")}`;
    // script(1) gives the command a terminal; the value is typed once the prompt shows, as a person types it.
    const command = `npm run -s secrets -- ${STACK} set app-db-password`;
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let typed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (!typed && stdout.includes("app-db-password: ")) {
        typed = true;
        child.stdin.write(`${secret}\r`);
      }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await new Promise<number | null>((done) => child.on("close", done));
    clearTimeout(timer);
    const result = { code, stdout };
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("app-db-password: ");
    expect(result.stdout).not.toContain(secret);
    expect(await valueOf(NAMES.appDbPassword)).toBe(secret);
  });

  it("without credentials, names the fix and how to check it, in one line", async () => {
    const { AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _key, ...withoutCredentials } = env;
    const result = await watched(
      "npm",
      ["run", "-s", "secrets", "--", STACK, "check"],
      { ...withoutCredentials, AWS_EC2_METADATA_DISABLED: "true" },
      "",
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^secrets: no AWS credentials found \(.*\): set a profile .* check them with `aws sts get-caller-identity`, which must print the stack's account/,
      ),
    ]);
  });
});

describe("npm run secrets -- --help", () => {
  it("says what each command does, one line each, and exits 0", async () => {
    const result = await watched("npm", ["run", "-s", "secrets", "--", "--help"], { ...process.env }, "");
    expect(result.code).toBe(0);
    for (const command of ["set", "rotate", "check"])
      expect(result.stdout).toMatch(new RegExp(`^  ${command} +\\S.*$`, "m"));
    expect(result.stdout).toContain("-h, --help");
  });
});
