import { readFileSync } from "fs";
import { relative, resolve } from "path";
import { generatedFiles } from "../../scripts/docs";
import exampleSettings from "../../settings/example.json";
import { SETTINGS_JSON_SCHEMA_FILE } from "../../settings/stack-settings";

const root = resolve(__dirname, "..", "..");

describe("generated documentation (npm run docs)", () => {
  it.each(generatedFiles().map((file) => [relative(root, file.path), file] as const))("%s is current", (name, file) => {
    let committed = "";
    try {
      committed = readFileSync(file.path, "utf8");
    } catch {
      // A missing file is as stale as a changed one.
    }
    if (committed !== file.content) {
      throw new Error(`${name} differs from what the code generates: run \`npm run docs\` and commit the result`);
    }
  });

  it("the example settings point editors at the published JSON Schema", () => {
    expect(resolve(root, "settings", exampleSettings.$schema)).toBe(SETTINGS_JSON_SCHEMA_FILE);
    const schema = JSON.parse(readFileSync(SETTINGS_JSON_SCHEMA_FILE, "utf8"));
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(Object.keys(exampleSettings)));
    expect(schema.required).toEqual(expect.arrayContaining(["stackName", "repoUrl", "gitEmail"]));
  });
});
