/**
 * The local side of the ops command: `npm run ops -- <stack> <action> [args] [options]` runs
 * `sudo <scriptDirectory>/<appName>-ops <action> [args]` on the stack's host over ssh, as the login
 * user, with the user's own key, and exits with its status (docs/operations.md). Before a host action it installs
 * its own version of the host's tool when the host's differs (installTool, userdata/ops-tool.ts).
 *
 * The host is the stack's output `<instanceName>PublicIP` (`terraform output -json` in
 * cdktf.out/stacks/<stack>), or `--host`. Host keys are always checked (StrictHostKeyChecking=yes)
 * against `--known-hosts`, `$CRM_OPS_KNOWN_HOSTS` (a file, or its lines) or ssh's own known_hosts;
 * `--accept-new-host-key` trusts a host seen for the first time. No secret is ever on a command line:
 * a key given as text in `$CRM_OPS_SSH_KEY` (as CI keeps it) goes to a private temporary file,
 * removed when the command ends, as do known_hosts lines given as text.
 */
import { ChildProcess, spawn, spawnSync } from "child_process";
import { createWriteStream, existsSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync } from "fs";
import { createInterface } from "readline";
import { EC2Client } from "@aws-sdk/client-ec2";
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { tmpdir } from "os";
import { join, resolve } from "path";
import { loadEnvironments } from "../settings/environments";
import { SettingsProblem } from "../settings/errors";
import { RELEASE_COMMAND_TIMEOUT_SECONDS } from "../settings/provisioning-settings";
import { StackSettings } from "../settings/stack-settings";
import { opsPaths } from "../userdata/ops";
import { HOST_ACTIONS, OPS_ACTION_DECLARATIONS, OPS_ACTION_LIST, topologyRefusal } from "../userdata/ops-actions";
import { OPS_INSTALLER, renderOpsTool, shortVersion } from "../userdata/ops-tool";
import { shellQuote } from "../userdata/script";
import {
  CommandLine,
  CommandLineError,
  HelpRequested,
  OptionSpec,
  parseCommandLine,
  sshFileOption,
  UserError,
} from "./cli-options";
import { backup, chooseSnapshot, HostShell, logOptions, logsCommand, restoreDrill } from "./ops-everyday";
import { checkDumpTarget, checkSecretRegion, userFileOrText, userPath, withUserPaths } from "./ops-inputs";
import { checkRestoreInputs, restoreGuide, restoreRecovery, restoreSteps } from "./ops-restore";
import { OPS_TIMEOUTS } from "./ops-timeouts";
import { terraformReason } from "./terraform-reason";

/** The actions of the host's ops command (userdata/ops-actions.ts: the tool's dispatcher has exactly these). */
export const OPS_ACTIONS: readonly string[] = HOST_ACTIONS;
/** Arguments the actions take (a git ref, a release, a version): safe as words of the remote shell. */
const ARGUMENT = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;
/** Where `npx cdktf synth` writes the stacks (cdktf.json's output). */
const STACKS_DIRECTORY = resolve(__dirname, "..", "cdktf.out", "stacks");

/** The options of the actions (each declared by its action), with the action they belong to. */
const ACTION_OPTION_LIST = OPS_ACTION_LIST.flatMap((action) =>
  (action.options ?? []).map((option) => ({ action, option })),
);
/** The actions a scale-out stack refuses, grouped by why, for the help: `release, rollback (the group rolls them out), …`. */
const scaleOutRefused = (() => {
  const groups = new Map<string, string[]>();
  for (const action of OPS_ACTION_LIST) {
    const refusal = action.refusals?.find((r) => r.topology === "scale-out" && r.argument === undefined);
    if (refusal) groups.set(refusal.short, [...(groups.get(refusal.short) ?? []), action.name]);
  }
  return [...groups].map(([short, names]) => `${names.join(", ")} (${short})`).join("; ");
})();
const scaleOutTaken = OPS_ACTION_LIST.filter(
  (action) => !action.refusals?.some((r) => r.topology === "scale-out" && r.argument === undefined),
).map(
  (action) =>
    `${action.name}${(action.refusals ?? [])
      .filter((r) => r.topology === "scale-out")
      .map((r) => ` (not ${r.argument})`)
      .join("")}`,
);

