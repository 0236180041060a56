/**
 * The plan's rule for app_db_password, the script's `.env` writer and the real `dotenv` package
 * agree, over every string of up to 3 characters from an alphabet of the characters that matter to
 * dotenv (quotes, #, \, n, spaces, =) and a seeded sample of longer ones:
 * - what Terraform accepts, the script writes, and dotenv (both parsers of 18.x) reads back exactly,
 *   with lines of every quoting style around it left intact;
 * - what Terraform refuses, the script refuses too, and no form (three quotings, bare) carries it.
 * Lines after ours that end in a quote show why a value ending in \ is never quoted: dotenv reads
 * `\'` as an escaped quote and runs on to the next line's closing quote.
 */
import { spawnSync } from "child_process";
import { writeFileSync } from "fs";
import { join } from "path";
import { dotenvCondition, isPrintableDotenvValue, printableTextCondition } from "../../constructs/variable-rules";
import { PRODUCTION_SETTINGS, SECRETS, shellFunction } from "../userdata/fixtures";
import { describeWithEngine, EngineWorkspace } from "../support/terraform-engine";
import { renderProvisioningScript } from "../../userdata";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dotenv: { parse(src: string, options?: { fast?: boolean }): Record<string, string> } = require("dotenv");

const ALPHABET = ["'", '"', "`", "#", "\\", "n", " ", "\u00a0", "a", "=", "é", "$"];

function corpus(): string[] {
  const values: string[] = [];
  let level = [""];
  for (let length = 1; length <= 3; length++) {
    level = level.flatMap((prefix) => ALPHABET.map((c) => prefix + c));
    values.push(...level);
  }
  let seed = 20261122;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 1500; i++) {
    const length = 4 + Math.floor(next() * 8);
    values.push(Array.from({ length }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(""));
  }
  return [...new Set(values)];
}

/**
 * A .env with our line between lines of every quoting style, as an app's own file may have; the
 * bare values ending in a quote are where a quoted value that dotenv takes as unterminated runs on to.
 */
function envFile(line: string): string {
  return [
    "SINGLE='one'",
    'DOUBLE="two"',
    "TICK=`three`",
    line,
    "ENDS_SINGLE=it'",
    'ENDS_DOUBLE=it"',
    "ENDS_TICK=it`",
    "AFTER_SINGLE='four'",
    'AFTER_DOUBLE="five"',
    "AFTER_TICK=`six`",
    "PLAIN=seven",
    "",
  ].join("\n");
}
const OTHERS = {
  SINGLE: "one",
  DOUBLE: "two",
  TICK: "three",
  AFTER_SINGLE: "four",
  AFTER_DOUBLE: "five",
  AFTER_TICK: "six",
  PLAIN: "seven",
  ENDS_SINGLE: "it'",
  ENDS_DOUBLE: 'it"',
  ENDS_TICK: "it`",
};

/** dotenv (both parsers) reads `written` back as exactly `value`, and every other line as it was. */
function carries(written: string, value: string): boolean {
  return [false, true].every((fast) => {
    const parsed = dotenv.parse(envFile(`DB_PASSWORD=${written}`), { fast });
    return parsed.DB_PASSWORD === value && Object.entries(OTHERS).every(([key, other]) => parsed[key] === other);
  });
}

describeWithEngine("app_db_password: the plan's rule, the script's .env writer and dotenv agree", (engine) => {
  const values = corpus();
  let workspace: EngineWorkspace;
  let accepted: boolean[] = [];
  let written: (string | undefined)[] = [];

  beforeAll(async () => {
    // The same HCL conditions as the precondition on var.app_db_password, applied to each value.
    workspace = new EngineWorkspace(engine, {
      variable: { values: { type: "list(string)" } },
      output: {
        accepted: {
          value: `\${[for v in var.values : ${printableTextCondition("v", 256)} && ${dotenvCondition("v")}]}`,
        },
      },
    });
    writeFileSync(join(workspace.dir, "terraform.tfvars.json"), JSON.stringify({ values }));
    await workspace.init();
    const applied = await workspace.run(["apply", "-auto-approve", "-input=false", "-no-color", "-lock=false"]);
    if (applied.code !== 0) throw new Error(applied.stderr);
    accepted = JSON.parse((await workspace.run(["output", "-json", "accepted"])).stdout);

    // The script's own function, over the same values (NUL-separated: values hold no NUL).
    const script = renderProvisioningScript(PRODUCTION_SETTINGS, SECRETS);
    const program = [
      "MAIN_SUBSHELL=0 CURRENT_STEP=test",
      "log() { :; }",
      shellFunction(script, "die"),
      shellFunction(script, "dotenv_value"),
      `while IFS= read -r -d '' v; do if out=$(dotenv_value "$v"); then printf 'y%s\\0' "$out"; else printf 'n\\0'; fi; done`,
    ].join("\n");
    const result = spawnSync("bash", ["-c", program], {
      input: values.map((v) => `${v}\0`).join(""),
      encoding: "utf8",
    });
    if (result.status !== 0) throw new Error(result.stderr);
    written = result.stdout
      .split("\0")
      .slice(0, -1)
      .map((answer) => (answer.startsWith("y") ? answer.slice(1) : undefined));
  }, 120_000);
  afterAll(() => workspace?.remove());

  it("evaluates every value of the corpus", () => {
    expect(values.length).toBeGreaterThan(3000);
    expect(accepted).toHaveLength(values.length);
    expect(written).toHaveLength(values.length);
    // Both outcomes are well represented: the comparison below means something.
    expect(accepted.filter(Boolean).length).toBeGreaterThan(2000);
    expect(accepted.filter((ok) => !ok).length).toBeGreaterThan(100);
  });

  it("the script writes exactly what the plan accepts", () => {
    const disagreements = values.filter((_value, i) => accepted[i] !== (written[i] !== undefined));
    expect(disagreements).toEqual([]);
  });

  it("npm run secrets (parameter-store mode) accepts exactly what the plan accepts", () => {
    const disagreements = values.filter((value, i) => accepted[i] !== isPrintableDotenvValue(value, 256));
    expect(disagreements).toEqual([]);
    expect(["x".repeat(257), "a\u2028b", "a\tb", ""].filter((value) => isPrintableDotenvValue(value, 256))).toEqual([]);
  });

  it("dotenv reads back every accepted value exactly, the lines around it intact", () => {
    const lost = values.filter((value, i) => accepted[i] && !carries(written[i]!, value));
    expect(lost).toEqual([]);
  });

  it("no quoting carries a refused value: the plan refuses only what these forms of dotenv cannot read back", () => {
    // Quotes that the value itself holds are left out: dotenv has no escapes. (It does read some
    // such lines, e.g. ''\' as '\, by a quirk: the line is taken bare and the outer quotes dropped.
    // The script does not rely on that, and refuses those values.)
    const carriable = values.filter(
      (value, i) =>
        !accepted[i] &&
        ["'", "`", '"', ""].some(
          (quote) => (quote === "" || !value.includes(quote)) && carries(`${quote}${value}${quote}`, value),
        ),
    );
    expect(carriable).toEqual([]);
  });
});
