/**
 * `npm run secrets -- <stackName> set|rotate|check [secret…]`: a stack's three secrets as SecureString
 * parameters, for the `parameter-store` mode (docs/secrets.md). The stack is found among the settings
 * files of `CRM_SETTINGS` (the example set when unset); the region and key come from its settings.
 *
 *   set     puts the named secrets (default: all three), each read from standard input (one line each,
 *           in the order given) or, on a terminal, from a prompt that does not echo; never from argv
 *   rotate  new random database passwords (db-root-password, app-db-password by default), never shown;
 *           a new source-host-token is read as `set` reads it. Then apply them on the host with
 *           `npm run ops -- <stackName> rotate-secrets` (the host's `<app>-ops rotate-secrets`)
 *   check   which parameters exist, their type, key and tag, without reading any value; exit 1 when one is
 *           missing, not a SecureString or without the tag that the plan-time check needs
 *
 * Values go from standard input or the prompt to Parameter Store over HTTPS (AWS SDK for JavaScript v3):
 * they are never in a process's arguments or environment, a file or the output.
 */
import { randomBytes } from "crypto";
import { createInterface } from "readline";
import { Writable } from "stream";
import {
  AddTagsToResourceCommand,
  DescribeParametersCommand,
  ListTagsForResourceCommand,
  PutParameterCommand,
  SSMClient,
} from "@aws-sdk/client-ssm";
import { MAX_SECRET_LENGTH } from "../constructs/constants";
import { SECRET_PARAMETER_LEAVES, SECRET_PARAMETER_TAG, secretParameterNames } from "../constructs/secret-parameters";
import { isPrintableDotenvValue, isPrintableText, UNPRINTABLE_WORDS } from "../constructs/variable-rules";
import { loadEnvironments } from "../settings/environments";
import { CommandLineError, HelpRequested, parseCommandLine } from "./cli-options";
import { StackSettings } from "../settings/stack-settings";

type Secret = (typeof SECRET_PARAMETER_LEAVES)[keyof typeof SECRET_PARAMETER_LEAVES];
const SECRETS = Object.values(SECRET_PARAMETER_LEAVES) as Secret[];
const COMMANDS = ["set", "rotate", "check"] as const;
type Command = (typeof COMMANDS)[number];

/** What `rotate` changes when no secret is named: the two database passwords, which it can make itself. */
const ROTATED_BY_DEFAULT: Secret[] = ["db-root-password", "app-db-password"];

/** A problem the operator fixes (a usage error, a bad value, a missing parameter): printed as one line, no stack trace. */
export class SecretsCommandError extends Error {}

const USAGE = `usage: npm run secrets -- <stackName> ${COMMANDS.join("|")} [${SECRETS.join("|")} …]`;

/** What each command does, one line each (--help). */
const COMMAND_SUMMARIES: Record<Command, string> = {
  set: "put the named secrets (default: all) from standard input, one line each, or a prompt that does not echo",
  rotate:
    "new random database passwords (a new source-host-token if named, read as set reads it); then apply them on the host",
  check: "which parameters exist, their type, key and tag, without reading a value; exit 1 if one is missing or wrong",
};

/** The command's help: each command and argument in one line. */
export const HELP = [
  USAGE,
  'puts a stack\'s secrets in Parameter Store as SecureStrings, for "secrets": "parameter-store" (docs/secrets.md)',
  "commands:",
  ...COMMANDS.map((command) => `  ${command.padEnd(8)}${COMMAND_SUMMARIES[command]}`),
  "arguments:",
  "  <stackName>  a stack of the settings files of CRM_SETTINGS (default: settings/example.json)",
  `  secret…      any of ${SECRETS.join(", ")}; values are never arguments`,
  "options:",
  "  -h, --help   this help",
  "needs AWS credentials for the stack's account and region (check: aws sts get-caller-identity; npm run doctor)",
].join("\n");

/** Parses `<stackName> <command> [secret…]`. */
export function parseArguments(args: string[]): {
  stackName: string;
  command: Command;
  secrets: Secret[];
  named: boolean;
} {
  if (args.includes("--help") || args.includes("-h")) throw new HelpRequested(HELP);
  let positional: string[];
  try {
    ({ positional } = parseCommandLine(args, {}));
  } catch (error) {
    if (error instanceof CommandLineError) throw new SecretsCommandError(`${error.message}; ${USAGE}`);
    throw error;
  }
  const [stackName, command, ...names] = positional;
  if (!stackName || !command) throw new SecretsCommandError(USAGE);
  if (!(COMMANDS as readonly string[]).includes(command))
    throw new SecretsCommandError(`unknown command ${JSON.stringify(command)}; ${USAGE}`);
  const unknown = names.filter((name) => !(SECRETS as string[]).includes(name));
  if (unknown.length > 0)
    throw new SecretsCommandError(
      `unknown secret ${JSON.stringify(unknown[0])}: expected one of ${SECRETS.join(", ")} (values are never arguments: give them on standard input)`,
    );
  const chosen =
    names.length > 0 ? [...new Set(names as Secret[])] : command === "rotate" ? ROTATED_BY_DEFAULT : SECRETS;
  return { stackName, command: command as Command, secrets: chosen, named: names.length > 0 };
}

