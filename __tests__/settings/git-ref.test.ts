/**
 * The one ref rule (settings/git-ref.ts) against real `git check-ref-format --allow-onelevel` over a corpus:
 * every string of up to four tokens of a small alphabet (dots, slashes, `.lock`, `@{`, ...) and hand-picked
 * hostile and legitimate refs. Within the characters the rule allows, it accepts exactly what git accepts;
 * outside them it refuses. The same corpus goes through the host's check_ref (userdata/ops.sh, real bash)
 * and the release_ref variable's validation as synthesized (a real Terraform engine's console).
 */
import { spawnSync } from "child_process";
import { readFileSync, writeFileSync } from "fs";
import { join, resolve } from "path";
import { TerraformStack } from "cdktf";
import { Testing } from "cdktf";
import { ScaleOutVariables } from "../../constructs/scale-out-variables";
import { isGitRef, MAX_REF_LENGTH, REF_FORBIDDEN, REF_SHAPE } from "../../settings/git-ref";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";

jest.setTimeout(120_000);

const TOKENS = ["a", ".", "/", "-", ".lock", "@{"];

function corpus(): string[] {
  const cases = new Set<string>([
    "main",
    "v2.3.0",
    "release/2026.11",
    "feature/a-b_c",
    "0123456789abcdef0123456789abcdef01234567",
    "HEAD",
    "a.lock.b",
    "v1..2",
    "refs/heads/../x",
    "x.",
    "x/",
    "x.lock",
    "a/.b",
    ".a",
    "a//b",
    "a.lock/b",
    "@",
    "a@{1}",
    "a b",
    "a:b",
    "a^",
    "a~1",
    "a?",
    "a*",
    "a[b",
    "a\\b",
    "a\u0001b",
    "a\u007fb",
    "-x",
    "--upload-pack=x",
    "x/.lock",
    "é",
    "a".repeat(MAX_REF_LENGTH),
    "a".repeat(MAX_REF_LENGTH + 1),
    "a/",
    "/a",
    "a..",
    "..",
    ".",
    "a/b.",
    "a/b./c",
  ]);
  let level = [""];
  for (let length = 1; length <= 4; length++) {
    level = level.flatMap((prefix) => TOKENS.map((token) => prefix + token));
    level.forEach((text) => cases.add(text));
  }
  return [...cases];
}

const CASES = corpus();
const IN_CHARACTERS = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;

/** One line of 1 (accepted) or 0 per case, from a bash loop over the cases (NUL-separated on stdin). */
function bashVerdicts(script: string, env: NodeJS.ProcessEnv = {}): boolean[] {
  const result = spawnSync("bash", ["-c", script], {
    input: CASES.map((text) => `${text}\0`).join(""),
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 8 << 20,
  });
  expect(result.stderr).toBe("");
  const verdicts = result.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => line === "1");
  expect(verdicts).toHaveLength(CASES.length);
  return verdicts;
}

const gitVerdicts = bashVerdicts(
  'while IFS= read -r -d "" r; do git check-ref-format --allow-onelevel "$r" 2>/dev/null && echo 1 || echo 0; done',
);

describe("the ref rule", () => {
  test(`holds ${CASES.length} cases: within its characters exactly git check-ref-format's verdict, outside them a refusal`, () => {
    const differ = CASES.filter((text, i) => isGitRef(text) !== (gitVerdicts[i] && IN_CHARACTERS.test(text)));
    expect(differ).toEqual([]);
    // The corpus reaches both sides of every rule.
    expect(CASES.filter((text, i) => gitVerdicts[i] && IN_CHARACTERS.test(text)).length).toBeGreaterThan(50);
    for (const refused of [
      "v1..2",
      "refs/heads/../x",
      "x.",
      "x/",
      "x.lock",
      "a/.b",
      "a//b",
      "a.lock/b",
      "a@{1}",
      "-x",
    ]) {
      expect([refused, isGitRef(refused)]).toEqual([refused, false]);
    }
    for (const accepted of ["main", "v2.3.0", "release/2026.11", "feature/a-b_c", "a.lock.b"])
      expect([accepted, isGitRef(accepted)]).toEqual([accepted, true]);
  });

  test("the host's check_ref (userdata/ops.sh, real bash) gives the same verdict on every case", () => {
    const ops = readFileSync(resolve(__dirname, "../../userdata/ops.sh"), "utf8");
    const verdicts = bashVerdicts(
      `die() { exit 1; }\n${ops}\nwhile IFS= read -r -d "" r; do (check_ref "$r") && echo 1 || echo 0; done`,
      { REF_SHAPE, REF_FORBIDDEN },
    );
    expect(CASES.filter((text, i) => verdicts[i] !== isGitRef(text))).toEqual([]);
  });
});

describeWithEngine("the release_ref variable's validation, evaluated by a real engine", (engine) => {
  test("gives the rule's verdict on every case, and accepts empty (the default branch)", async () => {
    const app = Testing.app();
    const stack = new TerraformStack(app, "refs");
    new ScaleOutVariables(stack, "scale_out");
    const synthesized = JSON.parse(Testing.synth(stack)) as {
      variable: Record<string, { validation: { condition: string }[] }>;
    };
    const condition = synthesized.variable.release_ref.validation[0].condition.replace(/^\$\{([\s\S]*)\}$/, "$1");
    const workspace = new EngineWorkspace(engine, { variable: { cases: { type: "list(string)" } } });
    try {
      await workspace.init();
      const texts = ["", ...CASES];
      writeFileSync(join(workspace.dir, "cases.auto.tfvars.json"), JSON.stringify({ cases: texts }));
      const expression = `jsonencode([for r in var.cases : ${condition.replace(/var\.release_ref/g, "r")}])`;
      const output = spawnSync(engine, ["console"], {
        cwd: workspace.dir,
        input: `${expression}\n`,
        encoding: "utf8",
        maxBuffer: 8 << 20,
        env: { ...process.env, CHECKPOINT_DISABLE: "1", TF_CLI_CONFIG_FILE: join(workspace.dir, "cli.tfrc") },
      });
      expect(output.stderr).toBe("");
      const verdicts = JSON.parse(JSON.parse(output.stdout.trim()) as string) as boolean[];
      expect(verdicts[0]).toBe(true);
      expect(texts.slice(1).filter((text, i) => verdicts[i + 1] !== isGitRef(text))).toEqual([]);
    } finally {
      workspace.remove();
    }
  });
});
