/**
 * The boot test's environment (__tests__/boot/environment.js): on SIGTERM or SIGINT, which jest alone
 * answers by ending at once, a test file's running test is told (crmBootStop), the tests not yet started
 * fail without running, and afterAll still runs. Shown on a tiny test file, with jest as npm test runs it.
 */
import { spawn } from "child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";

const ROOT = resolve(__dirname, "../..");

const TEST_FILE = `
const { writeFileSync } = require("fs");
const mark = (name) => writeFileSync(require("path").join(process.env.W, name), "");
afterAll(() => mark("after-all"));
test("a long wait, ended by the stop", async () => {
  mark("started");
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, 60000);
    crmBootStop.addEventListener("abort", () => { clearTimeout(timer); reject(crmBootStop.reason); });
  });
});
test("a test after it", () => mark("later"));
`;

describe("the boot test's environment", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "crm-boot-env-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s: the running test ends, the next one fails unrun, afterAll runs",
    async (signal) => {
      writeFileSync(join(dir, "stop.test.js"), TEST_FILE);
      const config = {
        rootDir: dir,
        testEnvironment: join(ROOT, "__tests__/boot/environment.js"),
        testMatch: ["**/stop.test.js"],
        transform: {},
      };
      const child = spawn(
        process.execPath,
        [join(ROOT, "node_modules/jest/bin/jest.js"), "--config", JSON.stringify(config), "--runInBand", "--ci"],
        {
          cwd: dir,
          env: { ...process.env, W: dir },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const poll = setInterval(() => existsSync(join(dir, "started")) && (clearInterval(poll), child.kill(signal)), 50);
      const bound = setTimeout(() => child.kill("SIGKILL"), 50_000);
      const code = await new Promise<number | null>((done) => child.on("close", (c) => done(c)));
      clearInterval(poll);
      clearTimeout(bound);
      expect({ code, afterAll: existsSync(join(dir, "after-all")), later: existsSync(join(dir, "later")) }).toEqual({
        code: 1,
        afterAll: true,
        later: false,
      });
      expect(output).toContain(`boot test: ${signal}: stopping`);
      expect(output).toContain(`not run: the boot test was stopped by ${signal}`);
      expect(output).toMatch(/Tests: +2 failed, 2 total/);
    },
    60_000,
  );
});
