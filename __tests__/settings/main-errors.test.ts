/**
 * What a user sees when synthesis meets bad settings: `main.ts`, run as the synth command runs it,
 * prints one line naming the problem and exits 1; never a Node.js stack trace.
 */
import { execFile, spawnSync } from "child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import exampleSettings from "../../settings/example.json";
import { appInvocation } from "../support/app-command";

const ROOT = resolve(__dirname, "../..");

function synth(settingsFile: string): { status: number | null; stderr: string; stdout: string } {
  const { file: program, args } = appInvocation();
  const result = spawnSync(program, args, {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, CRM_SETTINGS: settingsFile, CHECKPOINT_DISABLE: "1" },
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe("main.ts with bad settings", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-main-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it.each([
    ["a missing file", () => join(dir, "missing.json"), /^Cannot use the settings file .*missing\.json: no such file$/],
    [
      "a directory without settings files",
      () => mkdtempSync(join(dir, "empty-")),
      /^Invalid setting "CRM_SETTINGS": expected a directory holding settings files \(\*\.json\); .*empty-\w+ has none\.$/,
    ],
    [
      "a file that is not JSON",
      () => file("broken.json", '{ "region": "us-east-1", }'),
      /^Cannot use the settings file .*broken\.json: line 1, column 26: not valid JSON: expected a property name in double quotes \(and no comma after the last property\)$/,
    ],
    [
      "a key given twice",
      () => file("twice.json", JSON.stringify(exampleSettings).replace(/}$/, ', "region": "eu-west-3"}')),
      /^Cannot use the settings file .*twice\.json: line 1, column \d+: the key "region" appears twice in one object; expected each key once/,
    ],
    [
      "bytes that are not UTF-8",
      () => file("latin1.json", Buffer.from(JSON.stringify({ ...exampleSettings, gitUser: "Jos\xe9" }), "latin1")),
      /^Cannot use the settings file .*latin1\.json: byte offset \d+ \(line 1, column \d+\): the byte 0xe9 starts no valid UTF-8 character; expected UTF-8 text/,
    ],
    [
      "UTF-16",
      () =>
        file(
          "utf16.json",
          Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(exampleSettings), "utf16le")]),
        ),
      /^Cannot use the settings file .*utf16\.json: byte offset 0: a UTF-16 or UTF-32 byte-order mark; expected UTF-8 text/,
    ],
    [
      "nesting a recursive parser would overflow on",
      () => file("deep.json", `{"stackName": ${"[".repeat(300_000)}${"]".repeat(300_000)}}`),
      /^Cannot use the settings file .*deep\.json: line 1, column \d+: objects and arrays nested deeper than 16/,
    ],
    [
      "a file over 1 MiB",
      () => file("huge.json", JSON.stringify({ ...exampleSettings, gitUser: "x".repeat(2 << 20) })),
      /^Cannot use the settings file .*huge\.json: byte offset 1048576: the file goes on; expected a settings file of at most 1048576 bytes$/,
    ],
    [
      "a bad setting",
      () => file("bad.json", JSON.stringify({ ...exampleSettings, region: "eu-wset-1" })),
      /^\/.*bad\.json: Invalid setting "region" \(got "eu-wset-1"\): expected an AWS region name/,
    ],
    [
      "a refused address with credentials",
      () => file("url.json", JSON.stringify({ ...exampleSettings, repoUrl: "https://u:pa/SECRET@h/r" })),
      /^\/.*url\.json: Invalid setting "repoUrl" \(got "https:\/\/\*\*\*@h\/r"\)/,
    ],
  ])(
    "prints one line for %s, no stack trace, and exits 1",
    (_what, path, message) => {
      const result = synth(path());
      expect(result.status).toBe(1);
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr.trimEnd()).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at |SECRET/);
    },
    60_000,
  );

  it("prints every mistake of a file at once, one line each naming the file, and exits 1", () => {
    const { databaseName: _omitted, ...rest } = exampleSettings;
    const path = file(
      "three.json",
      JSON.stringify({ ...rest, region: "eu-wset-1", databseName: "crm", swapFile: "swap" }),
    );
    const result = synth(path);
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split("\n")).toEqual([
      `${path}: Invalid setting "databseName": expected one of the known settings (did you mean "databaseName"?).`,
      expect.stringMatching(
        new RegExp(`^${path}: Invalid setting "region" \\(got "eu-wset-1"\\): expected an AWS region name`),
      ),
      expect.stringMatching(
        new RegExp(`^${path}: Invalid setting "swapFile" \\(got "swap"\\): expected an absolute path`),
      ),
    ]);
  }, 60_000);
});

/** A user's command, `npm run …` or `npx cdktf …`, in the project with CRM_SETTINGS; bounded. */
function command(program: string, args: string[], settingsFile: string): Promise<{ code: number; output: string }> {
  return new Promise((done) =>
    execFile(
      program,
      args,
      {
        cwd: ROOT,
        timeout: 120_000,
        env: { ...process.env, CRM_SETTINGS: settingsFile, CHECKPOINT_DISABLE: "1", FORCE_COLOR: "0", CI: "1" },
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: stdout + stderr }),
    ),
  );
}

describe("the user's commands with a bad settings file", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-commands-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const bad = join(dir, "bad.json");
  writeFileSync(bad, JSON.stringify({ ...exampleSettings, region: "eu-wset-1" }));
  const message = `${bad}: Invalid setting "region" (got "eu-wset-1")`;
  const count = (output: string) => output.split(message).length - 1;

  it.each([["synth"], ["diff"], ["deploy"], ["destroy"]])(
    "npm run %s prints the one line once and stops before cdktf runs",
    async (script) => {
      // No terminal here: deploy and destroy need --auto-approve to get as far as the settings (scripts/cdktf.sh).
      const approve = ["deploy", "destroy"].includes(script) ? ["--auto-approve"] : [];
      const result = await command(
        "npm",
        ["run", script, "--", "--output", join(dir, `out-${script}`), ...approve],
        bad,
      );
      expect(result.code).not.toBe(0);
      expect(count(result.output)).toBe(1);
      expect(result.output).not.toMatch(/cdktf encountered|Synthesizing|\n\s+at /);
    },
    120_000,
  );

  it("main.ts --check, with good settings, exits 0 and writes nothing", () => {
    const { file: program, args } = appInvocation();
    const result = spawnSync(program, [...args, "--check"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: {
        ...process.env,
        CRM_SETTINGS: join(ROOT, "examples"),
        CHECKPOINT_DISABLE: "1",
        CDKTF_OUTDIR: join(dir, "out-check"),
      },
    });
    expect({ status: result.status, output: result.stdout + result.stderr }).toEqual({ status: 0, output: "" });
    expect(readdirSync(dir)).toEqual(["bad.json"]);
  }, 60_000);

  it("npx cdktf synth prints it twice, as docs/settings.md says: the app's output, then again in cdktf's summary", async () => {
    const result = await command(
      join(ROOT, "node_modules", ".bin", "cdktf"),
      ["synth", "--output", join(dir, "out-cdktf")],
      bad,
    );
    expect(result.code).toBe(1);
    expect(count(result.output)).toBe(2);
    // cdktn says the same of itself in the CDK Terrain copy (scripts/cdktn/check.sh).
    expect(result.output).toMatch(/cdkt[fn] encountered an error while synthesizing/);
  }, 120_000);
});
