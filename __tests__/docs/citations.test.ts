/**
 * The stack this project re-creates is described in the repository itself, docs/original-stack.md, and cited in
 * one form, "docs/original-stack.md §2.2": a clone holds everything its code, tests and pages cite. So no file of
 * the repository names a path outside it (the place the original description was first read from, or a page's link
 * that climbs out of the repository), every § names a section that page has, on a line that names the page, and
 * the older forms of citing ("spec 2.2", "the spec's") are gone. CHANGELOG.md's entries are history, in the words
 * of their time, and keep them.
 */
import { spawnSync } from "child_process";
import { readFileSync } from "fs";
import { dirname, relative, resolve, sep } from "path";

const ROOT = resolve(__dirname, "../..");
const PAGE = "docs/original-stack.md";

/** This file, which holds examples of everything it looks for. */
const SELF = relative(ROOT, __filename).split(sep).join("/");

/** The repository's files, committed or new (not ignored), with their text; binary files and this one left out. */
function repositoryFiles(): { path: string; text: string }[] {
  const listed = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split("\n")
    .filter((path) => path !== "" && path !== SELF)
    .flatMap((path) => {
      let text: string;
      try {
        text = readFileSync(resolve(ROOT, path), "utf8");
      } catch {
        return []; // listed, but deleted in the working tree
      }
      return text.includes("\u0000") ? [] : [{ path, text }];
    });
}

/** Where the original description was first read, outside any clone: a directory beside the repository, its file. */
const OUTSIDE = [/\.\.\/shared\//g, /\bshared\/spec\//g, /000_7d957692ea9ce3fa/g];

/** Whether a path, relative to a file of the repository, leads out of the repository. */
const climbsOut = (file: string, target: string) =>
  relative(ROOT, resolve(ROOT, dirname(file), target)).split(sep)[0] === "..";

/**
 * The paths a file names outside the repository: OUTSIDE's, and in a page (*.md) the links that climb out of it.
 * (Other relative paths in the code, such as a state file's `../../../terraform.dev.tfstate`, are relative to
 * Terraform's working directory, not to the file, and cite nothing.)
 */
export function pathsOutside(path: string, text: string): string[] {
  const links = path.endsWith(".md")
    ? [...text.matchAll(/\]\(([^)\s#]+)/g)]
        .map((match) => match[1])
        .filter((to) => !/^[a-z]+:/.test(to) && climbsOut(path, to))
    : [];
  return [...links, ...OUTSIDE.flatMap((pattern) => text.match(pattern) ?? [])];
}

/** The section numbers of a page: its headings that start with one ("## 2. Resources", "### 2.2 Security"). */
export function sectionsOf(page: string): Set<string> {
  return new Set([...page.matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((match) => match[1]));
}

/** What is wrong with the § citations of a file's text (nothing: []). */
export function citationProblems(path: string, text: string, sections: Set<string>): string[] {
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    const cited = [...line.matchAll(/§\s*(\d+(?:\.\d+)?)?/g)];
    if (cited.length === 0) return;
    // The page cites its own sections by number alone.
    if (path !== PAGE && !line.includes("original-stack.md")) problems.push(`${path}:${i + 1}: § without ${PAGE}`);
    for (const [whole, section] of cited) {
      if (section === undefined || !sections.has(section)) {
        problems.push(`${path}:${i + 1}: "${whole}" is no section of ${PAGE}`);
      }
    }
  });
  return problems;
}

/** The older ways of citing the original description. */
const OLD_FORMS = [/\bthe spec\b/i, /\bspec (?:sections? |steps? )?\d/i, /\bSpec: /];

/** The lines of a file's text that cite the original description the old way. */
export function oldForms(path: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, i) => (OLD_FORMS.some((form) => form.test(line)) ? [`${path}:${i + 1}: ${line.trim()}`] : []));
}

const files = repositoryFiles();
const page = readFileSync(resolve(ROOT, PAGE), "utf8");
const sections = sectionsOf(page);

describe(`citations of the original stack (${PAGE})`, () => {
  it("no file of the repository names a path outside it", () => {
    expect(files.flatMap(({ path, text }) => pathsOutside(path, text).map((found) => `${path}: ${found}`))).toEqual([]);
  });

  it("the page keeps the original description's numbering: sections 1 to 9, 2.1 to 2.5 and 3.1", () => {
    expect([...sections]).toEqual([
      "1",
      "2",
      "2.1",
      "2.2",
      "2.3",
      "2.4",
      "2.5",
      "3",
      "3.1",
      "4",
      "5",
      "6",
      "7",
      "8",
      "9",
    ]);
  });

  it("every § names a section of the page, on a line that names the page", () => {
    expect(files.flatMap(({ path, text }) => citationProblems(path, text, sections))).toEqual([]);
    // Not vacuous: the code, the tests and the other pages cite it.
    const citing = files.filter(({ path, text }) => path !== PAGE && /original-stack\.md §\d/.test(text));
    expect(citing.length).toBeGreaterThan(10);
  });

  it("nothing cites it the old way (CHANGELOG.md's history aside)", () => {
    const current = files.filter(({ path }) => path !== "CHANGELOG.md");
    expect(current.flatMap(({ path, text }) => oldForms(path, text))).toEqual([]);
  });

  it("each check finds what it is for (controls)", () => {
    expect(pathsOutside("README.md", "the description (`../shared/notes.txt`), [x](../x.md), [y](docs/y.md)")).toEqual([
      "../x.md",
      "../shared/",
    ]);
    expect(pathsOutside("docs/a.md", "[up](../README.md) [out](../../x.md)")).toEqual(["../../x.md"]);
    expect(pathsOutside("a.ts", 'import { y } from "../../settings/rules"; // ../x.md')).toEqual([]);
    expect(pathsOutside("a.ts", "/work/shared/spec/000_7d957692ea9ce3fa.txt")).toEqual([
      "shared/spec/",
      "000_7d957692ea9ce3fa",
    ]);
    expect(citationProblems("a.ts", "// docs/original-stack.md §2.2 and §8", sections)).toEqual([]);
    expect(citationProblems("a.ts", "// docs/original-stack.md §2.9\n// original stack §2.2", sections)).toEqual([
      `a.ts:1: "§2.9" is no section of ${PAGE}`,
      `a.ts:2: § without ${PAGE}`,
    ]);
    const old = "spec 2.2\nthe spec's port\nas the spec says\nspec section 3\nSpec: `x`\nspecification\nOptionSpec";
    expect(oldForms("a.ts", old)).toHaveLength(5);
  });
});
