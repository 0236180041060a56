/**
 * `npm run docs`: regenerates what is derived from the code, so that it cannot drift: the
 * settings' JSON Schema (from the zod schema), the README's architecture diagram, the tables
 * of settings, Terraform variables and outputs in docs/settings.md (from the synthesized example
 * stack and the zod schema), and the scale-out topology's diagram and tables in docs/scale-out.md
 * (from the stack of examples/scale-out.json). `--check` writes nothing and exits 1 when a file differs; the jest
 * test __tests__/docs/generated.test.ts makes the same comparison.
 */
import { Testing } from "cdktf";
import { readdirSync, readFileSync, writeFileSync } from "fs";
import { relative, resolve } from "path";
import { CrmHostStack } from "../main";
import { ProvisioningUserData, USER_DATA_LIMIT_BYTES } from "../constructs/provisioning-user-data";
import {
  DEFAULT_SETTINGS_FILE,
  loadStackSettings,
  parseStackSettings,
  SETTINGS_JSON_SCHEMA_FILE,
  settingsJsonSchema,
  stackSettingsSchema,
} from "../settings/stack-settings";
import { readJsonFile } from "../settings/json-file";
import { deployPolicyJson } from "./docs/deploy-policy";
import { destroyedList } from "./docs/destroyed";
import { opsActionsTable } from "./docs/ops-actions";
import { architectureDiagram } from "./docs/diagram";
import { replaceSection } from "./docs/readme";
import {
  hostPathsTable,
  outputsTable,
  pathSettingsTable,
  repositoryVariablesTable,
  settingsTable,
  variablesTable,
} from "./docs/tables";
import { StackJson } from "./docs/terraform-json";

export const README_FILE = resolve(__dirname, "..", "README.md");
export const SETTINGS_DOC_FILE = resolve(__dirname, "..", "docs", "settings.md");
export const SCALE_OUT_DOC_FILE = resolve(__dirname, "..", "docs", "scale-out.md");
/** The settings of the scale-out topology's example, whose stack docs/scale-out.md shows. */
export const SCALE_OUT_SETTINGS_FILE = resolve(__dirname, "..", "examples", "scale-out.json");

export const SECRETS_DOC_FILE = resolve(__dirname, "..", "docs", "secrets.md");
export const OPERATIONS_DOC_FILE = resolve(__dirname, "..", "docs", "operations.md");
export const GITHUB_ACTIONS_DOC_FILE = resolve(__dirname, "..", "docs", "github-actions.md");
/** The deploy role's policy, generated from every example's stack, as users attach it. */
export const DEPLOY_POLICY_FILE = resolve(__dirname, "..", "docs", "deploy-role-policy.json");
/** The settings files of every example: the default and examples/*.json (the stacks npm test and npm run scan synthesize). */
export const EXAMPLE_SETTINGS_FILES = [
  DEFAULT_SETTINGS_FILE,
  ...readdirSync(resolve(__dirname, "..", "examples"))
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => resolve(__dirname, "..", "examples", name)),
];

/** A file and the content the code implies for it. */
export interface GeneratedFile {
  readonly path: string;
  readonly content: string;
}

/** The stack synthesized from the example settings, as Terraform JSON. */
export function exampleStackJson(file = DEFAULT_SETTINGS_FILE): StackJson {
  const stack = new CrmHostStack(Testing.app(), loadStackSettings(file));
  return JSON.parse(Testing.synth(stack)) as StackJson;
}

/** A Mermaid code block of the stack's architecture diagram. */
function diagramBlock(stack: StackJson): string {
  return `\`\`\`mermaid\n${architectureDiagram(stack)}\n\`\`\``;
}

/** `text` (the document at `path`) with its generated sections, name to content, brought up to date. */
function withSections(path: string, text: string, sections: Record<string, string>): string {
  const document = relative(resolve(__dirname, ".."), path);
  return Object.entries(sections).reduce(
    (current, [name, content]) => replaceSection(current, name, content, undefined, document),
    text,
  );
}

/** The README with its generated section (the diagram) brought up to date. */
export function generatedReadme(readme: string, stack: StackJson = exampleStackJson()): string {
  return withSections(README_FILE, readme, { diagram: diagramBlock(stack) });
}

/** docs/settings.md with its generated tables brought up to date. */
export function generatedSettingsDoc(text: string, stack: StackJson = exampleStackJson()): string {
  return withSections(SETTINGS_DOC_FILE, text, {
    settings: settingsTable(stackSettingsSchema),
    "path-settings": pathSettingsTable(),
    "host-paths": hostPathsTable(),
    variables: variablesTable(stack),
    outputs: outputsTable(stack),
  });
}

/** docs/scale-out.md with the scale-out stack's diagram, variables and outputs brought up to date. */
export function generatedScaleOutDoc(
  text: string,
  stack: StackJson = exampleStackJson(SCALE_OUT_SETTINGS_FILE),
): string {
  return withSections(SCALE_OUT_DOC_FILE, text, {
    diagram: diagramBlock(stack),
    variables: variablesTable(stack),
    outputs: outputsTable(stack),
  });
}