/** The settings of `stackName` among the settings files of CRM_SETTINGS. */
export function stackSettings(stackName: string, environments: StackSettings[] = loadEnvironments()): StackSettings {
  const found = environments.find((settings) => settings.stackName === stackName);
  if (!found) {
    throw new SecretsCommandError(
      `no settings file of CRM_SETTINGS defines the stack ${JSON.stringify(stackName)} ` +
        `(it defines ${environments.map((settings) => settings.stackName).join(", ")})`,
    );
  }
  return found;
}

/** Why `value` cannot be the secret `secret` (the rules of the user-data mode's variables), or undefined. */
export function valueProblem(secret: Secret, value: string): string | undefined {
  if (!isPrintableText(value, MAX_SECRET_LENGTH))
    return `${secret} must be 1 to ${MAX_SECRET_LENGTH} characters, with ${UNPRINTABLE_WORDS}`;
  if (secret === SECRET_PARAMETER_LEAVES.appDbPassword && !isPrintableDotenvValue(value, MAX_SECRET_LENGTH)) {
    return `${secret} must be a value the app's .env file can carry for dotenv (see docs/settings.md, app_db_password)`;
  }
  return undefined;
}

/** Reads one value per secret: lines of standard input, or a prompt that does not echo on a terminal. */
async function readValues(secrets: Secret[]): Promise<string[]> {
  if (secrets.length === 0) return [];
  if (process.stdin.isTTY) return prompted(secrets);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const expected = `expected ${secrets.length} line(s), one for each of ${secrets.join(", ")}`;
  // Nothing at all (</dev/null, a pipe from a command that failed) is not one empty line.
  if (text === "")
    throw new SecretsCommandError(`standard input is empty; ${expected} (or run it on a terminal to be prompted)`);
  const lines = text.replace(/\r?\n$/, "").split(/\r?\n/);
  if (lines.length !== secrets.length) {
    throw new SecretsCommandError(`standard input holds ${lines.length} line(s); ${expected}`);
  }
  return lines;
}

/**
 * Asks for each secret on the terminal with Node's readline; what is typed is not echoed (readline writes
 * to a stream that passes on only the prompts).
 */
async function prompted(secrets: Secret[]): Promise<string[]> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done();
    },
  });
  const terminal = createInterface({ input: process.stdin, output, terminal: true });
  const values: string[] = [];
  try {
    for (const secret of secrets) {
      muted = false;
      const answer = new Promise<string>((resolveAnswer, reject) => {
        terminal.question(`${secret}: `, resolveAnswer);
        terminal.once("SIGINT", () => reject(new SecretsCommandError("interrupted; nothing was put")));
      });
      muted = true;
      values.push(await answer);
      process.stdout.write("\n");
    }
  } finally {
    terminal.close();
  }
  return values;
}

/** Why a failed AWS call failed, when the fix is the operator's: no credentials, or ones AWS refuses. */
export function credentialsProblem(error: Error): string | undefined {
  const check =
    "check them with `aws sts get-caller-identity`, which must print the stack's account (npm run doctor checks every prerequisite)";
  if (error.name === "CredentialsProviderError") {
    return `no AWS credentials found (${error.message.split("\n")[0]}): set a profile (AWS_PROFILE, aws configure) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; ${check}`;
  }
  if (
    [
      "UnrecognizedClientException",
      "InvalidClientTokenId",
      "ExpiredTokenException",
      "ExpiredToken",
      "InvalidSignatureException",
    ].includes(error.name)
  ) {
    return `AWS refused the credentials (${error.name}): ${check}`;
  }
  return undefined;
}

/** A new random database password: 32 characters of base64url, which .env carries as it is. */
function randomPassword(): string {
  return randomBytes(24).toString("base64url");
}

/** Puts the values as SecureString parameters with the stack's key, and the tag the plan-time check needs. */
async function put(client: SSMClient, settings: StackSettings, values: Map<Secret, string>): Promise<void> {
  const names = namesOf(settings);
  for (const [secret, value] of values) {
    const problem = valueProblem(secret, value);
    if (problem) throw new SecretsCommandError(`${names[secret]}: ${problem}; nothing was put`);
  }
  for (const [secret, value] of values) {
    const { Version } = await client.send(
      new PutParameterCommand({
        Name: names[secret],
        Value: value,
        Type: "SecureString",
        KeyId: settings.secretsKmsKeyId,
        Overwrite: true,
      }),
    );
    await client.send(
      new AddTagsToResourceCommand({
        ResourceType: "Parameter",
        ResourceId: names[secret],
        Tags: [{ Key: SECRET_PARAMETER_TAG, Value: settings.stackName }],
      }),
    );
    console.log(`put ${names[secret]} (version ${Version}, key ${settings.secretsKmsKeyId})`);
  }
}

/** The parameters' names by secret. */
function namesOf(settings: StackSettings): Record<Secret, string> {
  const names = secretParameterNames(settings.stackName);
  return Object.fromEntries(
    Object.entries(SECRET_PARAMETER_LEAVES).map(([key, leaf]) => [leaf, names[key as keyof typeof names]]),
  ) as Record<Secret, string>;
}

