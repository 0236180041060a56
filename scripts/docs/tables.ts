/**
 * The reference tables of docs/settings.md, derived from the code: the Terraform variables and outputs from
 * the synthesized stack (as terraform-docs does for modules), the settings from their zod schema.
 */
import { z } from "zod";
import { settingRules } from "../../settings/rules";
import { HOST_PATHS, LOGIN_HOME_PATHS, PATH_SETTINGS, PathRole } from "../../settings/host-layout";
import { referencesOf, StackJson } from "./terraform-json";

/** A Markdown table; cells are kept on one line, and `|` escaped (also inside code spans, as GFM requires). */
function table(header: string[], rows: string[][]): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
  return [header, header.map(() => "---"), ...rows].map((row) => `| ${row.map(cell).join(" | ")} |`).join("\n");
}

/** A value as a code span (strings as written, anything else, and the empty string, as JSON). */
const code = (value: unknown) => `\`${typeof value === "string" && value !== "" ? value : JSON.stringify(value)}\``;

/** Plain text made safe for Markdown: outside code spans, `<`, `>`, `_`, `*` and `[` are shown as written. */
export function plain(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part
            .replace(/&/g, "&amp;")
            .replace(/</g, "&lt;")
            .replace(/>/g, "&gt;")
            .replace(/([_*[\]])/g, "\\$1"),
    )
    .join("");
}

/** What a check's message says is expected (`Invalid value for variable "x": expected …` → `…`). */
function expectedOf(message: string): string {
  // What follows ": this value …" judges the value given (a private key pasted for a public one), not the rule.
  return message
    .replace(/^Invalid value for variable "[^"]*": expected /, "")
    .replace(/: this value [\s\S]*$/, "")
    .replace(/\.$/, "");
}

/**
 * The variables: name, description, type, default, sensitive, and the rule that the plan
 * enforces (its validation blocks, and the preconditions that read only this variable).
 */
export function variablesTable(stack: StackJson): string {
  const preconditions = new Map<string, string[]>();
  for (const items of Object.values(stack.resource ?? {})) {
    for (const body of Object.values(items)) {
      const checks =
        (body.lifecycle as { precondition?: { condition: string; error_message: string }[] } | undefined)
          ?.precondition ?? [];
      for (const check of checks) {
        const read = new Set(referencesOf({ condition: check.condition }).map((reference) => reference.target));
        const [only] = read;
        if (read.size === 1 && only.startsWith("var.")) {
          preconditions.set(only.slice(4), [...(preconditions.get(only.slice(4)) ?? []), check.error_message]);
        }
      }
    }
  }
  const rows = Object.entries(stack.variable ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, variable]) => [
      code(name),
      plain(variable.description ?? ""),
      variable.type ? code(variable.type) : "",
      variable.default === undefined ? "required" : code(variable.default),
      variable.sensitive ? "yes" : "no",
      [...(variable.validation ?? []).map((check) => check.error_message), ...(preconditions.get(name) ?? [])]
        .map(expectedOf)
        .map(plain)
        .join("; ") ||
        // A bool needs no validation block: Terraform's type conversion refuses anything else, naming the variable.
        (variable.type === "bool" ? "true or false (Terraform's type check)" : ""),
    ]);
  return table(["variable", "description", "type", "default", "sensitive", "rule (checked at plan)"], rows);
}

/** The outputs: name, description, sensitive. */
export function outputsTable(stack: StackJson): string {
  const rows = Object.entries(stack.output ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, output]) => [code(name), plain(output.description ?? ""), output.sensitive ? "yes" : "no"]);
  return table(["output", "description", "sensitive"], rows);
}

/**
 * The settings of a settings file: key (nested objects as dotted keys), description, default,
 * and the rule, which is the phrase of the setting's error message (settings/rules.ts), or
 * else what its JSON Schema states.
 */
export function settingsTable(schema: z.ZodObject): string {
  return table(["key", "description", "default", "rule (checked at synthesis)"], settingRows(schema, ""));
}

