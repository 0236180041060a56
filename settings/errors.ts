/**
 * The error of a bad setting, and its construction from a schema failure. Every failure names
 * the setting and says what is expected, so that bad input stops synthesis before anything
 * reaches AWS.
 */
import { z } from "zod";

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
    const shown =
      value === undefined
        ? ""
        : ` (got ${cut(visible(redactCredentials(JSON.stringify(value) ?? String(value))), SHOWN_VALUE_LENGTH)})`;
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
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, (character) => {
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

/** Several problems of one settings file, reported at once: one line each, in the order found. */
export class SettingsErrors extends SettingsProblem {
  constructor(readonly problems: readonly SettingsProblem[]) {
    super(problems.map((problem) => problem.message).join("\n"));
    this.name = "SettingsErrors";
  }
}

/** `problems` (at least one) as one error to throw: the problem itself when there is one, else all of them. */
export function oneProblem(problems: readonly SettingsProblem[]): SettingsProblem {
  return problems.length === 1 ? problems[0] : new SettingsErrors(problems);
}

/** At most this many known keys are listed after an unknown key that is close to none of them. */
const LISTED_KEYS = 8;

/**
 * The problems of a failed parse of `input` by `schema`, one per setting. Our schemas give every
 * check the "expected" phrase as its message (see settings/rules.ts), so the issue's message is what
 * the user must provide. A misspelt key comes first, with the known key it is closest to ("did you
 * mean"); the required key it then misses is not reported again. Then every other setting whose own
 * value is refused; a failed check across settings only when there is none (the first such issue).
 */
export function settingsProblemsFrom(
  error: z.ZodError,
  input: unknown,
  schema: z.core.$ZodType,
  prefix = "",
): SettingsError[] {
  const name = (path: readonly PropertyKey[]) => `${prefix}${path.join(".")}` || "(settings file)";
  const valueAt = (path: readonly PropertyKey[]) => {
    let value: unknown = input;
    for (const key of path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key];
    return value;
  };
  const problems = new Map<string, SettingsError>();
  const suggested = new Set<string>();
  for (const issue of error.issues.filter((candidate) => candidate.code === "unrecognized_keys")) {
    const known = Object.keys(objectShapeAt(schema, issue.path));
    for (const key of issue.keys) {
      const closest = closestKey(key, known);
      if (closest !== undefined) suggested.add(name([...issue.path, closest]));
      problems.set(
        name([...issue.path, key]),
        new SettingsError(
          name([...issue.path, key]),
          closest !== undefined
            ? `one of the known settings (did you mean "${closest}"?)`
            : known.length <= LISTED_KEYS
              ? `one of the known settings (${known.join(", ")})`
              : "one of the known settings (docs/settings.md lists them)",
        ),
      );
    }
  }
  // A check across settings (paths apart, a name in its zone, …) that fails beside a refused value mostly
  // repeats that value's refusal from the other side: it counts once every value passes, and then its first issue.
  const refusedAlone = (issue: z.core.$ZodIssue) => {
    const field =
      issue.path.length > 0
        ? objectShapeAt(schema, issue.path.slice(0, -1))[String(issue.path[issue.path.length - 1])]
        : undefined;
    return issue.code !== "custom" || (field !== undefined && !z.safeParse(field, valueAt(issue.path)).success);
  };
  const own = error.issues.filter(refusedAlone);
  const checked = own.length > 0 ? own : error.issues.slice(0, 1);
  for (const issue of checked) {
    const setting = name(issue.path);
    if (issue.code === "unrecognized_keys" || problems.has(setting)) continue;
    if (issue.code === "invalid_type" && issue.expected === "object") {
      problems.set(setting, new SettingsError(setting, "a JSON object"));
      continue;
    }
    let value = valueAt(issue.path);
    // A required key a misspelt one stands for: the "did you mean" says it already.
    if (value === undefined && suggested.has(setting)) continue;
    // A default (not in the file) that collides with a given value: the check's own input.
    if (value === undefined && issue.code === "custom") value = issue.input;
    problems.set(setting, new SettingsError(setting, issue.message, value));
  }
  return [...problems.values()];
}

/**
 * The key of `known` closest to the unknown `key` (ignoring case), when it is close enough to be a
 * typo: at most `limit` edits, by default 2, or a third of the key's length for a longer key.
 */
export function closestKey(
  key: string,
  known: readonly string[],
  limit = Math.max(2, Math.floor(key.length / 3)),
): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/**
 * Damerau-Levenshtein distance (optimal string alignment): the insertions, deletions, substitutions
 * and swaps of two neighbours that turn `a` into `b` (`regoin` is 1 from `region`).
 */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The shape of the object schema found at `path` inside `schema` (through optional and default wrappers). */
function objectShapeAt(schema: z.core.$ZodType, path: readonly PropertyKey[]): Record<string, z.core.$ZodType> {
  const unwrap = (inner: z.core.$ZodType): z.core.$ZodType => {
    const def = inner._zod.def as { innerType?: z.core.$ZodType };
    return def.innerType ? unwrap(def.innerType) : inner;
  };
  let current = unwrap(schema);
  for (const key of path)
    current = unwrap((current._zod.def as { shape?: Record<PropertyKey, z.core.$ZodType> }).shape?.[key] ?? current);
  return (current._zod.def as { shape?: Record<string, z.core.$ZodType> }).shape ?? {};
}
