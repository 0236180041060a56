/**
 * What README.md says `npm run tools` installs is what scripts/ci/install-tools.sh installs, and what it
 * says CI runs is what .ci/run runs: both files are read, so a tool added to the script, or a step to
 * .ci/run, fails here until the README names it.
 *
 * The README names every tool the script pins and builds or installs itself (Terraform at its version,
 * and each Python or Go tool), and of the Debian packages only some, each of which must be one of the
 * script's packages of its group: the tests' (APT_PACKAGES) or the VM boot test's (BOOT_PACKAGES).
 */
import { readFileSync } from "fs";
import { resolve } from "path";

const ROOT = resolve(__dirname, "../..");
const read = (file: string) => readFileSync(resolve(ROOT, file), "utf8");
/** The README's prose on one line: a sentence may be wrapped anywhere. */
const readme = read("README.md").replace(/\s+/g, " ");
const script = read("scripts/ci/install-tools.sh");

/** The words of a bash array assignment of install-tools.sh (`NAME=(a b \n c)`). */
function bashArray(pattern: RegExp): string[] {
  const match = script.match(pattern);
  if (!match) throw new Error(`scripts/ci/install-tools.sh: no ${pattern}`);
  return match[1].split(/\s+/).filter(Boolean);
}

/** The tools the script installs when given none (its groups apt and boot are Debian packages). */
const defaultTools = bashArray(/\|\| tools=\(([^)]*)\)/);
const pinnedTools = defaultTools.filter((tool) => tool !== "apt" && tool !== "boot");
const aptPackages = bashArray(/^APT_PACKAGES=\(([^)]*)\)/m);
const bootPackages = bashArray(/^BOOT_PACKAGES=\(([^)]*)\)/m);
const terraformVersion = script.match(/^TERRAFORM_VERSION="\$\{CRM_TERRAFORM_VERSION:-([^}]+)\}"/m)?.[1];

/** The README's sentence on `npm run tools`: up to where it turns to the CLI configuration it writes. */
const toolsSentence = readme.match(/`npm run tools` installs what the tests use(.*?)and writes/)?.[1] ?? "";

/** The Debian package a name of the README stands for: itself, or the package it is the first word of. */
const packageOf = (name: string, packages: string[]) => {
  const word = name.toLowerCase().replace(/\s+/g, "");
  return packages.find((pkg) => pkg === word || pkg.startsWith(`${word}-`));
};

describe("README: what npm run tools installs", () => {
  it("reads the script's tools, its two groups of Debian packages and the Terraform pin", () => {
    expect(defaultTools).toEqual(expect.arrayContaining(["apt", "boot", "terraform"]));
    expect(pinnedTools.length).toBeGreaterThanOrEqual(5);
    expect(aptPackages).toContain("mariadb-server");
    expect(bootPackages).toContain("mmdebstrap");
    expect(terraformVersion).toMatch(/^\d+\.\d+\.\d+$/);
    expect(toolsSentence).not.toBe("");
  });

  it("names every tool the script pins, Terraform at the script's version", () => {
    const named = (tool: string) => new RegExp(`\\b${tool}\\b`, "i").test(toolsSentence);
    expect(pinnedTools.filter((tool) => !named(tool))).toEqual([]);
    expect(toolsSentence).toContain(`Terraform ${terraformVersion}`);
  });

  it("names only what the script installs: its pinned tools, the tests' Debian packages, the boot test's", () => {
    // ": <pinned>; from Debian <tests'>, … and the VM boot test's <boot test's> (all: `<the script>`); "
    const shape = new RegExp(
      "^: (.*?); from Debian (.*?), … and the VM boot test's (.*?) " + "\\(all: `scripts/ci/install-tools\\.sh`\\); $",
    );
    const parts = toolsSentence.match(shape);
    expect(parts).not.toBeNull();
    const list = (text: string) => text.split(/, | and /).map((name) => name.trim());
    const [, pinned, apt, boot] = parts!;
    // "Terraform 1.11.4": the tool, then its version.
    const pinnedNamed = list(pinned).map((name) => name.replace(/ \S*\d\S*$/, "").toLowerCase());
    expect(pinnedNamed.sort()).toEqual([...pinnedTools].sort());
    expect(list(apt).filter((name) => !packageOf(name, aptPackages))).toEqual([]);
    expect(list(boot).filter((name) => !packageOf(name, bootPackages))).toEqual([]);
  });
});

describe("README: what CI runs", () => {
  const packageScripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
  /** The commands of .ci/run: its lines that are not comments, settings or its cd. */
  const ciCommands = read(".ci/run")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^(#|set |cd |export )/.test(line));

  it("names each step of .ci/run, in its order (an npm script by the command it runs)", () => {
    const sentence = readme.match(/CI \(`\.ci\/run`\) runs (.*?)\. /)?.[1] ?? "";
    const named = [...sentence.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    const asRun = named.map((command) => {
      const script = command.match(/^npm run (\S+)$/)?.[1];
      return script === undefined ? command : packageScripts[script];
    });
    expect(ciCommands.length).toBeGreaterThanOrEqual(3);
    // A step may add options the README leaves out (npm ci --no-audit).
    const shortened = ciCommands.map((command, i) => {
      const named = asRun[i];
      return named !== undefined && command.startsWith(`${named} `) ? named : command;
    });
    expect(asRun).toEqual(shortened);
  });
});

describe("README: the Deploy section", () => {
  it("says to source scripts/ci/env.sh before its commands (the Terraform and CLI configuration of npm run tools)", () => {
    const deploy =
      read("README.md")
        .split(/^## Deploy$/m)[1]
        ?.split(/^## /m)[0] ?? "";
    const beforeCommands = deploy.split("```sh")[0];
    expect(beforeCommands.replace(/\s+/g, " ")).toMatch(/`npm run tools`, first `source scripts\/ci\/env\.sh`/);
  });
});
