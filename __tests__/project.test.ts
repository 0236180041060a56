import { readFileSync } from "fs";
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
