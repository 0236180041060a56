/**
 * What a user sees when synthesis meets bad settings: `main.ts`, run as the synth command runs it,
 * prints one line naming the problem and exits 1; never a Node.js stack trace.
 */
import { spawnSync } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import exampleSettings from "../../settings/example.json";
import { appInvocation } from "../support/app-command";

const ROOT = resolve(__dirname, "../..");

function synth(settingsFile: string): { status: number | null; stderr: string; stdout: string } {
  const { file: program, args } = appInvocation();
  const result = spawnSync(program, args, {
    cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, CRM_SETTINGS: settingsFile, CHECKPOINT_DISABLE: "1" },
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe("main.ts with bad settings", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-main-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it.each([
    ["a missing file", () => join(dir, "missing.json"), /^Cannot use the settings file .*missing\.json: no such file$/],
    ["a directory without settings files", () => mkdtempSync(join(dir, "empty-")),
      /^Invalid setting "CRM_SETTINGS": expected a directory holding settings files \(\*\.json\); .*empty-\w+ has none\.$/],
    ["a file that is not JSON", () => file("broken.json", '{ "region": "us-east-1", }'),
      /^Cannot use the settings file .*broken\.json: not valid JSON: .*\(line 1, column 26\)$/],
    ["a key given twice", () => file("twice.json", JSON.stringify(exampleSettings).replace(/}$/, ', "region": "eu-west-3"}')),
      /^Cannot use the settings file .*twice\.json: the key "region" appears twice in one object/],
    ["a bad setting", () => file("bad.json", JSON.stringify({ ...exampleSettings, region: "eu-wset-1" })),
      /^\/.*bad\.json: Invalid setting "region" \(got "eu-wset-1"\): expected an AWS region name/],
    ["a refused address with credentials", () => file("url.json", JSON.stringify({ ...exampleSettings, repoUrl: "https://u:pa/SECRET@h/r" })),
      /^\/.*url\.json: Invalid setting "repoUrl" \(got "https:\/\/\*\*\*@h\/r"\)/],
  ])("prints one line for %s, no stack trace, and exits 1", (_what, path, message) => {
    const result = synth(path());
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr.trimEnd()).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at |SECRET/);
  }, 60_000);
});
