/**
 * Every cdktf or terraform command in the documentation's shell blocks runs with
 * CHECKPOINT_DISABLE=1: without it both CLIs call HashiCorp's version-check service, which prints
 * an error where there is no network (and sends a request where nobody asked for one).
 */
import { readdirSync, readFileSync } from "fs";
import { resolve } from "path";

const DOCUMENTS = [
  "README.md",
  ...readdirSync(resolve(__dirname, "../../docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** The command lines of the ```sh blocks of a Markdown text, each with the block's earlier lines. */
function commands(text: string): { line: string; before: string[] }[] {
  const found: { line: string; before: string[] }[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    const lines = block[1].split("\n");
    lines.forEach((line, index) => {
      // cdktn: the same CLI under CDK Terrain's name (the docs after scripts/cdktn/convert.sh, and its section).
      if (/(^|[\s;&|(])(npx )?(cdktf|cdktn|terraform) [a-z]/.test(line.replace(/#.*$/, "")))
        found.push({ line, before: lines.slice(0, index) });
    });
  }
  return found;
}

describe.each(DOCUMENTS)("shell commands of %s", (document) => {
  const found = commands(readFileSync(resolve(__dirname, "../..", document), "utf8"));

  it("are quiet and offline-safe: CHECKPOINT_DISABLE=1 on the line or exported before it", () => {
    const loud = found.filter(
      ({ line, before }) =>
        !line.includes("CHECKPOINT_DISABLE=1") &&
        !before.some((earlier) => /^export CHECKPOINT_DISABLE=1\b/.test(earlier)),
    );
    expect(loud.map(({ line }) => line)).toEqual([]);
  });
});

it("finds the commands it checks", () => {
  expect(DOCUMENTS).toEqual(expect.arrayContaining(["README.md", "docs/operations.md", "docs/github-actions.md"]));
  // The README's block runs the npm scripts only (each sets CHECKPOINT_DISABLE=1 itself); the task pages run the CLIs.
  expect(
    commands(readFileSync(resolve(__dirname, "../../docs/github-actions.md"), "utf8")).length,
  ).toBeGreaterThanOrEqual(1);
  expect(commands(readFileSync(resolve(__dirname, "../../docs/operations.md"), "utf8")).length).toBeGreaterThanOrEqual(
    5,
  );
  expect(commands("```sh\nnpx cdktf synth\n```").map(({ line }) => line)).toEqual(["npx cdktf synth"]);
});