/** The command's help: every action (userdata/ops-actions.ts) and every option, one line each. */
export const USAGE = [
  "usage: npm run ops -- <stack> <action> [args] [options]   (npm run ops -- --help: this text)",
  "runs the host's ops command (sudo <scriptDirectory>/<appName>-ops) over ssh; docs/operations.md",
  "actions:",
  ...OPS_ACTION_LIST.map(({ name, args, summary }) => `  ${`${name} ${args}`.trim().padEnd(24)}${summary}`),
  `options of ${ACTION_OPTION_LIST.map(({ action, option }) =>
    option.argument ? `${action.name} ${option.argument}` : action.name,
  )
    .filter((name, index, names) => names.indexOf(name) === index)
    .join(", ")}:`,
  ...ACTION_OPTION_LIST.map(({ option }) => `  ${option.usage.padEnd(24)}${option.summary}`),
  `a scale-out stack (--host <one of its hosts>): ${scaleOutTaken.join(", ")};`,
  `  not ${scaleOutRefused}`,
  "options:",
  "  --host <address>        the host, instead of the stack's output <instanceName>PublicIP (needed for a scale-out stack)",
  "  --port <n>              ssh port (default 22)",
  "  --user <name>           login user (default: the settings' loginUser, ec2-user)",
  "  --identity <file>       private key (default: $CRM_OPS_SSH_KEY, a file or the key itself; else ssh's own)",
  "  --known-hosts <file>    host keys to trust (default: $CRM_OPS_KNOWN_HOSTS, a file or its lines; else ssh's known_hosts)",
  "  --accept-new-host-key   trust the host's key if it is not known yet (first contact only)",
  "  -h, --help              this help",
].join("\n");

export interface OpsRequest {
  readonly stack: string;
  /** One of OPS_ACTIONS. */
  readonly action: string;
  readonly args: string[];
  readonly host?: string;
  readonly port: number;
  readonly user?: string;
  /** A key file, or the text of a key (from $CRM_OPS_SSH_KEY). */
  readonly identity?: string;
  /** A known_hosts file, or known_hosts lines (from $CRM_OPS_KNOWN_HOSTS). */
  readonly knownHosts?: string;
  readonly acceptNewHostKey: boolean;
  /** The options of the action (userdata/ops-actions.ts), by name; a flag's value is "true". */
  readonly extra: Readonly<Record<string, string>>;
}

/** The options of the command and the kinds of their values (scripts/cli-options.ts checks them). */
const SSH_OPTIONS: OptionSpec = {
  host: "host",
  port: "port",
  user: "user",
  identity: "path",
  "known-hosts": "path",
  "accept-new-host-key": "flag",
};
const OPTIONS: OptionSpec = {
  ...SSH_OPTIONS,
  ...Object.fromEntries(ACTION_OPTION_LIST.map(({ option }) => [option.name, option.value])),
};

