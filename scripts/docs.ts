/**
 * `npm run docs`: regenerates the files derived from the code, so that they cannot drift:
 * the settings' JSON Schema (from the zod schema). `--check` writes nothing and exits 1 when
 * a file differs (the jest test __tests__/docs.test.ts does the same check).
 */
import { readFileSync, writeFileSync } from "fs";
import { relative } from "path";
import { SETTINGS_JSON_SCHEMA_FILE, settingsJsonSchema } from "../settings/stack-settings";

/** A file and the content the code implies for it. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

/** Every generated file, with its expected content. */
export function generatedFiles(): GeneratedFile[] {
  return [{ path: SETTINGS_JSON_SCHEMA_FILE, content: settingsJsonSchema() }];
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
