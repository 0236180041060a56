/**
 * The one rule set of the project's commands' command lines (scripts/ops.ts, scripts/secrets.ts): every
 * value, an option's or a positional one, is checked here before anything runs, and the paths that go to
 * ssh are written so that ssh reads them back whole.
 *
 * - No value may start with `-`: `--user -oProxyCommand=…` would reach ssh as an option of its own.
 * - No value may be empty or hold a control character (a newline ends an ssh_config line).
 * - Each option's value has a kind (port, host, user, path, text) with its own check.
 * - A path goes to ssh as `-o Key="…"`: ssh splits an -o value on whitespace (UserKnownHostsFile takes
 *   several files) unless it is in double quotes, where `\` escapes `"` and `\`; and it expands `%` tokens
 *   in file names, so `%` is written `%%`. __tests__/scripts/cli-options.test.ts reads them back with `ssh -G`.
 */
import { resolve } from "path";
import { isHostName, isIPv4Address } from "../settings/grammars";
import { isIPv6 } from "net";

/** A mistake in a command line: exit 2, one line that names the option and what is expected. */
export class CommandLineError extends Error {}

/** A mistake or a refusal that the user can act on (the ops command's): one line, exit `exitCode` (2: the command line). */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Thrown for --help: its message (the command's help) goes to standard output and the command exits 0. */
export class HelpRequested extends Error {}

/** What an option's value is. */
export type OptionKind = "flag" | "port" | "host" | "user" | "path" | "text";

/** The options a command takes: `--name` → kind. */
export type OptionSpec = Readonly<Record<string, OptionKind>>;

/** A command line read by {@link parseCommandLine}. */
export interface CommandLine {
  readonly positional: string[];
  /** The options given, by name without `--`; a flag's value is "true". */
  readonly options: Record<string, string>;
}

const EXPECTED: Record<Exclude<OptionKind, "flag">, string> = {
  port: "a port number from 1 to 65535",
  host: "a host name or an IP address",
  user: "a login user name of 1 to 32 letters, digits and . _ -, starting with a letter or _",
  path: "a file's path, without control characters",
  text: "a value without control characters",
};

/** Why `value` cannot be given where `what` says, or undefined: the rules every value of every command follows. */
export function valueProblem(
  what: string,
  value: string,
  kind: Exclude<OptionKind, "flag"> = "text",
): string | undefined {
  if (value === "") return `${what} needs a value (${EXPECTED[kind]})`;
  if (value.startsWith("-"))
    return `${what} must not start with - (it would be read as an option): expected ${EXPECTED[kind]}`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value))
    return `${what} must not hold control characters such as a newline: expected ${EXPECTED[kind]}`;
  const ok = {
    port: () => /^[1-9][0-9]{0,4}$/.test(value) && Number(value) <= 65535,
    host: () => isHostName(value) || isIPv4Address(value) || isIPv6(value),
    user: () => /^[A-Za-z_][A-Za-z0-9._-]{0,31}$/.test(value),
    path: () => true,
    text: () => true,
  }[kind]();
  // A value that may be a secret (a key's text) is never repeated; the others are, to show what was read.
  return ok ? undefined : `${what} must be ${EXPECTED[kind]}, got ${JSON.stringify(value)}`;
}

/**
 * Reads `argv`: options of `spec` as `--name value` or `--name=value`, anything else positional (after
 * `--`, everything is). Every value and positional passes {@link valueProblem}; throws CommandLineError.
 */
export function parseCommandLine(argv: readonly string[], spec: OptionSpec): CommandLine {
  const positional: string[] = [];
  const options: Record<string, string> = {};
  let onlyPositional = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (onlyPositional || !arg.startsWith("-")) {
      const problem = valueProblem(`the argument ${JSON.stringify(arg)}`, arg);
      if (problem) throw new CommandLineError(problem);
      positional.push(arg);
      continue;
    }
    if (arg === "--") {
      onlyPositional = true;
      continue;
    }
    const [option, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const kind = option.startsWith("--") ? spec[option.slice(2)] : undefined;
    if (kind === undefined) throw new CommandLineError(`unknown option ${option}`);
    if (kind === "flag") {
      if (inline !== undefined) throw new CommandLineError(`${option} takes no value`);
      options[option.slice(2)] = "true";
      continue;
    }
    if (inline === undefined && i + 1 >= argv.length)
      throw new CommandLineError(`${option} needs a value (${EXPECTED[kind]})`);
    const value = inline ?? argv[++i];
    const problem = valueProblem(option, value, kind);
    if (problem) throw new CommandLineError(problem);
    options[option.slice(2)] = value;
  }
  return { positional, options };
}

/**
 * An ssh `-o` option whose value is a file: `Key="<absolute path>"`, quoted and escaped as ssh's own
 * argument splitter reads it (whitespace kept, `\` and `"` escaped, `%` doubled against token expansion).
 */
export function sshFileOption(key: string, path: string): string {
  const absolute = resolve(path);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(absolute))
    throw new CommandLineError(`${key}: a file's path must not hold control characters`);
  return `${key}="${absolute.replace(/[\\"]/g, (c) => `\\${c}`).replace(/%/g, "%%")}"`;
}