/** Reads the command line and the environment ($CRM_OPS_SSH_KEY, $CRM_OPS_KNOWN_HOSTS). */
export function parseOpsArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): OpsRequest {
  // `run -- <command…>`: the words after the first -- are the operator's command, passed on as they are (its own
  // options and --help included); the CLI's options and the stack come before it.
  const cut = argv.indexOf("--");
  const read = (words: readonly string[]): CommandLine => {
    if (words.includes("--help") || words.includes("-h")) throw new HelpRequested(USAGE);
    try {
      return parseCommandLine(words, OPTIONS);
    } catch (error) {
      if (error instanceof CommandLineError) throw new UserError(`${error.message}\n${USAGE}`, 2);
      throw error;
    }
  };
  const head = cut >= 0 ? read(argv.slice(0, cut)) : undefined;
  const runs = head?.positional[1] === "run";
  const line = runs && head ? head : read(argv);
  const { positional } = line;
  const options = withUserPaths(line.options, env);
  const acceptNewHostKey = options["accept-new-host-key"] === "true";
  const [stack, action, ...given] = positional;
  if (!stack || !action) throw new UserError(USAGE, 2);
  if (action === "run" && !runs && given.length > 0) {
    throw new UserError(`run takes its command after --: npm run ops -- ${stack} run -- ${given.join(" ")}`, 2);
  }
  const args = runs ? argv.slice(cut + 1) : given;
  const declared = OPS_ACTION_DECLARATIONS.get(action);
  if (!declared) {
    throw new UserError(
      `unknown action "${action}": the actions are ${OPS_ACTION_LIST.map(({ name }) => name).join(", ")} (npm run ops -- --help)`,
      2,
    );
  }
  const extra = Object.fromEntries(Object.entries(options).filter(([name]) => !(name in SSH_OPTIONS)));
  for (const name of Object.keys(extra)) {
    const own = declared.options?.find((option) => option.name === name);
    if (!own || (own.argument !== undefined && args[0] !== own.argument)) {
      const of = ACTION_OPTION_LIST.find(({ option }) => option.name === name)!;
      throw new UserError(
        `--${name} is an option of ${[of.action.name, of.option.argument].filter(Boolean).join(" ")}, not of ${[action, ...args].join(" ")}`,
        2,
      );
    }
  }
  // The log and the values of its options (exit 2).
  if (action === "logs") logOptions(args, extra);
  for (const option of declared.options ?? []) {
    const wrong = extra[option.name] === undefined ? undefined : option.check?.(extra[option.name]);
    if (wrong !== undefined) throw new UserError(wrong, 2);
  }
  const wrongArgs = declared.checkArgs?.(args, stack);
  if (wrongArgs !== undefined) throw new UserError(wrongArgs, 2);
  const bad = action === "run" ? undefined : args.find((arg) => !ARGUMENT.test(arg));
  if (bad !== undefined) {
    throw new UserError(
      `the argument "${bad}" is not a git ref, release or version (letters, digits and . _ / - only)`,
      2,
    );
  }
  const port = Number(options.port ?? "22");
  return {
    stack,
    action,
    args,
    port,
    acceptNewHostKey,
    extra,
    host: options.host,
    user: options.user,
    identity: options.identity ?? userFileOrText(env.CRM_OPS_SSH_KEY, env),
    knownHosts: options["known-hosts"] ?? userFileOrText(env.CRM_OPS_KNOWN_HOSTS, env),
  };
}

/** The settings of the stack named `stack` among $CRM_SETTINGS's (else the example set). */
export function stackSettings(stack: string, environments: StackSettings[] = loadEnvironments()): StackSettings {
  const found = environments.find((settings) => settings.stackName === stack);
  if (!found) {
    throw new UserError(
      `no stack "${stack}" in the settings (CRM_SETTINGS): the stacks are ${environments.map((s) => s.stackName).join(", ")}`,
    );
  }
  return found;
}

/**
 * The stack's output `name`: `terraform output -json` in `stackDirectory` (cdktf.out/stacks/<stack>, after
 * `npx cdktf synth` and a deploy); `instead` is the option that does without it (`give --host`).
 */
export function stackOutput(
  stackDirectory: string,
  name: string,
  instead: string,
  terraform = process.env.TERRAFORM_BINARY_NAME || "terraform",
): string {
  const hint = `deploy it first, or ${instead}`;
  if (!existsSync(stackDirectory)) throw new UserError(`there is no ${stackDirectory} (run npx cdktf synth): ${hint}`);
  const result = spawnSync(terraform, ["output", "-json", "-no-color"], {
    cwd: stackDirectory,
    encoding: "utf8",
    timeout: OPS_TIMEOUTS.terraformSeconds * 1000,
    env: { ...process.env, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" },
  });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    throw new UserError(
      `Terraform (${terraform}) is not installed: install Terraform 1.10 or later, or run \`npm run tools\` and \`source scripts/ci/env.sh\` ` +
        `(npm run doctor checks every prerequisite); or ${instead}`,
    );
  }
  if (result.error || result.status !== 0) {
    const why = result.error?.message ?? terraformReason(result.stderr ?? "") ?? `exit ${result.status}`;
    // A fresh synth of a stack whose state is in S3: the state is there, the working directory is not initialized.
    if (/Backend initialization required|please run "terraform init"/i.test(result.stderr ?? "")) {
      throw new UserError(
        `terraform output in ${stackDirectory} needs its backend initialized (${why.trim()}): ` +
          `run \`terraform -chdir=${stackDirectory} init\`, or ${instead}`,
      );
    }
    // The state in S3 needs the account's credentials to be read.
    const credentials = /credential|ExpiredToken|AccessDenied|InvalidClientTokenId|security token/i.test(
      result.stderr ?? "",
    )
      ? "; reading the state in S3 needs AWS credentials: check them with `aws sts get-caller-identity` (npm run doctor)"
      : "";
    throw new UserError(`terraform output failed in ${stackDirectory} (${why.trim()})${credentials}: ${hint}`);
  }
  const outputs = JSON.parse(result.stdout || "{}") as Record<string, { value?: unknown }>;
  const value = outputs[name]?.value;
  if (typeof value !== "string" || value === "") throw new UserError(`the stack has no output ${name} yet: ${hint}`);
  return value;
}