function settingRows(schema: z.ZodObject, prefix: string): string[][] {
  const rows: string[][] = [];
  for (const [key, field] of Object.entries(schema.shape) as [string, z.ZodType][]) {
    let inner: z.ZodType = field;
    let fallback: unknown;
    let optional = false;
    const description = () =>
      z.globalRegistry.get(field)?.description ?? z.globalRegistry.get(inner)?.description ?? "";
    for (;;) {
      if (inner instanceof z.ZodDefault) fallback = inner.def.defaultValue;
      else if (!(inner instanceof z.ZodOptional)) break;
      optional = true;
      inner = inner.def.innerType as z.ZodType;
    }
    if (inner instanceof z.ZodObject) {
      rows.push([
        code(`${prefix}${key}`),
        plain(description()),
        optional ? "optional" : "required",
        "an object of the settings below",
      ]);
      rows.push(...settingRows(inner, `${prefix}${key}.`));
      continue;
    }
    const rule = settingRules.get(inner)?.expected ?? settingRules.get(field)?.expected ?? describeJsonSchema(inner);
    rows.push([
      code(`${prefix}${key}`),
      plain(description()),
      fallback !== undefined ? code(fallback) : optional ? "optional" : "required",
      plain(rule),
    ]);
  }
  return rows;
}

/** A rule in words from what the JSON Schema of a field states, for fields without a phrase. */
function describeJsonSchema(field: z.ZodType): string {
  const json = z.toJSONSchema(field, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  if (Array.isArray(json.enum)) return `one of ${json.enum.map(code).join(", ")}`;
  const parts = [String(json.type ?? "any value")];
  if (json.minimum !== undefined || json.maximum !== undefined)
    parts.push(`from ${json.minimum ?? "-∞"} to ${json.maximum ?? "∞"}`);
  if (json.pattern) parts.push(`matching ${code(json.pattern)}`);
  return parts.join(" ");
}

/** The path settings: what each is, where it may be on the instance, and the setting it lies inside. */
export function pathSettingsTable(): string {
  const rows = (Object.entries(PATH_SETTINGS) as [string, PathRole][]).map(([name, role]) => [
    code(name),
    plain(role.what),
    role.inside ? `inside ${role.inside.map(code).join(" or ")}` : "anywhere clear of the paths below",
    plain([role.within ? `inside ${role.within}` : "", role.because ?? ""].filter(Boolean).join("; ")),
  ]);
  return table(["setting", "what it is", "on the instance", "why"], rows);
}

/** The host's own paths that path settings stay clear of, and the login user's files. */
export function hostPathsTable(): string {
  const rows = [
    ...HOST_PATHS.map((host) => [
      code(host.path),
      plain(host.what),
      host.tree ? "be it, hold it or lie inside it" : "be it or hold it",
    ]),
    ...LOGIN_HOME_PATHS.map((entry) => [
      code(`<loginHome>/${entry.name}`),
      plain(entry.what),
      "be it, hold it or lie inside it",
    ]),
  ];
  return table(["path", "what it is", "no path setting may"], rows);
}

/** Sensitive variables that a repository variable gives (scripts/ci/check-stack.sh's public_sensitive). */
export const PUBLIC_SENSITIVE_VARIABLES = ["ssh_public_key"];

/**
 * The repository variables that the workflows pass as Terraform variables (docs/github-actions.md, step 6):
 * every variable of the named stacks but their secrets, with the stacks that declare it and whether one requires it.
 */
export function repositoryVariablesTable(
  stacks: readonly { readonly name: string; readonly stack: StackJson }[],
): string {
  const rows = new Map<string, { required: Set<string>; optional: Set<string> }>();
  for (const { name, stack } of stacks) {
    for (const [variable, block] of Object.entries(stack.variable ?? {})) {
      if (block.sensitive && !PUBLIC_SENSITIVE_VARIABLES.includes(variable)) continue;
      if (!rows.has(variable)) rows.set(variable, { required: new Set(), optional: new Set() });
      rows.get(variable)![block.default === undefined ? "required" : "optional"].add(name);
    }
  }
  const all = stacks.length;
  const list = (names: Set<string>) => (names.size === all ? "every example" : [...names].sort().join(", "));
  return [
    "| repository variable | Terraform variable | required by | optional in |",
    "| --- | --- | --- | --- |",
    ...[...rows.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([variable, { required, optional }]) =>
          `| \`${variable.toUpperCase()}\` | \`${variable}\` | ${required.size ? list(required) : "-"} | ${optional.size ? list(optional) : "-"} |`,
      ),
  ].join("\n");
}
