/**
 * The README is the front door and docs/ holds the task pages: every relative link among them
 * reaches a file of the repository, and every #anchor a heading of the page it names (GitHub's
 * anchors: the heading in lower case, punctuation dropped, spaces as -).
 */
import { existsSync, readdirSync, readFileSync } from "fs";
import { dirname, join, relative, resolve } from "path";

const ROOT = resolve(__dirname, "../..");
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor of a heading. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1])));
}

describe.each(PAGES)("links of %s", (page) => {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((link) => !/^[a-z]+:/.test(link));

  it("reach existing files and headings", () => {
    const broken = links.filter((link) => {
      const [path, anchor] = link.split("#");
      const target = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
      if (!existsSync(target)) return true;
      return anchor !== undefined && target.endsWith(".md") && !anchors(target).has(anchor);
    });
    expect(broken.map((link) => `${page} -> ${link}`)).toEqual([]);
  });
});

describe("the front door", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");

  it("is at most about 250 lines and links every page of docs/", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(260);
    const linked = new Set([...readme.matchAll(/\]\((docs\/[^)#]+)/g)].map((match) => match[1]));
    expect(PAGES.filter((page) => page.startsWith("docs/") && !linked.has(page))).toEqual([]);
  });

  it("computes anchors as GitHub does", () => {
    expect(anchorOf("Restoring the database from a snapshot")).toBe("restoring-the-database-from-a-snapshot");
    expect(anchorOf("Settings file (`CRM_SETTINGS=path/to/settings.json npm run synth`)")).toBe(
      "settings-file-crm_settingspathtosettingsjson-npm-run-synth",
    );
    expect(relative(ROOT, join(ROOT, "docs"))).toBe("docs");
  });
});
