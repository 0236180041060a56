import { execFileSync } from "child_process";
import { existsSync, readFileSync } from "fs";
import { resolve } from "path";
import packageJson from "../package.json";

const root = resolve(__dirname, "..");
const read = (name: string) => readFileSync(resolve(root, name), "utf8");

describe("project metadata", () => {
  it("the newest version of CHANGELOG.md is package.json's version, dated, after an Unreleased section", () => {
    const headings = [...read("CHANGELOG.md").matchAll(/^## \[([^\]]+)\](.*)$/gm)].map((m) => [m[1], m[2].trim()]);
    expect(headings[0][0]).toBe("Unreleased");
    const [newest, date] = headings[1];
    expect(newest).toBe(packageJson.version);
    expect(date).toMatch(/^- \d{4}-\d{2}-\d{2}$/);
    const versions = headings.slice(1).map(([version]) => version);
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("is licensed under Apache-2.0, with the licence's full text", () => {
    expect(packageJson.license).toBe("Apache-2.0");
    const licence = read("LICENSE");
    expect(licence).toContain("Apache License\n                           Version 2.0, January 2004");
    expect(licence).toContain("END OF TERMS AND CONDITIONS");
  });
});

describe("source comments", () => {
  // Comments state rules and reasons; history (issue numbers, commit ids, dated runs) belongs to CHANGELOG.md.
  const files = execFileSync("git", ["ls-files", "--", "*.ts", "*.js", "*.cjs", "*.sh", "*.py", "*.yml"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter((name) => name !== "" && !name.startsWith("__tests__/userdata/legacy/"));
  const comments = files.flatMap((file) =>
    read(file)
      .split("\n")
      .map((line, index) => ({ where: `${file}:${index + 1}`, line }))
      .filter(({ line }) => /^\s*(\/\/|\/?\*|#)/.test(line)),
  );

  it("name no issue, commit or run of a commit: that history is the CHANGELOG's", () => {
    const HISTORY = /\bissues? \d+\b|\bcommits? [0-9a-f]{7,40}\b|\bruns? of [0-9a-f]{7,40}\b/i;
    expect(
      comments.filter(({ line }) => HISTORY.test(line)).map(({ where, line }) => `${where}: ${line.trim()}`),
    ).toEqual([]);
  });

  it("name only files of the repository that exist", () => {
    // A test file's comment may name another test by its path below __tests__/; an example path is no file.
    const exists = (path: string) => existsSync(resolve(root, path)) || existsSync(resolve(root, "__tests__", path));
    const PATH =
      /\b((?:userdata|settings|constructs|topologies|scripts|docs|examples)\/[A-Za-z0-9_./-]+\.(?:ts|sh|md|json|py|js))\b/g;
    const stale = comments.flatMap(({ where, line }) =>
      [...line.matchAll(PATH)]
        .map((m) => m[1])
        .filter((path) => !exists(path) && path !== "scripts/x.sh")
        .map((path) => `${where}: ${path}`),
    );
    expect(stale).toEqual([]);
  });
});
