/**
 * The provisioning script against hostile input and hostile circumstances, run for real through the
 * harness: secrets that failing commands print, a secret that begins another, a rotated password,
 * a token watched for in every process's arguments, an import that fails half way, and swap files
 * that are not swap.
 */
import { spawnSync } from "child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "fs";
import { join } from "path";
import { ProvisioningHarness, RunResult } from "../support/provisioning-harness";
import { describeWithTools } from "../support/required-tools";
import { renderProvisioningScript } from "../../userdata";
import { ScriptSecrets } from "../../settings/provisioning-settings";
import { TEARDOWN_MS } from "../support/teardown";

jest.setTimeout(120_000);

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const secretsOf = (root: string, app: string, token: string): ScriptSecrets => ({
  dbRootPasswordBase64: b64(root),
  appDbPasswordBase64: b64(app),
  sourceHostTokenBase64: b64(token),
});

// The root password begins the app password: replaced first, it would leave the app password's tail.
const ROOT = "Shared-Pr3fix-Secret";
const APP = `${ROOT}-and-Longer-Tail`;
const TOKEN = "ghp_H0stile/Token+Value=Odd&Chars%41";
const SECRETS = secretsOf(ROOT, APP, TOKEN);
const PIPELINE = 'main 2>&1 </dev/null | redact | tee -a "$LOG_FILE"';
/** Faults that make every try of a network step fail: no 10 s pauses between the tries. */
const FAST = { retryPauseSeconds: 0 };

/** The script with its output filter removed: shows that a scenario really prints a secret. */
function withoutRedaction(script: string): string {
  expect(script).toContain(PIPELINE);
  return script.replace(PIPELINE, 'main 2>&1 </dev/null | tee -a "$LOG_FILE"');
}

function expectNoSecret(text: string, secrets: string[]): void {
  for (const secret of secrets) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(encodeURIComponent(secret));
    expect(text).not.toContain(Buffer.from(secret).toString("hex"));
  }
}

