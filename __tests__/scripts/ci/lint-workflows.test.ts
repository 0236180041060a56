/**
 * scripts/ci/lint-workflows.sh with the real actionlint and zizmor: the repository's workflows
 * pass; a secret outside a dedicated environment fails the lint unless its exception is listed with
 * a reason; a listed exception that no longer fires fails it too; a line without a reason is refused.
 */
import { execFile } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { describeWithTools } from "../../support/required-tools";
import { findOnPath } from "../../support/workflow-runner";

const SCRIPT = resolve(__dirname, "../../../scripts/ci/lint-workflows.sh");

/** A small valid workflow; `environment` puts its job in one. */
function workflow(environment: boolean): string {
  return [
    "name: fixture",
    "on: workflow_dispatch",
    "permissions: {}",
    "concurrency:",
    "  group: fixture",
    "  cancel-in-progress: false",
    "jobs:",
    "  use-token:",
    "    name: use the token",
    "    runs-on: ubuntu-latest",
    ...(environment ? ["    environment: production"] : []),
    "    permissions:",
    "      contents: read # nothing else",
    "    steps:",
    "      - name: Use the token",
    "        env:",
    "          TOKEN: ${{ secrets.TOKEN }}",
    '        run: test -n "$TOKEN"',
    "",
  ].join("\n");
}

describeWithTools(
  "lint-workflows.sh",
  ["actionlint", "zizmor", "shellcheck"].filter((tool) => !findOnPath(tool)),
  () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-lint-workflows-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const outside = join(dir, "outside.yml");
    const inside = join(dir, "inside.yml");
    writeFileSync(outside, workflow(false));
    writeFileSync(inside, workflow(true));

    const lint = (
      exceptions: string | undefined,
      ...files: string[]
    ): Promise<{ code: number; stdout: string; stderr: string }> => {
      const env = { ...process.env };
      if (exceptions !== undefined) {
        env.CRM_ZIZMOR_EXCEPTIONS = join(dir, "exceptions.txt");
        writeFileSync(env.CRM_ZIZMOR_EXCEPTIONS, exceptions);
      }
      return new Promise((done) =>
        execFile("bash", [SCRIPT, ...files], { env, timeout: 120_000 }, (error, stdout, stderr) =>
          done({ code: error ? Number(error.code) : 0, stdout, stderr }),
        ),
      );
    };

    it("passes the repository's workflows: no zizmor finding of medium severity or above, no exception", async () => {
      const result = await lint(undefined);
      expect(result.stdout).toMatch(
        /zizmor summary: \d+ findings \(\d+ informational, \d+ low, 0 medium, 0 high\); failed=0 excepted=0 stale=0/,
      );
      expect({ code: result.code, stderr: result.stderr.replace(/^.*nodedir.*\n/gm, "") }).toEqual({
        code: 0,
        stderr: "",
      });
    }, 180_000);

    it("fails on a secret used outside a dedicated environment", async () => {
      const result = await lint("", outside);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `FAILED   secrets-outside-env (medium): secrets referenced without a dedicated environment -- ${outside}:16 (job use-token)`,
      );
      expect((await lint("", inside)).code).toBe(0);
    }, 180_000);

    it("accepts a finding listed with its reason, and fails on a listed one that no longer fires", async () => {
      const listed = `# accepted\nsecrets-outside-env  ${outside}:use-token  the fixture's reason\n`;
      const accepted = await lint(listed, outside);
      expect(accepted.code).toBe(0);
      expect(accepted.stdout).toContain(
        `excepted secrets-outside-env (medium): secrets referenced without a dedicated environment -- ${outside}:16 (job use-token): the fixture's reason`,
      );
      const stale = await lint(listed, inside);
      expect(stale.code).toBe(1);
      expect(stale.stdout).toContain(`STALE    exception secrets-outside-env ${outside}:use-token no longer fires`);
    }, 180_000);

    it("refuses an exception without a reason", async () => {
      const result = await lint(`secrets-outside-env  ${outside}:use-token\n`, outside);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("exceptions.txt:1: expected 'AUDIT FILE[:JOB] reason', with a reason");
    }, 180_000);
  },
);
