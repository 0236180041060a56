/**
 * The error of a bad setting, and its construction from a schema failure. Every failure names
 * the setting and says what is expected, so that bad input stops synthesis before anything
 * reaches AWS.
 */
import type { z } from "zod";

/** A problem with the user's settings: main.ts prints its one-line message, without a stack trace. */
export class SettingsProblem extends Error {}

/** The settings file cannot be read, is not JSON, or holds a key twice. */
export class SettingsFileError extends SettingsProblem {
  constructor(file: string, problem: string) {
    super(`Cannot use the settings file ${visible(file)}: ${cut(visible(redactCredentials(problem)), 300)}`);
    this.name = "SettingsFileError";
  }
}

/** A setting has a value that the stack cannot deploy. */
export class SettingsError extends SettingsProblem {
  constructor(
    /** Dotted name of the setting, as written in the settings file (for example `database.name`). */
    public readonly setting: string,
    /** What was expected, as a phrase (for example `a MariaDB identifier of 1 to 64 letters, digits or _`). */
    public readonly expected: string,
    /** The offending value, shown in the message unless the setting is secret. */
    value?: unknown,
  ) {
    const shown = value === undefined ? "" : ` (got ${cut(visible(redactCredentials(JSON.stringify(value) ?? String(value))), SHOWN_VALUE_LENGTH)})`;
    super(`Invalid setting "${setting}"${shown}: expected ${expected}.`);
    this.name = "SettingsError";
  }
}

/** A setting of an earlier version that is gone: the message names it and what took its place. */
export class RemovedSettingError extends SettingsProblem {
  constructor(
    /** The setting's name, as written in the settings file. */
    public readonly setting: string,
    /** What took its place, as a phrase. */
    instead: string,
  ) {
    super(`The setting "${setting}" is gone: ${instead}; remove it from the settings file (see CHANGELOG.md).`);
    this.name = "RemovedSettingError";
  }
}

/** Longest value shown in a message, in characters (a pasted file or key must not flood the terminal). */
export const SHOWN_VALUE_LENGTH = 80;

/**
 * `text` with every character that is not visible on one line written as a `\uXXXX` escape: controls
 * (C0, DEL, C1 such as U+0085), format characters (bidirectional overrides, U+200B, U+FEFF), the line
 * and paragraph separators, and lone surrogates. A message then stays one line and reads as written.
 */
export function visible(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu,
    (character) => {
      const code = character.codePointAt(0)!.toString(16);
      return code.length > 4 ? `\\u{${code}}` : `\\u${code.padStart(4, "0")}`;
    });
}

/** `text`, cut to `max` characters with a note of its length. */
function cut(text: string, max: number): string {
  const characters = [...text];
  return characters.length <= max ? text : `${characters.slice(0, max).join("")}… (${characters.length} characters)`;
}

/**
 * Hides everything that may be user-info of an address (`https://user:token@host` →
 * `https://***@host`): up to the last `@` after `//`, or, without `//`, from the start up to the
 * last `@` after a `:` (`user:token@host` → `***@host`). A password may hold `/`, `@`, spaces or quotes, so nothing is assumed
 * about where it ends but the last `@`.
 */
export function redactCredentials(text: string): string {
  if (text.includes("//")) return text.replace(/\/\/[\s\S]*@/, "//***@");
  return text.replace(/^("?)[^:@]*:[\s\S]*@/, "$1***@");
}

/**
 * The SettingsError for the first issue of a failed parse of `input` by `schema`. Our schemas
 * give every check the "expected" phrase as its message (see settings/rules.ts), so the issue's
 * message is what the user must provide. A misspelt key is reported before the required key it
 * misses, with the keys that are allowed where it stands.
 */
export function settingsErrorFrom(error: z.ZodError, input: unknown, schema: z.core.$ZodType, prefix = ""): SettingsError {
  const issue = error.issues.find((candidate) => candidate.code === "unrecognized_keys") ?? error.issues[0];
  const name = (path: readonly PropertyKey[]) => `${prefix}${path.join(".")}` || "(settings file)";
  if (issue.code === "unrecognized_keys") {
    const known = Object.keys(objectShapeAt(schema, issue.path));
    return new SettingsError(name([...issue.path, issue.keys[0]]), `one of the known settings (${known.join(", ")})`);
  }
  if (issue.code === "invalid_type" && issue.expected === "object") {
    return new SettingsError(name(issue.path), "a JSON object");
  }
  let value: unknown = input;
  for (const key of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
  // A default (not in the file) that collides with a given value: the check's own input.
  if (value === undefined && issue.code === "custom") value = issue.input;
  return new SettingsError(name(issue.path), issue.message, value);
}

/** The shape of the object schema found at `path` inside `schema` (through optional and default wrappers). */
function objectShapeAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): Record<string, z.core.$ZodType> {
  const unwrap = (inner: z.core.$ZodType): z.core.$ZodType => {
    const def = inner._zod.def as { innerType?: z.core.$ZodType };
    return def.innerType ? unwrap(def.innerType) : inner;
  };
  let current = unwrap(schema);
  for (const key of path) current = unwrap((current._zod.def as { shape?: Record<PropertyKey, z.core.$ZodType> }).shape?.[key] ?? current);
  return (current._zod.def as { shape?: Record<string, z.core.$ZodType> }).shape ?? {};
}