/** The host's public IP address: the stack's output `<instanceName>PublicIP` (stackOutput). */
export function hostFromOutputs(
  stackDirectory: string,
  instanceName: string,
  terraform = process.env.TERRAFORM_BINARY_NAME || "terraform",
): string {
  return stackOutput(stackDirectory, `${instanceName}PublicIP`, "give --host", terraform);
}

/** Files ssh reads: the key and the known hosts, as given, or written from their text into `directory`. */
export interface SshFiles {
  readonly keyFile?: string;
  readonly knownHostsFile?: string;
}

/**
 * The key and known hosts as files: a value that names a file is used as it is; a key's text, or
 * known_hosts lines, are written (mode 600) into `directory`, made only then by `makeDirectory`.
 */
export function sshFiles(request: OpsRequest, makeDirectory: () => string): SshFiles {
  const asFile = (value: string | undefined, name: string, isText: (text: string) => boolean, what: string) => {
    if (value === undefined || existsSync(value)) return value;
    if (!isText(value))
      throw new UserError(`${what} is neither a file nor ${name === "key" ? "a private key" : "known_hosts lines"}`);
    const file = join(makeDirectory(), name);
    writeFileSync(file, `${value.trim()}\n`, { mode: 0o600 });
    return file;
  };
  return {
    keyFile: asFile(
      request.identity,
      "key",
      (text) => text.includes("PRIVATE KEY-----"),
      "the key (--identity or CRM_OPS_SSH_KEY)",
    ),
    knownHostsFile: asFile(
      request.knownHosts,
      "known_hosts",
      (text) => /^\S+ (ssh|ecdsa|sk)-\S+ \S+/m.test(text),
      "the known hosts (--known-hosts or CRM_OPS_KNOWN_HOSTS)",
    ),
  };
}

/**
 * The ssh command line: strict host key checking, no secret (the key is a file). It runs the host's ops
 * command with the action, or `remote` (a command line for root, run through `sudo -n bash -c`); `tty`: a terminal (ssh -t).
 */
export function sshArguments(
  request: OpsRequest,
  target: {
    host: string;
    user: string;
    command: string;
    remote?: string;
    remoteArgs?: string[];
    tty?: boolean;
  } & SshFiles,
): string[] {
  return [
    ...(target.tty ? ["-t"] : []),
    "-o",
    "BatchMode=yes",
    "-o",
    `ConnectTimeout=${OPS_TIMEOUTS.sshConnectSeconds}`,
    "-o",
    `ServerAliveInterval=${OPS_TIMEOUTS.sshAliveIntervalSeconds}`,
    "-o",
    `ServerAliveCountMax=${OPS_TIMEOUTS.sshAliveCountMax}`,
    "-o",
    `StrictHostKeyChecking=${request.acceptNewHostKey ? "accept-new" : "yes"}`,
    // Files as -o Key="path": ssh splits a bare -o value on whitespace and expands % in file names.
    ...(target.knownHostsFile ? ["-o", sshFileOption("UserKnownHostsFile", target.knownHostsFile)] : []),
    ...(target.keyFile ? ["-o", sshFileOption("IdentityFile", target.keyFile), "-o", "IdentitiesOnly=yes"] : []),
    "-l",
    target.user,
    "-p",
    String(request.port),
    "--",
    target.host,
    // ssh hands the remote shell one line: a word that is not plain (run's command) goes quoted.
    ...(target.remote === undefined
      ? ["sudo", "-n", target.command, request.action, ...request.args.map(remoteWord)]
      : [
          ["sudo -n bash -c", target.remote, ...(target.remoteArgs ?? [])]
            .map((word, i) => (i === 0 ? word : shellQuote(word)))
            .join(" "),
        ]),
  ];
}

