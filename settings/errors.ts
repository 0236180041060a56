/**
 * Validation helpers shared by the stack settings (settings/) and the provisioning
 * settings (userdata/). Every failure names the setting and says what is expected,
 * so that bad input stops synthesis before anything reaches AWS.
 */

/** A setting has a value that the stack cannot deploy. */
export class SettingsError extends Error {
  constructor(
    /** Dotted name of the setting, as written in the settings file (for example `database.name`). */
    public readonly setting: string,
    /** What was expected, as a phrase (for example `a MariaDB identifier of 1 to 64 letters, digits or _`). */
    public readonly expected: string,
    /** The offending value, shown in the message unless the setting is secret. */
    value?: unknown,
  ) {
    const shown = value === undefined ? "" : ` (got ${redactCredentials(JSON.stringify(value))})`;
    super(`Invalid setting "${setting}"${shown}: expected ${expected}.`);
    this.name = "SettingsError";
  }
}

/** Hides the user-info part of any address in `text` (`https://user:token@host` → `https://***@host`). */
function redactCredentials(text: string): string {
  return text.replace(/(\/\/)[^/@\s"]*@/g, "$1***@");
}

/** Throws unless `value` is a string matching `pattern` in full. */
export function requireMatch(setting: string, value: unknown, pattern: RegExp, expected: string): string {
  if (typeof value !== "string" || !pattern.test(value)) {
    throw new SettingsError(setting, expected, value);
  }
  return value;
}

/** Throws unless `value` is an absolute, normalised POSIX path made of safe characters. */
export function requireAbsolutePath(setting: string, value: unknown): string {
  const expected = "an absolute path such as /home/ec2-user/app (letters, digits, / . _ - only; no .. or //)";
  const path = requireMatch(setting, value, /^(\/[A-Za-z0-9._-]+)+$/, expected);
  if (path.split("/").some((part) => part === "." || part === "..")) {
    throw new SettingsError(setting, expected, value);
  }
  return path;
}

/** Throws unless `value` is a printable one-line string (no control characters) of 1 to `max` characters. */
export function requirePrintable(setting: string, value: unknown, max: number): string {
  // eslint-disable-next-line no-control-regex
  return requireMatch(setting, value, new RegExp(`^[^\\u0000-\\u001f\\u007f]{1,${max}}$`),
    `printable text of 1 to ${max} characters with no control characters`);
}