/** Reports each parameter without reading its value; true when all are SecureStrings carrying the stack's tag. */
async function check(client: SSMClient, settings: StackSettings, secrets: Secret[]): Promise<boolean> {
  const names = namesOf(settings);
  const { Parameters = [] } = await client.send(
    new DescribeParametersCommand({
      ParameterFilters: [{ Key: "Name", Option: "Equals", Values: secrets.map((secret) => names[secret]) }],
    }),
  );
  let ok = true;
  for (const secret of secrets) {
    const found = Parameters.find((parameter) => parameter.Name === names[secret]);
    if (!found) {
      ok = false;
      console.log(`MISSING ${names[secret]}`);
      continue;
    }
    const { TagList = [] } = await client.send(
      new ListTagsForResourceCommand({ ResourceType: "Parameter", ResourceId: names[secret] }),
    );
    const tagged = TagList.some((tag) => tag.Key === SECRET_PARAMETER_TAG && tag.Value === settings.stackName);
    const problems = [
      found.Type === "SecureString" ? "" : `type ${found.Type}, not SecureString`,
      tagged
        ? ""
        : `no tag ${SECRET_PARAMETER_TAG}=${settings.stackName} (the plan-time check sees tagged parameters only)`,
    ].filter(Boolean);
    ok &&= problems.length === 0;
    console.log(
      `${problems.length ? "BAD    " : "ok     "} ${names[secret]}: ${found.Type}, key ${found.KeyId ?? "-"}, version ${found.Version}, ` +
        `changed ${found.LastModifiedDate?.toISOString() ?? "-"}${problems.length ? `; ${problems.join("; ")}` : ""}`,
    );
  }
  return ok;
}

/**
 * The secrets the stack's topology reads: the scale-out topology has no database root password (RDS keeps
 * the master user's password in Secrets Manager), so it is left out, or refused when named.
 */
function ofTopology(settings: StackSettings, secrets: Secret[], named: boolean): Secret[] {
  if (settings.provisioning.topology !== "scale-out") return secrets;
  const root = SECRET_PARAMETER_LEAVES.dbRootPassword;
  if (named && secrets.includes(root)) {
    throw new SecretsCommandError(
      `${root}: the stack ${settings.stackName} has "topology": "scale-out", whose database's master password RDS ` +
        "keeps in Secrets Manager (docs/scale-out.md); nothing was put",
    );
  }
  return secrets.filter((secret) => secret !== root);
}

/** Runs the command; resolves with the exit code. */
export async function run(args: string[]): Promise<number> {
  const { stackName, command, secrets: asked, named } = parseArguments(args);
  const settings = stackSettings(stackName);
  const secrets = ofTopology(settings, asked, named);
  if (settings.provisioning.secrets !== "parameter-store") {
    // set and rotate would put values that nothing reads (and rotate would tell the host to apply them): refused.
    if (command !== "check") {
      throw new SecretsCommandError(
        `the settings of ${stackName} say "secrets": "${settings.provisioning.secrets}", so the stack reads no parameter; ` +
          `set "secrets": "parameter-store" in its settings file first (docs/secrets.md, Moving a running stack to Parameter Store); nothing was put`,
      );
    }
    console.error(
      `note: the settings of ${stackName} say "secrets": "${settings.provisioning.secrets}"; the stack reads these parameters once they say "parameter-store"`,
    );
  }
  const client = new SSMClient({ region: settings.region });
  try {
    if (command === "check") return (await check(client, settings, secrets)) ? 0 : 1;
    const generated: Secret[] =
      command === "rotate" ? secrets.filter((secret) => secret !== SECRET_PARAMETER_LEAVES.sourceHostToken) : [];
    const read = secrets.filter((secret) => !generated.includes(secret));
    const values = new Map<Secret, string>(generated.map((secret) => [secret, randomPassword()]));
    (await readValues(read)).forEach((value, i) => values.set(read[i], value));
    await put(client, settings, values);
    if (command === "rotate" && settings.provisioning.topology === "scale-out") {
      console.log(
        `now roll them out: the group's hosts read them at boot, so start an instance refresh: aws autoscaling start-instance-refresh ` +
          `--region ${settings.region} --auto-scaling-group-name <the stack's output ${settings.instanceName}AutoScalingGroupName> (docs/scale-out.md)`,
      );
    } else if (command === "rotate") {
      console.log(`now apply them on the host: npm run ops -- ${settings.stackName} rotate-secrets (docs/secrets.md)`);
    }
    return 0;
  } finally {
    client.destroy();
  }
}

if (require.main === module) {
  run(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      if (error instanceof HelpRequested) {
        console.log(error.message);
        process.exit(0);
      }
      // The AWS SDK's messages name the parameter and the refusal, never a value.
      const credentials = credentialsProblem(error);
      console.error(
        error instanceof SecretsCommandError
          ? error.message
          : `secrets: ${credentials ?? `${error.name}: ${error.message}`}`,
      );
      process.exit(error instanceof SecretsCommandError ? 2 : 1);
    },
  );
}
