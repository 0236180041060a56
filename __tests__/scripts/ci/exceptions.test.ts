/**
 * scripts/ci/exceptions.py, the one reader of the scans' exceptions files (scan.sh's checkov list,
 * lint-workflows.sh's zizmor list): both repository files read, and every bad line refused with its
 * file, line and what is wrong; scan.sh (with checkov) stops on a bad line of its list.
 */
import { spawnSync } from "child_process";
import { mkdtempSync, rmSync, writeFileSync } from "fs";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { describeWithTools } from "../../support/required-tools";
import { findOnPath } from "../../support/workflow-runner";

const CI = resolve(__dirname, "../../../scripts/ci");
const CHECKOV = '[("CHECK_ID", r"CKV[0-9]*_[A-Z0-9]+_[0-9]+", "a checkov check id (such as CKV_AWS_24)")]';
const ZIZMOR = '[("AUDIT", r"[a-z0-9]+(-[a-z0-9]+)*", "a zizmor audit id"), ("FILE[:JOB]", None, None)]';

/** read_exceptions(file, fields) as JSON (keys joined by a space), or the error's message. */
function read(file: string, fields: string): { status: number | null; stdout: string; stderr: string } {
  const program =
    `import json, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, ${JSON.stringify(CI)})\n` +
    "from exceptions import ExceptionsFileError, read_exceptions\n" +
    `try:\n  found = read_exceptions(sys.argv[1], ${fields}, "list.txt")\n` +
    "except ExceptionsFileError as e:\n  print(e, file=sys.stderr); sys.exit(2)\n" +
    "print(json.dumps({(k if isinstance(k, str) else ' '.join(k)): v for k, v in found.items()}))\n";
  return spawnSync("python3", ["-c", program, file], { encoding: "utf8", timeout: 30_000 });
}

describe("the exceptions files' reader", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-exceptions-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (text: string) => {
    const path = join(dir, `list-${Math.random().toString(36).slice(2)}.txt`);
    writeFileSync(path, text);
    return path;
  };

  it("reads the repository's checkov list, each check with its reason", () => {
    const result = read(join(CI, "checkov-exceptions.txt"), CHECKOV);
    expect(result.stderr).toBe("");
    const found = JSON.parse(result.stdout) as Record<string, string>;
    expect(found.CKV_AWS_24).toMatch(/^SSH \(port 22\) open to 0\.0\.0\.0\/0/);
    expect(Object.keys(found).every((id) => /^CKV2?_AWS_\d+$/.test(id))).toBe(true);
  });

  it("reads keys of several fields, the reason being the rest of the line", () => {
    const result = read(
      file("# a comment\n\nsecrets-outside-env  .github/workflows/a.yml:plan   the reason, with  spaces \n"),
      ZIZMOR,
    );
    expect(JSON.parse(result.stdout)).toEqual({
      "secrets-outside-env .github/workflows/a.yml:plan": "the reason, with  spaces",
    });
    expect(read(join(CI, "zizmor-exceptions.txt"), ZIZMOR)).toMatchObject({ status: 0, stdout: "{}\n" });
  });

  it.each([
    ["CKV_AWS_24\n", CHECKOV, "list.txt:1: expected 'CHECK_ID reason', with a reason"],
    [
      "# x\nckv_aws_24  lower case\n",
      CHECKOV,
      "list.txt:2: 'ckv_aws_24' is not a checkov check id (such as CKV_AWS_24)",
    ],
    ["CKV_AWS_24  one\nCKV_AWS_24  two\n", CHECKOV, "list.txt:2: CKV_AWS_24 is listed twice"],
    ["secrets-outside-env  a.yml:job\n", ZIZMOR, "list.txt:1: expected 'AUDIT FILE[:JOB] reason', with a reason"],
    ["Secrets  a.yml  reason\n", ZIZMOR, "list.txt:1: 'Secrets' is not a zizmor audit id"],
  ])("refuses %j", (text, fields, message) => {
    expect(read(file(text), fields)).toMatchObject({ status: 2, stderr: `${message}\n` });
  });
});

describeWithTools(
  "scan.sh's exceptions",
  ["checkov"].filter((tool) => !findOnPath(tool)),
  () => {
    it("are read by the same reader: a line without a reason stops the scan (exit 2), naming the line", () => {
      const dir = mkdtempSync(join(tmpdir(), "crm-scan-exceptions-"));
      try {
        writeFileSync(join(dir, "list.txt"), "CKV_AWS_24  a reason\nCKV_AWS_260\n");
        writeFileSync(
          join(dir, "cdk.tf.json"),
          JSON.stringify({ resource: { aws_s3_bucket: { b: { bucket: "crm-scan-fixture" } } } }),
        );
        const result = spawnSync(
          "bash",
          [join(CI, "scan.sh"), "--exceptions", join(dir, "list.txt"), join(dir, "cdk.tf.json")],
          { encoding: "utf8", timeout: 120_000 },
        );
        expect({ status: result.status, stderr: result.stderr.trim() }).toEqual({
          status: 2,
          stderr: `scan: ${join(dir, "list.txt")}:2: expected 'CHECK_ID reason', with a reason`,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 150_000);
  },
);