describeWithTools("the provisioning script under hostile input", ProvisioningHarness.toolsMissing(), () => {
  let h: ProvisioningHarness;
  const logText = () => readFileSync(h.settings.logFile, "utf8");

  beforeAll(async () => {
    h = await ProvisioningHarness.start({ sourceHostToken: TOKEN });
  });
  afterAll(async () => {
    await h?.stop();
  }, TEARDOWN_MS);

  describe("a failing import whose database error quotes the app password", () => {
    let control: RunResult;
    let redacted: RunResult;
    let logBefore = 0;

    beforeAll(async () => {
      // A statement that MariaDB rejects right before the password: its error quotes the text from there.
      await h.commitToRepository(
        {
          "export.sql": [
            "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);",
            "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');",
            `INSERT INTO settings VALUES (1) '${APP}';`,
            "CREATE TABLE orders (id INT PRIMARY KEY, customer INT NOT NULL);",
            "",
          ].join("\n"),
        },
        "an export.sql that fails half way",
      );
      control = await h.run(withoutRedaction(renderProvisioningScript(h.settings, SECRETS)));
      logBefore = logText().length;
      redacted = await h.run(renderProvisioningScript(h.settings, SECRETS));
    });

    test("without the filter, the error prints the password (the scenario is real)", () => {
      expect(control.exitCode).not.toBe(0);
      expect(control.output).toContain("FAILED: step_09_import_database");
      expect(control.output).toMatch(new RegExp(`ERROR 1064 .*near '.${APP}`));
    });

    test("with it, the console and the log show the error with the password redacted, longest secret first", () => {
      expect(redacted.exitCode).not.toBe(0);
      expect(redacted.output).toContain("FAILED: step_09_import_database");
      expect(redacted.output).toMatch(/ERROR 1064 .*near '.\[REDACTED\]/);
      const log = logText().slice(logBefore);
      expect(log).toBe(redacted.output);
      expectNoSecret(redacted.output, [ROOT, APP, TOKEN]);
      // Not "[REDACTED]-and-Longer-Tail": the longer secret went first.
      expect(redacted.output).not.toContain("-and-Longer-Tail");
    });

    test("the half import is undone and imported again, all of it, once the dump is fixed", async () => {
      const db = h.settings.databaseName;
      // The failed runs stopped with the first table in place and the database marked as importing.
      expect(await h.query(`SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${db}'`)).toBe(
        "customers",
      );
      expect(redacted.output).toContain("stopped half way (1 tables); importing it again");
      await h.commitToRepository(
        {
          "export.sql": [
            "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);",
            "INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace'), (3, 'Linus');",
            "CREATE TABLE orders (id INT PRIMARY KEY, customer INT NOT NULL);",
            "INSERT INTO orders VALUES (10, 1), (11, 3);",
            "",
          ].join("\n"),
        },
        "export.sql fixed",
      );
      const fixed = await h.run(renderProvisioningScript(h.settings, SECRETS));
      expect(fixed.exitCode).toBe(0);
      expect(await h.query(`SELECT id, name FROM ${db}.customers ORDER BY id`)).toBe("1\tAda\n2\tGrace\n3\tLinus");
      expect(await h.query(`SELECT id, customer FROM ${db}.orders ORDER BY id`)).toBe("10\t1\n11\t3");
      const again = await h.run(renderProvisioningScript(h.settings, SECRETS));
      expect(again.output).toContain("export.sql was imported before; not importing it again");
      expect(await h.query(`SELECT COUNT(*) FROM ${db}.customers`)).toBe("3");
    });
  });

  describe("a rotated app password", () => {
    const ROTATED = "R0tated 'app' \"password\" `now`";
    let rotated: RunResult;

    beforeAll(async () => {
      rotated = await h.run(renderProvisioningScript(h.settings, secretsOf(ROOT, ROTATED, TOKEN)));
    });

    test("is applied to MariaDB as well as .env, and logged without a secret", async () => {
      expect(rotated.exitCode).toBe(0);
      expect(await h.canLogin(h.settings.appDbUser, ROTATED)).toBe(true);
      expect(await h.canLogin(h.settings.appDbUser, APP)).toBe(false);
      expect(rotated.output).toContain(
        `the password of ${h.settings.appDbUser}@localhost was not app_db_password: changed it`,
      );
      expectNoSecret(rotated.output, [ROOT, ROTATED, APP, TOKEN]);
      const env = readFileSync(join(h.settings.appDir, ".env"), "utf8");
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      expect(require("dotenv").parse(env).DB_PASSWORD).toBe(ROTATED);
    });

    test("a run with the same password changes nothing and says nothing about it", async () => {
      const same = await h.run(renderProvisioningScript(h.settings, secretsOf(ROOT, ROTATED, TOKEN)));
      expect(same.exitCode).toBe(0);
      expect(same.output).not.toContain("was not app_db_password");
      expect(await h.canLogin(h.settings.appDbUser, ROTATED)).toBe(true);
    });
  });

  describe("the token", () => {
    test("is in no process's arguments during a clone and a pull, nor in any file", async () => {
      await h.reset();
      // Slow answers keep git's processes alive long enough to be seen.
      h.gitDelayMs = 150;
      const seen: string[] = [];
      let polling = true;
      const poll = (async () => {
        while (polling) {
          for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
            try {
              // Only this harness's processes (their environment names its private directory): other
              // tests and programs on the machine may legitimately hold such strings.
              if (!readFileSync(`/proc/${pid}/environ`).includes(h.dir)) continue;
              seen.push(readFileSync(`/proc/${pid}/cmdline`).toString("utf8").replace(/\0/g, " "));
            } catch {
              // the process ended
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      const clone = await h.run(renderProvisioningScript(h.settings, SECRETS));
      const seenBeforePull = seen.length;
      await h.commitToRepository({ "CHANGELOG.md": "pulled\n" }, "to pull");
      const pull = await h.run(renderProvisioningScript(h.settings, SECRETS));
      polling = false;
      await poll;
      expect(clone.exitCode).toBe(0);
      expect(pull.exitCode).toBe(0);
      expect(readFileSync(join(h.settings.appDir, "CHANGELOG.md"), "utf8")).toBe("pulled\n");
      // The watch did see git at work with the repository's address (it could have seen a token there).
      const gitCommands = seen.filter((line) => line.includes(h.settings.repoUrl));
      expect(gitCommands.some((line) => / clone /.test(line))).toBe(true);
      // A pull fetches as a clone does (root's, with the token; slowed, so the watch sees it), then the login
      // user pulls from that local clone, too quickly to be sampled reliably (and with no address to hold a token).
      const pullCommands = seen.slice(seenBeforePull).filter((line) => line.includes(h.settings.repoUrl));
      expect(pullCommands.some((line) => / clone /.test(line))).toBe(true);
      expect(gitCommands.some((line) => /git-remote-https/.test(line))).toBe(true);
      const percent = [...Buffer.from(TOKEN)]
        .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`)
        .join("");
      for (const form of [TOKEN, encodeURIComponent(TOKEN), percent, "x-access-token:"]) {
        expect(seen.filter((line) => line.includes(form))).toEqual([]);
      }
      // Nowhere on disk: not in the checkout, the login user's home (no credential store) or the logs.
      const grep = spawnSync("grep", ["-rlaF", "-e", TOKEN, "-e", encodeURIComponent(TOKEN), h.dir], {
        encoding: "utf8",
      });
      expect(grep.stdout.split("\n").filter((file) => file && !file.endsWith("/provision.sh"))).toEqual([]);
      expect(existsSync(join(h.settings.loginHome, ".git-credentials"))).toBe(false);
    });

    test("a git server error that quotes the token reaches the log redacted", async () => {
      await h.reset();
      h.fault = "echo-token";
      const control = await h.run(withoutRedaction(renderProvisioningScript(h.settings, SECRETS)), FAST);
      expect(control.output).toContain(`fatal: remote error: access denied for x-access-token:${TOKEN}`);
      await h.reset();
      h.fault = "echo-token";
      const result = await h.run(renderProvisioningScript(h.settings, SECRETS), FAST);
      h.fault = undefined;
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain("fatal: remote error: access denied for x-access-token:[REDACTED]");
      expect(result.output).toContain("FAILED: step_08_fetch_repository");
      expectNoSecret(result.output, [TOKEN, ROOT, APP]);
      expectNoSecret(logText(), [TOKEN, ROOT, APP]);
    });
  });

  describe("the swap file", () => {
    test("an existing file that is not swap stops step 13 and is not formatted", async () => {
      await h.reset();
      const data = "customer data that must survive\n".repeat(4096);
      writeFileSync(h.settings.swapFile, data);
      const result = await h.run(renderProvisioningScript(h.settings, SECRETS));
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toContain(`ERROR: ${h.settings.swapFile} exists and is not a swap file; not formatting it`);
      expect(result.output).toContain("FAILED: step_13_enable_swap");
      expect(result.newCalls.filter((call) => /^(mkswap|swapon \/)/.test(call))).toEqual([]);
      expect(readFileSync(h.settings.swapFile, "utf8")).toBe(data);
    });

    test("an existing swap file is turned on as it is, and a failing swapon formats nothing", async () => {
      await h.reset();
      const first = await h.run(renderProvisioningScript(h.settings, SECRETS));
      expect(first.exitCode).toBe(0);
      const formatted = readFileSync(h.settings.swapFile);
      h.deactivateSwaps();
      h.fault = "step_13_enable_swap";
      const failing = await h.run(renderProvisioningScript(h.settings, SECRETS));
      h.fault = undefined;
      expect(failing.exitCode).not.toBe(0);
      expect(failing.newCalls.filter((call) => /^(fallocate|mkswap|swapon \/)/.test(call))).toEqual([
        `swapon ${h.settings.swapFile}`,
      ]);
      expect(readFileSync(h.settings.swapFile).equals(formatted)).toBe(true);
      expect(statSync(h.settings.swapFile).mode & 0o777).toBe(0o600);
    });
  });
});