/** docs/github-actions.md with the deploy role's policy brought up to date. */
export function generatedGithubActionsDoc(
  text: string,
  policy: string,
  stacks: { name: string; stack: StackJson }[],
): string {
  return withSections(GITHUB_ACTIONS_DOC_FILE, text, {
    "deploy-policy": `\`\`\`json\n${policy.trimEnd()}\n\`\`\``,
    "repository-variables": repositoryVariablesTable(stacks),
  });
}

/** docs/operations.md with the table of the ops actions (userdata/ops-actions.ts) and the list of what destroy deletes, from the single-host examples' stacks. */
export function generatedOperationsDoc(text: string, stacks: readonly StackJson[]): string {
  return withSections(OPERATIONS_DOC_FILE, text, {
    "ops-actions": opsActionsTable(),
    destroyed: destroyedList(stacks),
  });
}

/** The user data of the example settings' stack, as it measures itself at synthesis, with `changes` to the settings. */
function exampleUserData(changes: Record<string, unknown>): ProvisioningUserData {
  const stack = new CrmHostStack(
    Testing.app(),
    parseStackSettings({ ...(readJsonFile(DEFAULT_SETTINGS_FILE) as object), ...changes }),
  );
  return stack.node
    .findAll()
    .find((construct): construct is ProvisioningUserData => construct instanceof ProvisioningUserData)!;
}

/** docs/secrets.md's sizes of the user data in both modes, as ProvisioningUserData counts them for settings/example.json. */
export function userDataSizes(): string {
  const inUserData = exampleUserData({ secrets: "user-data" });
  const budget = inUserData.secretBudgetBytes!;
  const parameterStore = exampleUserData({ secrets: "parameter-store" }).maxCompressedBytes;
  return `Sizes, for \`settings/example.json\`, as the stack counts them at synthesis (Node.js's gzip plus the margin for
Terraform's): in the user-data mode the script takes ${USER_DATA_LIMIT_BYTES - budget} of the ${USER_DATA_LIMIT_BYTES} compressed
bytes EC2 takes, leaving ${budget} for the three secrets' base64 (the plan checks them against it); in this mode, which
holds no secret, ${parameterStore}.`;
}

/** docs/secrets.md with the user data's sizes brought up to date. */
export function generatedSecretsDoc(text: string): string {
  return withSections(SECRETS_DOC_FILE, text, { "user-data-sizes": userDataSizes() });
}

/** Every generated file, with its expected content. */
export function generatedFiles(): GeneratedFile[] {
  const stack = exampleStackJson();
  const examples = EXAMPLE_SETTINGS_FILES.map((file) => ({
    name: loadStackSettings(file).stackName,
    stack: file === DEFAULT_SETTINGS_FILE ? stack : exampleStackJson(file),
  }));
  const policy = deployPolicyJson(examples.map((example) => example.stack));
  // The default example first: its counts are the ones the list gives.
  const singleHost = EXAMPLE_SETTINGS_FILES.filter(
    (file) => loadStackSettings(file).provisioning.topology === "single-host",
  ).map((file) => examples[EXAMPLE_SETTINGS_FILES.indexOf(file)].stack);
  return [
    { path: DEPLOY_POLICY_FILE, content: policy },
    {
      path: GITHUB_ACTIONS_DOC_FILE,
      content: generatedGithubActionsDoc(readOrEmpty(GITHUB_ACTIONS_DOC_FILE), policy, examples),
    },
    { path: SETTINGS_JSON_SCHEMA_FILE, content: settingsJsonSchema() },
    { path: README_FILE, content: generatedReadme(readOrEmpty(README_FILE), stack) },
    { path: SETTINGS_DOC_FILE, content: generatedSettingsDoc(readOrEmpty(SETTINGS_DOC_FILE), stack) },
    { path: OPERATIONS_DOC_FILE, content: generatedOperationsDoc(readOrEmpty(OPERATIONS_DOC_FILE), singleHost) },
    { path: SECRETS_DOC_FILE, content: generatedSecretsDoc(readOrEmpty(SECRETS_DOC_FILE)) },
    { path: SCALE_OUT_DOC_FILE, content: generatedScaleOutDoc(readOrEmpty(SCALE_OUT_DOC_FILE)) },
  ];
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** The command's help, each option in one line. */
export const DOCS_HELP = [
  "usage: npm run docs [-- --check]",
  "regenerates what is derived from the code: the settings' JSON Schema, the README's diagram, docs/settings.md's and",
  "docs/scale-out.md's tables, the deploy role's policy (docs/deploy-role-policy.json, docs/github-actions.md),",
  "docs/operations.md's list of what destroy deletes, docs/secrets.md's user data sizes",
  "options:",
  "  --check     write nothing; exit 1 naming each file that is out of date",
  "  -h, --help  this help",
].join("\n");

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(DOCS_HELP);
    process.exit(0);
  }
  const unknown = args.find((arg) => arg !== "--check");
  if (unknown !== undefined) {
    console.error(`docs: unknown option ${unknown}\n${DOCS_HELP}`);
    process.exit(2);
  }
  const check = args.includes("--check");
  let stale = 0;
  const files = generatedFiles();
  for (const file of files) {
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
  if (stale === 0) console.log(`docs: all ${files.length} generated files are up to date`);
}