/**
 * The words a release sends after its ref (userdata/ops.sh, release_args): the stack's build and release commands and
 * their bound (settings/provisioning-settings.ts; the host tool checks them again), and the snapshot taken before it,
 * which its audit line names. None for a stack that sets no command: its release runs as it always did. Each goes to
 * the remote shell as one quoted word (sshArguments): a command is data for the tool, which hands it to bash -c.
 */
export function releaseWords(settings: StackSettings, snapshotId?: string): string[] {
  const { buildCommand, releaseCommand, releaseCommandTimeoutSeconds } = settings.provisioning;
  const commands = [
    ...(buildCommand !== undefined ? [`--build-command=${buildCommand}`] : []),
    ...(releaseCommand !== undefined ? [`--release-command=${releaseCommand}`] : []),
  ];
  const timeout = releaseCommandTimeoutSeconds ?? RELEASE_COMMAND_TIMEOUT_SECONDS;
  return [
    ...commands,
    ...(commands.length > 0 ? [`--command-timeout=${timeout}`] : []),
    ...(snapshotId !== undefined ? [`--snapshot=${snapshotId}`] : []),
  ];
}

/** A word of the remote command line: as it is when plain (ARGUMENT), else quoted for the remote shell. */
function remoteWord(word: string): string {
  return ARGUMENT.test(word) ? word : shellQuote(word);
}

/** Reads one line from standard input (the guided restore's confirmation); "" at its end. */
function readLine(prompt: string): Promise<string> {
  return new Promise((resolvePromise) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    let answered = false;
    rl.question(prompt, (answer) => {
      answered = true;
      rl.close();
      resolvePromise(answer.trim());
    });
    rl.on("close", () => {
      if (!answered) resolvePromise("");
    });
  });
}

/**
 * The signals that end the command whose files it removes first: Ctrl-C, kill, a closed terminal (SIGHUP)
 * and Ctrl-\ (SIGQUIT). SIGKILL cannot be caught; the key's file is then left in the temporary directory.
 */
