/**
 * Figures the pages give that the code or the workflows decide: each is read from where it is decided,
 * so a page cannot keep a stale one. (What `npm run docs` writes, such as docs/operations.md's list of
 * what destroy deletes with its counts, is checked by generated.test.ts.)
 */
import { readdirSync, readFileSync } from "fs";
import { join, resolve } from "path";
import { MINIMUM_TERRAFORM_VERSION } from "../../main";
import { parseWorkflow } from "../support/workflow-runner";

const ROOT = resolve(__dirname, "..", "..");
const text = (path: string) => readFileSync(join(ROOT, path), "utf8");
/** The README and every page of docs/, each with its line breaks as spaces (a figure may wrap). */
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
].map((path) => ({ path, words: text(path).replace(/\s+/g, " ") }));

/** The Terraform of CI, the tests and the workflows (scripts/ci/install-tools.sh). */
const PINNED = /TERRAFORM_VERSION="\$\{CRM_TERRAFORM_VERSION:-([0-9.]+)\}"/.exec(
  text("scripts/ci/install-tools.sh"),
)![1];
/** The oldest Terraform the stack runs on (its required_version), as 1.10. */
const MINIMUM = /^>= (\d+\.\d+)\.0$/.exec(MINIMUM_TERRAFORM_VERSION)![1];
const older = (version: string, than: string) => {
  const [a, b] = [version, than].map((v) => v.split(".").map(Number));
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
};

describe("the Terraform versions the pages name", () => {
  it("are the pinned one, the minimum, or (after >=) the release that brought a feature the minimum has", () => {
    const wrong: string[] = [];
    for (const { path, words } of PAGES) {
      for (const match of words.matchAll(/Terraform\b.{0,40}/g)) {
        // The versions right after "Terraform", up to the end of its phrase (or of the window, less a cut last word).
        const phrase = match[0].split(/[.;:)](?!\d)/)[0];
        const whole = phrase === match[0] ? phrase.replace(/\s\S*$/, "") : phrase;
        for (const [version, atLeast] of [...whole.matchAll(/(>=\s*)?\b(1\.\d+(?:\.\d+)?)\b/g)].map((found) => [
          found[2],
          found[1],
        ])) {
          const fine =
            version === PINNED ||
            version === MINIMUM ||
            version === `${MINIMUM}.0` ||
            (atLeast !== undefined && older(version, MINIMUM));
          if (!fine) wrong.push(`${path}: "${whole}"`);
        }
      }
    }
    expect({ PINNED, MINIMUM, wrong }).toEqual({ PINNED: "1.11.4", MINIMUM: "1.10", wrong: [] });
  });

  it("catches a stale version (a control: the test above can fail)", () => {
    const phrase = "Terraform (1.8.5 and 1.11.4, measured)".split(/[.;:)](?!\d)/)[0];
    expect([...phrase.matchAll(/(>=\s*)?\b(1\.\d+(?:\.\d+)?)\b/g)].map((found) => found[2])).toEqual([
      "1.8.5",
      "1.11.4",
    ]);
  });
});

describe("the Node.js versions CI tests", () => {
  const plan = parseWorkflow(text(".github/workflows/terraform-plan.yml"));
  const matrix = (plan.jobs.test.strategy?.matrix?.node ?? []).map(String);
  const actions = text("docs/github-actions.md").replace(/\s+/g, " ");

  it("are the test job's matrix, in docs/github-actions.md's table, its required checks and the README", () => {
    // The oldest Node.js package.json's engines allow, up to the newest release.
    const floor = /\d+\.\d+\.\d+/.exec(JSON.parse(text("package.json")).engines.node)?.[0];
    expect([matrix[0], matrix.at(-1)]).toEqual([floor, "latest"]);
    const row = /\| `test` \("test and synth", Node\.js ([^|]*)\) \|/.exec(actions)?.[1] ?? "";
    expect(row.match(/\d+(\.\d+)*|latest/g)).toEqual(matrix);
    expect([...actions.matchAll(/"test and synth \(Node\.js ([^)]*)\)"/g)].map((found) => found[1])).toEqual(matrix);
    const readme = /CI tests ([^;)]*)/.exec(text("README.md"))?.[1] ?? "";
    expect(readme.match(/\d+(\.\d+)*/g)).toEqual(matrix.filter((node) => node !== "latest"));
    expect(readme).toContain("the newest release");
  });
});
