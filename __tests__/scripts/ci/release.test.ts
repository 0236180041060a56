/**
 * scripts/ci/release.sh, the release job's last step: the request is checked before anything is
 * installed; the private key reaches the operations command only as a file that this user alone
 * can read, named by CRM_OPS_SSH_KEY, and is gone afterwards (success, failure or cancellation);
 * the host keys reach ssh's known_hosts for any host name. `npm` is a recording stand-in for the
 * operations command (`npm run ops`), which needs a running host.
 */
import { ChildProcess, spawn } from "child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { delimiter, join, resolve } from "path";
import { annotationsOf } from "../../support/workflow-runner";

const SCRIPT = resolve(__dirname, "../../../scripts/ci/release.sh");
const KEY =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA 'quoted' $HOME `id`\n-----END OPENSSH PRIVATE KEY-----";
const HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJEtH2RV6V3u5LM94Ki5wbP+y20npD54d6VpoumqyrK9";

// What the operations command sees: its arguments, its key file (mode, text), whether the key is in
// its environment, and whether ssh would find the host key for a host name it never heard of.
const NPM_STAND_IN = `#!/usr/bin/env bash
{
  printf 'args=%s\\n' "$*"
  printf 'mode=%s\\n' "$(stat -c %a "$CRM_OPS_SSH_KEY")"
  printf 'dir=%s\\n' "$(dirname "$CRM_OPS_SSH_KEY")"
  printf 'key-in-env=%s\\n' "\${SSH_PRIVATE_KEY:+yes}"
  printf 'known=%s\\n' "$(ssh-keygen -F crm.example.com -f ~/.ssh/known_hosts | sed -n 2p)"
} > "$RECORD"
cat "$CRM_OPS_SSH_KEY" > "$RECORD.key"
[[ -z "\${STAND_IN_SLEEP:-}" ]] || { touch "$RECORD.started"; sleep "$STAND_IN_SLEEP"; }
exit "\${STAND_IN_EXIT:-0}"
`;

describe("release.sh", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-release-"));
  const bin = join(dir, "bin");
  const temp = join(dir, "temp");
  const home = join(dir, "home");
  mkdirSync(bin);
  writeFileSync(join(bin, "npm"), NPM_STAND_IN);
  chmodSync(join(bin, "npm"), 0o755);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(() => {
    for (const d of [temp, home]) {
      rmSync(d, { recursive: true, force: true });
      mkdirSync(d);
    }
  });

  const start = (args: string[], env: Record<string, string> = {}): ChildProcess =>
    spawn("bash", [SCRIPT, ...args], {
      detached: true,
      env: {
        PATH: [bin, process.env.PATH].join(delimiter),
        HOME: home,
        RUNNER_TEMP: temp,
        RECORD: join(dir, "record"),
        GITHUB_STEP_SUMMARY: join(temp, "summary.md"),
        SSH_PRIVATE_KEY: KEY,
        SSH_HOST_KEYS: `${HOST_KEY}\n`,
        ...env,
      },
    });
  const finish = (child: ChildProcess): Promise<{ code: number; stdout: string }> =>
    new Promise((done) => {
      let stdout = "";
      child.stdout!.on("data", (chunk) => (stdout += chunk));
      const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 30_000);
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        done({ code: code ?? (signal ? 128 : 1), stdout });
      });
    });
  const record = (): Record<string, string> =>
    Object.fromEntries(
      readFileSync(join(dir, "record"), "utf8")
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
  const keyFilesLeft = (): string[] => readdirSync(temp).filter((name) => name.startsWith("ssh-key"));

  it("hands the operations command a private key file and the host keys, then removes the key", async () => {
    const result = await finish(start(["CrmHost-prod", "v1.4.0"]));
    expect(result.code).toBe(0);
    expect(record()).toEqual({
      args: "run ops -- CrmHost-prod release v1.4.0",
      mode: "600",
      dir: temp,
      "key-in-env": "",
      known: `* ${HOST_KEY}`,
    });
    expect(readFileSync(join(dir, "record.key"), "utf8")).toBe(`${KEY}\n`);
    expect(keyFilesLeft()).toEqual([]);
    expect(readFileSync(join(temp, "summary.md"), "utf8")).toBe("### Released `v1.4.0` to `CrmHost-prod`\n");
  });

  it("passes the operations command's failure on, and still removes the key", async () => {
    const result = await finish(start(["CrmHost-prod", "v1.4.0"], { STAND_IN_EXIT: "3" }));
    expect(result.code).toBe(3);
    expect(keyFilesLeft()).toEqual([]);
    expect(readFileSync(join(temp, "summary.md"), "utf8")).toContain(
      "Release of `v1.4.0` to `CrmHost-prod` failed (exit 3)",
    );
  });

  it("removes the key when the job is cancelled mid-release", async () => {
    const child = start(["CrmHost-prod", "v1.4.0"], { STAND_IN_SLEEP: "20" });
    const done = finish(child);
    for (let waited = 0; !existsSync(join(dir, "record.started")) && waited < 10_000; waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    expect(keyFilesLeft()).toHaveLength(1);
    process.kill(-child.pid!, "SIGTERM"); // what the runner sends the step's processes
    expect((await done).code).toBe(143);
    expect(keyFilesLeft()).toEqual([]);
    rmSync(join(dir, "record.started"));
  }, 40_000);

  it.each([
    [["CrmHost-prod", "-x"], {}, "Bad ref"],
    [["CrmHost-prod", "a b"], {}, "Bad ref"],
    [["CrmHost-prod", "v1.4.0"], { SSH_HOST_KEYS: "" }, "Missing setting"],
    [["CrmHost-prod", "v1.4.0"], { SSH_HOST_KEYS: "ssh-dss AAAA" }, "Bad setting"],
    [["CrmHost-prod", "v1.4.0"], { SSH_PRIVATE_KEY: "" }, "Missing setting"],
  ])("refuses %j with %j, and runs nothing", async (args, env, title) => {
    rmSync(join(dir, "record"), { force: true });
    const result = await finish(start(args, env));
    expect(result.code).toBe(2);
    expect(annotationsOf(result.stdout).map((a) => a.properties.title)).toEqual([title]);
    expect(existsSync(join(dir, "record"))).toBe(false);
    expect(keyFilesLeft()).toEqual([]);
  });

  it("checks a request without the key (--check), and writes nothing", async () => {
    const result = await finish(start(["--check", "CrmHost-prod", "refs/tags/v1.4.0"], { SSH_PRIVATE_KEY: "" }));
    expect({ code: result.code, stdout: result.stdout }).toEqual({
      code: 0,
      stdout: "release: request checked: refs/tags/v1.4.0 to CrmHost-prod, 1 host key(s)\n",
    });
    expect(readdirSync(temp)).toEqual([]);
    expect(readdirSync(home)).toEqual([]);
  });
});
