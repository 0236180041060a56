/**
 * `npm run docs`: regenerates what is derived from the code, so that it cannot drift: the
 * settings' JSON Schema (from the zod schema), and the
 * README's architecture diagram and its tables of settings, Terraform variables and outputs (from
 * the synthesized example stack and the zod schema). `--check` writes nothing and exits 1 when a file differs; the jest test
 * __tests__/docs.test.ts makes the same comparison.
 */
import { Testing } from "cdktf";
import { readFileSync, writeFileSync } from "fs";
import { relative, resolve } from "path";
import { CrmHostStack } from "../main";
import {
  DEFAULT_SETTINGS_FILE, loadStackSettings, SETTINGS_JSON_SCHEMA_FILE, settingsJsonSchema, stackSettingsSchema,
} from "../settings/stack-settings";
import { architectureDiagram } from "./docs/diagram";
import { replaceSection } from "./docs/readme";
import { outputsTable, settingsTable, variablesTable } from "./docs/tables";
import { StackJson } from "./docs/terraform-json";

export const README_FILE = resolve(__dirname, "..", "README.md");

/** A file and the content the code implies for it. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

/** The stack synthesized from the example settings, as Terraform JSON. */
export function exampleStackJson(): StackJson {
  const stack = new CrmHostStack(Testing.app(), loadStackSettings(DEFAULT_SETTINGS_FILE));
  return JSON.parse(Testing.synth(stack)) as StackJson;
}

/** The README with its generated sections brought up to date. */
export function generatedReadme(readme: string, stack: StackJson = exampleStackJson()): string {
  const sections: [string, string][] = [
    ["diagram", `\`\`\`mermaid\n${architectureDiagram(stack)}\n\`\`\``],
    ["settings", settingsTable(stackSettingsSchema)],
    ["variables", variablesTable(stack)],
    ["outputs", outputsTable(stack)],
  ];
  return sections.reduce((text, [name, content]) => replaceSection(text, name, content), readme);
}

/** Every generated file, with its expected content. */
export function generatedFiles(): GeneratedFile[] {
  return [
    { path: SETTINGS_JSON_SCHEMA_FILE, content: settingsJsonSchema() },
    { path: README_FILE, content: generatedReadme(readOrEmpty(README_FILE)) },
  ];
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

if (require.main === module) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const file of generatedFiles()) {
    const name = relative(process.cwd(), file.path);
    if (readOrEmpty(file.path) === file.content) continue;
    stale++;
    if (check) console.error(`${name} is out of date: run \`npm run docs\``);
    else {
      writeFileSync(file.path, file.content);
      console.log(`docs: wrote ${name}`);
    }
  }
  if (check && stale > 0) process.exit(1);
}
