/**
 * Checks of the ops command's inputs that must hold before AWS, ssh or the host is reached (docs/operations.md):
 * the paths the user names, read where the user typed them; `--since` as the host's journalctl reads it; the
 * file `db dump --output` writes; the Region and partition of `--master-secret`. Each refusal is one line naming
 * the value and what is expected (an UserError). `--since`'s rule is scripts/journal-since.ts's.
 */
import { existsSync, statSync } from "fs";
import { dirname, resolve } from "path";
import { partition } from "@aws-sdk/util-endpoints";
import { UserError } from "./cli-options";

/** The options whose values are paths on the workstation. */
export const PATH_OPTIONS = ["output", "var-file", "identity", "known-hosts"] as const;

/**
 * A path as the user meant it: against the directory the user ran the command in. npm runs a package's
 * scripts in the package's root and says where the user was in `INIT_CWD`; without npm, the working directory.
 */
export function userPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.INIT_CWD || process.cwd(), path);
}

/** `options` with every path option (PATH_OPTIONS) made absolute by userPath. */
export function withUserPaths(
  options: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const resolved: Record<string, string> = { ...options };
  for (const name of PATH_OPTIONS) if (resolved[name] !== undefined) resolved[name] = userPath(resolved[name], env);
  return resolved;
}

/**
 * The file `db dump --output` writes (absolute): refused, before ssh, when it is a directory or its
 * directory is not there, so that no dump starts on the host for a file that cannot be written.
 */
export function checkDumpTarget(output: string): string {
  const file = resolve(output);
  const directory = dirname(file);
  if (!existsSync(directory) || !statSync(directory).isDirectory()) {
    throw new UserError(
      `--output ${JSON.stringify(output)}: the directory ${directory} is not there; expected a file in an existing directory`,
      2,
    );
  }
  if (existsSync(file) && !statSync(file).isFile()) {
    throw new UserError(
      `--output ${JSON.stringify(output)} is a directory or another non-file; expected a file (new or replaced)`,
      2,
    );
  }
  return file;
}

/**
 * A variable that holds a file's path or the file's text ($CRM_OPS_SSH_KEY, $CRM_OPS_KNOWN_HOSTS): the path
 * made absolute by userPath when a file is there; else the value as it is (text, or a path sshFiles refuses).
 */
export function userFileOrText(value: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!value) return undefined;
  if (value.includes("\n")) return value;
  const path = userPath(value, env);
  return existsSync(path) ? path : value;
}

/** The partition (aws, aws-cn, aws-us-gov, …) of a Region, as the AWS SDK knows it. */
export function regionPartition(region: string): string {
  return partition(region).name;
}

/**
 * Refuses a secret's ARN of another Region or partition than the stack's, with one line, before Secrets
 * Manager is asked (the client reaches the stack's Region only).
 */
export function checkSecretRegion(arn: string, region: string): void {
  const [, arnPartition, , arnRegion] = arn.split(":");
  const expected = regionPartition(region);
  if (arnPartition !== expected || arnRegion !== region) {
    throw new UserError(
      `--master-secret ${arn} is in ${arnPartition}:${arnRegion}; expected a secret of the stack's Region, ` +
        `arn:${expected}:secretsmanager:${region}:…`,
      2,
    );
  }
}