export const CLEAN_UP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** How EC2 is reached: the user's own credentials, in the stack's region (AWS SDK v3's usual chain, AWS_ENDPOINT_URL included). */
export type Ec2Factory = (settings: StackSettings) => EC2Client;
const defaultEc2: Ec2Factory = (settings) => new EC2Client({ region: settings.region });

/**
 * db-setup's input: the text of the scale-out database's master secret (RDS's JSON), read with the user's
 * own credentials (secretsmanager:GetSecretValue, and kms:Decrypt with its key) in the stack's region.
 * It is only ever in this process's memory and on ssh's standard input.
 */
export async function masterSecretText(
  request: OpsRequest,
  settings: StackSettings,
  stacksDirectory: string,
): Promise<string> {
  const arn =
    request.extra["master-secret"] ??
    stackOutput(
      join(stacksDirectory, request.stack),
      `${settings.instanceName}DatabaseSecretArn`,
      "give --master-secret <arn>",
    );
  checkSecretRegion(arn, settings.region);
  const client = new SecretsManagerClient({ region: settings.region });
  try {
    const text = (await client.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
    if (!text) throw new UserError(`the secret ${arn} holds no text: it is not the database's master secret`);
    return text;
  } finally {
    client.destroy();
  }
}

/**
 * The guided real restore (`restore` without --drill): the steps (scripts/ops-restore.ts) with the snapshot
 * and the tfvars filled in, then, when the user gave --var-file and types the stack's name, the same steps
 * run in the stack's directory (`terraform apply` shows its plan and asks again). Every input of the steps is
 * checked before the confirmation, so that none fails after `terraform state rm` has changed the state.
 */
export async function guidedRestore(
  request: OpsRequest,
  settings: StackSettings,
  ec2: EC2Client,
  stacksDirectory: string,
  confirm: (prompt: string) => Promise<string> = readLine,
  terraform = process.env.TERRAFORM_BINARY_NAME || "terraform",
): Promise<number> {
  const snapshot = await chooseSnapshot(ec2, settings, request.extra.snapshot);
  const varFile = request.extra["var-file"];
  // The guide changes directory, so its tfvars is absolute: the user's own, or dev.tfvars where the user is.
  console.log(restoreGuide(settings, snapshot, varFile ?? userPath("dev.tfvars")).join("\n"));
  if (!varFile) {
    console.error(
      "ops: restore: nothing changed; give --var-file <your tfvars> to have this command run the two terraform commands after a confirmation",
    );
    return 0;
  }
  const cwd = join(stacksDirectory, request.stack);
  const env = { ...process.env, CHECKPOINT_DISABLE: "1" };
  const volumeId = checkRestoreInputs(cwd, varFile, terraform, env);
  const answer = await confirm(`Type the stack's name (${settings.stackName}) to run the two terraform commands now: `);
  if (answer !== settings.stackName) {
    console.error(
      `ops: restore: not confirmed (${JSON.stringify(answer)} is not ${settings.stackName}); nothing changed`,
    );
    return 1;
  }
  for (const [step, args] of restoreSteps(snapshot.SnapshotId ?? "", varFile).entries()) {
    const result = spawnSync(terraform, args, { cwd, stdio: "inherit", env });
    if (result.status !== 0) {
      // After the first step the state has changed: say how to go back to where it was.
      const recovery = step > 0 ? `; ${restoreRecovery(cwd, varFile, volumeId)}` : "";
      console.error(
        `ops: restore: terraform ${args[0]} failed (exit ${result.status ?? result.signal}); see its message above and docs/operations.md${recovery}`,
      );
      return result.status ?? 1;
    }
  }
  return 0;
}

/**
 * Runs the action: the host's ops command over ssh, or an everyday action of the workstation
 * (scripts/ops-everyday.ts); resolves with its exit status (ssh's 255: the host was not reached).
 * `stacksDirectory` holds cdktf.out/stacks/<stack>; `ssh` is the client to run; `ec2` reaches EC2.
 */
export async function runOps(
  request: OpsRequest,
  settings: StackSettings,
  stacksDirectory = STACKS_DIRECTORY,
  ssh = "ssh",
  ec2: Ec2Factory = defaultEc2,
): Promise<number> {
  const scaleOut = settings.provisioning.topology === "scale-out";
  const { action, args } = request;
  // The topology's refusals (userdata/ops-actions.ts), before anything reaches AWS or the host.
  const refusal = topologyRefusal(OPS_ACTION_DECLARATIONS.get(action)!, args, settings.provisioning.topology);
  if (refusal) throw new UserError(refusal.message, 2);
  if (action === "restore" && request.extra.drill === undefined)
    return guidedRestore(request, settings, ec2(settings), stacksDirectory);
  if (request.host === undefined && scaleOut) {
    throw new UserError(
      `the stack ${settings.stackName} has "topology": "scale-out": its hosts come and go, so name one with --host <address> ` +
        "(a host's address from the EC2 console or `aws autoscaling describe-auto-scaling-instances`; docs/scale-out.md)",
      2,
    );
  }
  const host = request.host ?? hostFromOutputs(join(stacksDirectory, request.stack), settings.instanceName);
  // Read before ssh starts: a secret that cannot be read stops the action before the host is reached.
  const secret = action === "db-setup" ? await masterSecretText(request, settings, stacksDirectory) : undefined;
  const user = request.user ?? settings.provisioning.loginUser;
  let directory: string | undefined;
  let partial: string | undefined;
  const remove = () => {
    if (directory) rmSync(directory, { recursive: true, force: true });
    if (partial) rmSync(partial, { force: true });
  };
  // Killed, or its terminal closed, it still removes the key's file (and a dump's partial file), then dies of
  // the signal as it would have.
  const onSignal = (signal: NodeJS.Signals) => {
    remove();
    for (const name of CLEAN_UP_SIGNALS) process.removeListener(name, onSignal);
    process.kill(process.pid, signal);
  };
  for (const name of CLEAN_UP_SIGNALS) process.once(name, onSignal);
  const notInstalled = (error: NodeJS.ErrnoException) =>
    error.code === "ENOENT"
      ? new UserError(
          `ssh is not installed (no ${ssh} on PATH): install the OpenSSH client (npm run doctor checks every prerequisite)`,
        )
      : error;
  const finished = (child: ChildProcess) =>
    new Promise<number>((resolvePromise, reject) => {
      child.on("error", (error: NodeJS.ErrnoException) => reject(notInstalled(error)));
      child.on("close", (status, signal) => resolvePromise(status ?? (signal ? 128 : 1)));
    });
  try {
    const files = sshFiles(request, () => (directory ??= mkdtempSync(join(tmpdir(), "crm-ops-"))));
    const target = { host, user, command: opsPaths(settings.provisioning).command, ...files };
    const shell: HostShell = (command) =>
      spawn(ssh, sshArguments(request, { ...target, remote: command }), { stdio: "pipe" });
    const report = (line: string) => console.error(`ops: ${line}`);
    let code: number;
    // db dump --output: written beside the file, renamed over it only when complete (mode 600). Checked and
    // opened before ssh first starts (the tool's install included), so that a file that cannot be written
    // stops the dump before the host is reached; named for removal only once this command made it.
    let dump: { file: string; partial: string; fd: number } | undefined;
    if (request.extra.output !== undefined) {
      const file = checkDumpTarget(request.extra.output);
      const fd = openPartial(`${file}.partial-${process.pid}`);
      partial = `${file}.partial-${process.pid}`;
      dump = { file, partial, fd };
    }
    if (OPS_ACTIONS.includes(action)) {
      // The host runs the tool of this CLI: installed first when it differs (userdata/ops-tool.ts); else the action does not run.
      code = await installTool(
        () =>
          spawn(
            ssh,
            sshArguments(request, { ...target, remote: OPS_INSTALLER, remoteArgs: installerArguments(settings, user) }),
            { stdio: ["pipe", "pipe", "pipe"] },
          ),
        report,
      ).catch((error: NodeJS.ErrnoException) => {
        throw notInstalled(error);
      });
      if (code !== 0) {
        if (code === 255)
          console.error(
            `ops: could not reach ${user}@${host} on port ${request.port} over ssh (exit 255): see ssh's message above`,
          );
        return code;
      }
    }
    if (action === "backup") {
      const made = await backup(ec2(settings), shell, settings, report);
      console.log(made.snapshotId);
      code = 0;
    } else if (action === "restore") {
      code = await restoreDrill(ec2(settings), shell, settings, report, request.extra.snapshot);
    } else if (action === "logs") {
      const { source, options } = logOptions(args, request.extra);
      // Following, on a terminal: one on the host too, so that Ctrl-C ends journalctl or tail there as well.
      const tty = options.follow && process.stdin.isTTY === true;
      code = await finished(
        spawn(ssh, sshArguments(request, { ...target, remote: logsCommand(settings, source, options), tty }), {
          stdio: "inherit",
        }),
      );
    } else if (dump !== undefined) {
      const { file, fd } = dump;
      const out = createWriteStream("", { fd });
      const child = spawn(ssh, sshArguments(request, target), { stdio: ["inherit", "pipe", "inherit"] });
      child.stdout?.pipe(out);
      code = await finished(child);
      await new Promise<void>((resolvePromise, reject) => {
        out.on("error", reject);
        if (out.writableFinished) resolvePromise();
        else out.on("finish", () => resolvePromise());
      });
      if (code === 0) {
        renameSync(dump.partial, file);
        partial = undefined;
        report(`db dump: ${file}`);
      }
    } else if (action === "db-setup") {
      // The secret goes on ssh's standard input, never a command line or a file (userdata/ops.sh, ops_db_setup).
      const child = spawn(ssh, sshArguments(request, target), { stdio: ["pipe", "inherit", "inherit"] });
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(secret);
      code = await finished(child);
    } else if (action === "release") {
      // Before a release command (a migration), the data volume's snapshot, unless the operator says --no-backup: a bad
      // migration is then one restore away. Taken before the host builds, so the release waits for it.
      let snapshotId: string | undefined;
      if (settings.provisioning.releaseCommand !== undefined && request.extra["no-backup"] === undefined) {
        report("a snapshot of the data volume before the release command (--no-backup: none)");
        snapshotId = (await backup(ec2(settings), shell, settings, report)).snapshotId;
        report(
          `snapshot ${snapshotId}: npm run ops -- ${request.stack} restore --snapshot ${snapshotId} goes back to it`,
        );
      }
      const words = { ...request, args: [...args, ...releaseWords(settings, snapshotId)] };
      code = await finished(spawn(ssh, sshArguments(words, target), { stdio: "inherit" }));
    } else {
      // A shell or a command of the operator's (run -- node: a REPL) gets a terminal when the operator has one.
      const tty = ((action === "db" && args.length === 0) || action === "run") && process.stdin.isTTY === true;
      code = await finished(spawn(ssh, sshArguments(request, { ...target, tty }), { stdio: "inherit" }));
    }
    if (code === 255)
      console.error(
        `ops: could not reach ${user}@${host} on port ${request.port} over ssh (exit 255): see ssh's message above`,
      );
    return code;
  } finally {
    remove();
    for (const name of CLEAN_UP_SIGNALS) process.removeListener(name, onSignal);
  }
}

/** Creates the dump's partial file (mode 600, new); a refusal names it in one line. */
function openPartial(partial: string): number {
  try {
    return openSync(partial, "wx", 0o600);
  } catch (error) {
    throw new UserError(
      `db dump --output: cannot create ${partial} (${(error as NodeJS.ErrnoException).code ?? String(error)}); nothing was dumped`,
    );
  }
}

/** The installer's arguments after the tool's version (userdata/ops-install.sh): the command, the lock, the audit log, who. */
function installerArguments(settings: StackSettings, user: string): string[] {
  const paths = opsPaths(settings.provisioning);
  return ["ops-install", renderOpsTool().version, paths.command, paths.lockFile, paths.auditLog, user];
}

/**
 * Runs the installer (`start`: ssh to it) with the tool on its standard input; 0 when the host's tool is this CLI's,
 * after `ops: host tool OLD -> NEW` when it updated it; else the installer's status, after its one line (which names
 * both versions and why: busy, a full disk, a cut-off copy).
 */
export async function installTool(start: () => ChildProcess, report: (line: string) => void): Promise<number> {
  const tool = renderOpsTool();
  const child = start();
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin?.on("error", () => undefined);
  child.stdin?.end(tool.text);
  const code = await new Promise<number>((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (status, signal) => resolvePromise(status ?? (signal ? 128 : 1)));
  });
  const words = stdout.trim().split(/\s+/);
  if (code === 0 && words.at(-1) === tool.version) {
    if (words.length === 2) report(`host tool ${shortVersion(words[0])} -> ${shortVersion(tool.version)}`);
    return 0;
  }
  if (code === 255) {
    process.stderr.write(stderr);
    return code;
  }
  const why =
    stderr
      .trim()
      .split("\n")
      .filter(Boolean)
      .at(-1)
      ?.replace(/^ops-install: /, "") ??
    `the host's tool was not updated to ${shortVersion(tool.version)}: the installer answered ${JSON.stringify(stdout.trim())} (exit ${code})`;
  report(`${why}; the action did not run`);
  return code === 0 ? 1 : code;
}

/** The command: exits with the action's status, or 1 (2 for a usage error) with one line saying why. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  try {
    const request = parseOpsArgs(argv);
    return await runOps(request, stackSettings(request.stack));
  } catch (error) {
    if (error instanceof HelpRequested) {
      console.log(error.message);
      return 0;
    }
    // The AWS SDK's own errors (credentials, permissions, a missing resource): its name and message, one line.
    if (error instanceof Error && ("$metadata" in error || /Credential|Waiter|TimeoutError/.test(error.name))) {
      console.error(
        `ops: AWS: ${error.name}: ${error.message.split("\n")[0]} (check the credentials: aws sts get-caller-identity; npm run doctor)`,
      );
      return 1;
    }
    if (!(error instanceof UserError || error instanceof SettingsProblem)) throw error;
    console.error(`ops: ${error.message}`);
    return error instanceof UserError ? error.exitCode : 1;
  }
}

if (require.main === module)
  void main().then((code) => {
    process.exitCode = code;
  });
