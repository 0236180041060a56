/**
 * The quick tier (`npm run test:quick`, jest.quick.config.js) and the full suite (`npm test`): every
 * test file is in exactly one tier, and a file that starts moto, MariaDB, the provisioning harness or
 * the workflows' jobs, or runs the type-checking npm scripts, is not in the quick one. A new file of
 * that kind fails here until jest.quick.config.js names it: the tier is a decision, not an accident.
 */
import { readdirSync, readFileSync } from "fs";
import { join, relative, resolve } from "path";
import * as ts from "typescript";

const ROOT = resolve(__dirname, "..");
const base = require("../jest.config.js") as { testPathIgnorePatterns: string[] };
const quick = require("../jest.quick.config.js") as { testPathIgnorePatterns: string[] };
const boot = require("../jest.boot.config.js") as { testMatch: string[] };

/** What makes a test file slow, as it shows in its source. */
const SLOW_MARKERS: [RegExp, string][] = [
  [/\bMotoServer\b/, "starts moto"],
  [/\bDatabaseServer\b/, "starts a MariaDB server"],
  [/\bProvisioningHarness\b/, "runs the provisioning script for real (MariaDB, stand-in servers)"],
  [/\bWorkflowRun\b/, "runs the workflows' jobs"],
  [
    /"npm",\s*\[\s*"run",\s*(script\b|"(synth|diff|deploy|destroy|check:settings)")/,
    "runs an npm script that type-checks the project first",
  ],
];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? testFiles(path) : /\.(test|boot)\.ts$/.test(entry.name) ? [path] : [];
  });
}

const ignoredBy = (patterns: string[], file: string) => patterns.some((pattern) => new RegExp(pattern).test(file));
const files = testFiles(join(ROOT, "__tests__"));
const jestFiles = files.filter((file) => file.endsWith(".test.ts") && !ignoredBy(base.testPathIgnorePatterns, file));
const quickFiles = jestFiles.filter((file) => !ignoredBy(quick.testPathIgnorePatterns, file));
const fullOnly = jestFiles.filter((file) => !quickFiles.includes(file));
const bootFiles = files.filter((file) => file.endsWith(".boot.ts"));

describe("the test tiers", () => {
  it("the quick tier is jest's own configuration with more files left out, nothing else", () => {
    const { testPathIgnorePatterns: quickIgnored, ...quickRest } = quick;
    const { testPathIgnorePatterns: baseIgnored, ...baseRest } = base;
    expect(quickRest).toEqual(baseRest);
    expect(quickIgnored.slice(0, baseIgnored.length)).toEqual(baseIgnored);
    expect(boot.testMatch).toEqual(["**/*.boot.ts"]);
  });

  it("every test file is in exactly one tier: quick, full only (jest) or boot", () => {
    const tiers = files.map((file) => [quickFiles, fullOnly, bootFiles].filter((tier) => tier.includes(file)).length);
    expect(files.filter((_, i) => tiers[i] !== 1).map((file) => relative(ROOT, file))).toEqual([]);
    expect(quickFiles.length).toBeGreaterThan(fullOnly.length);
    expect(bootFiles.length).toBeGreaterThan(0);
  });

  it("each pattern the quick tier adds leaves out at least one file (none is stale)", () => {
    const added = quick.testPathIgnorePatterns.slice(base.testPathIgnorePatterns.length);
    expect(added.filter((pattern) => !jestFiles.some((file) => new RegExp(pattern).test(file)))).toEqual([]);
  });

  it("no quick-tier file starts moto, MariaDB, the harness or the workflows' jobs, or runs the type-checking npm scripts", () => {
    const slow = quickFiles.flatMap((file) => {
      const source = readFileSync(file, "utf8");
      return SLOW_MARKERS.filter(([marker]) => marker.test(source)).map(([, why]) => `${relative(ROOT, file)}: ${why}`);
    });
    expect(slow).toEqual([]);
  });

  it("the markers find the files the quick tier leaves out for them", () => {
    const marked = (file: string) => SLOW_MARKERS.some(([marker]) => marker.test(readFileSync(file, "utf8")));
    expect(fullOnly.filter((file) => !marked(file)).map((file) => relative(ROOT, file))).toEqual([]);
  });

  // A hook without a timeout has jest's 5 s, which a loaded machine's teardown passes (support/teardown.ts).
  it("every hook that stops or kills what a test started is bounded by TEARDOWN_MS, not jest's default 5 s", () => {
    const unbounded = files.flatMap((file) => {
      const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const found: string[] = [];
      const visit = (node: ts.Node): void => {
        if (
          ts.isCallExpression(node) &&
          ts.isIdentifier(node.expression) &&
          /^(after|before)(All|Each)$/.test(node.expression.text) &&
          /\.(stop|kill|stopManaged\w*)\(/.test(node.arguments[0]?.getText() ?? "") &&
          node.arguments[1]?.getText() !== "TEARDOWN_MS"
        ) {
          found.push(`${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      return found;
    });
    expect(unbounded).toEqual([]);
  });
});
