/**
 * Every command that README.md and docs/*.md tell a user to run names only what the project and its
 * tools have: the npm script, the ops action and its options, the secrets command, the cdktf command,
 * the Terraform subcommand (asked of the real Terraform), the Terraform variable (declared by an example
 * stack), the resource address (in the example stack), the file, the GitHub variable or secret (read by
 * the workflows), and the AWS CLI operation (asked of the real AWS CLI). A page naming a command the
 * project lacks fails here.
 *
 * Which commands run elsewhere, the way the user runs them, and which need a real AWS account (checked
 * here for names only) is RUN_BY below, one line per kind with its test or its reason; a command of a
 * kind it does not list fails the test, so a new kind of command comes with its test or its reason.
 */
import { spawnSync } from "child_process";
import { existsSync, readdirSync, readFileSync } from "fs";
import { resolve } from "path";
import { EXAMPLE_SETTINGS_FILES, exampleStackJson } from "../../scripts/docs";
import { OPS_ACTION_DECLARATIONS } from "../../userdata/ops-actions";
import { findEngine } from "../support/terraform-engine";

const ROOT = resolve(__dirname, "../..");
const DOCUMENTS = [
  "README.md",
  ...readdirSync(resolve(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** Each kind of command: the test that runs it as the user does, or why only a real AWS account can. */
const RUN_BY: Record<string, string> = {
  "npm ci": "CI runs it on a fresh clone (.ci/run; the workflow's test job)",
  "npm test": "CI runs it (.ci/run)",
  "npm run synth":
    "__tests__/settings/main-errors.test.ts (a bad settings file: its one line, once); scripts/docs.ts synthesizes every example",
  "npm run tools": "CI runs it (.ci/run); __tests__/scripts/cli.test.ts runs its --help",
  "npm run docs": "__tests__/scripts/cli.test.ts; __tests__/docs/generated.test.ts",
  "npm run doctor":
    "__tests__/scripts/cli.test.ts (the AWS CLI against moto's STS; a filesystem mirror without the pin); __tests__/engine/readme-deploy.test.ts (the version it names is the one deployed)",
  "npm run scan": "__tests__/scripts/cli.test.ts",
  "npm run lint":
    "the quick tier runs it (package.json's test:quick), and npm test as its phase lint (scripts/check.sh)",
  "npm run format":
    "npm run lint runs the same Prettier, on the same files, as a check (.prettierrc.json, .prettierignore)",
  "npm run lint:imports": "__tests__/imports.test.ts",
  "npm run check:settings":
    "__tests__/settings/main-errors.test.ts (the four scripts below run it first); __tests__/scripts/cdktf.test.ts (its --help and refusal)",
  "npm run diff":
    "__tests__/engine/readme-deploy.test.ts (the README's, as written, against moto); __tests__/settings/main-errors.test.ts (a bad settings file: its one line, once)",
  "npm run destroy":
    "__tests__/engine/readme-deploy.test.ts (the README's keep-the-data destroy, as written, against moto); " +
    "__tests__/scripts/cdktf-destroy.test.ts (the real cdktf: a prevent_destroy refusal, then what a destroy leaves); __tests__/settings/main-errors.test.ts (a bad settings file)",
  "npm run deploy":
    "__tests__/engine/readme-deploy.test.ts (the README's, as written, against moto: without a terminal, then with --auto-approve, then after a setting changed); " +
    "__tests__/engine/real-provider.test.ts (cdktf deploy of the scale-out example); __tests__/settings/main-errors.test.ts (a bad settings file); " +
    "__tests__/scripts/cdktf.test.ts (its --help without a terminal)",
  "npm run test:boot": "npm test runs it (scripts/check.sh)",
  "npm run test:quick":
    "npm test runs each of its files (__tests__/tiers.test.ts: every test file in one tier); its selection is jest.quick.config.js",
  "npm run docs:run":
    "__tests__/docs/run-figures.test.ts (its rendering, on the pages' own markers); it needs a run's test-results/check-run.tsv",
  "npm run ops":
    "the boot test drives it against VMs (__tests__/boot/ops-scenarios.ts, parameter-store-host.ts); __tests__/scripts/ops.test.ts; " +
    "__tests__/integration/ops-everyday.test.ts (release of a stack with a releaseCommand, and with --no-backup, through runOps)",
  "npm run ops logs":
    "__tests__/integration/ops-everyday.test.ts (its host commands on the harness's host; the options in __tests__/scripts/ops.test.ts); " +
    "the boot test's everyday rows (__tests__/boot/everyday-scenarios.ts: logs shows the app's lines)",
  "npm run ops restart":
    "__tests__/integration/ops-everyday.test.ts (the host's command in the harness); the boot test's everyday rows (back to 200)",
  "npm run ops db":
    "__tests__/integration/ops-everyday.test.ts (db with SQL on standard input, db dump); the boot test's everyday rows (db dump returns the rows)",
  "npm run ops db-setup":
    "__tests__/integration/scale-out.test.ts (the host's db-setup on two harness hosts against the RDS stand-in, rotations too); " +
    "__tests__/scripts/ops.test.ts (the secret from moto's Secrets Manager to ssh's standard input); the boot test's host D (against the VM)",
  "npm run ops run":
    "__tests__/integration/ops.test.ts (the host's run on the harness's host: the release's directory, the app's user and environment, " +
    "the exit status, the audit lines); __tests__/scripts/ops.test.ts (the words after -- reach the host's command word for word)",
  "npm run ops backup":
    "__tests__/integration/ops-everyday.test.ts (moto's EC2, the lock on the harness's MariaDB); the boot test's everyday rows (against moto's EC2)",
  "npm run ops restore":
    "__tests__/integration/ops-everyday.test.ts (the drill against moto's EC2 and a real file system; the guide's steps); " +
    "the real restore's terraform apply needs an AWS account",
  "npm run secrets": "__tests__/scripts/secrets.test.ts, against moto's SSM",
  "npx cdktf synth":
    "the workflow's test job (__tests__/workflows/run.test.ts); __tests__/settings/main-errors.test.ts (what it prints of a bad settings file)",
  "npx cdktf get": "needs nothing here: the bindings are @cdktf/provider-aws's",
  "npx cdktf diff": "needs an AWS account: it plans against the account's resources",
  "npx cdktf deploy": "needs an AWS account: it creates the stack",
  "npx cdktf destroy": "needs an AWS account: it deletes the stack",
  "npm run output":
    "__tests__/engine/readme-deploy.test.ts (the README's, after its deploy against moto: each value on one line); " +
    "__tests__/scripts/cdktf-scripts.test.ts (its refusals and --help)",
  "npx cdktf list": "lists the synthesized stacks; needs nothing but the app",
  "npx cdktn": "the CDK Terrain conversion check (scripts/cdktn/check.sh, run by npm test)",
  terraform:
    "plans and applies need an AWS account (the engine tests plan provider-free stacks, and run hashicorp/aws against moto: __tests__/engine/real-provider.test.ts, " +
    "__tests__/workflows/run.test.ts; __tests__/engine/readme-deploy.test.ts runs the README's terraform -chdir=… state rm as written)",
  aws: "needs an AWS account (the operation is checked against the real AWS CLI here)",
  gh: "needs a GitHub repository (the variable or secret is checked against the workflows here)",
  "bash scripts/cdktn/convert.sh": "__tests__/cdktn/convert.test.ts",
};

interface Command {
  readonly document: string;
  readonly text: string;
}

/** The commands of a page: the lines of its shell blocks, and its inline code that starts like a command. */
export function commandsOf(document: string, text: string): Command[] {
  const found: Command[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    // Continuation lines join their command; comments go.
    const joined = block[1].replace(/\\\n\s*/g, " ");
    for (const line of joined.split("\n")) {
      for (const part of line.replace(/(^|\s)#.*$/, "").split(/&&|;|\|(?!\|)/)) {
        const command = part
          .trim()
          .replace(/^(export )?([A-Za-z_][A-Za-z0-9_]*=("[^"]*"|'[^']*'|\S*) +)+/, "")
          .trim();
        if (/^(npm|npx|terraform|aws|gh|bash scripts)\b/.test(command))
          found.push({ document, text: command.replace(/\s+/g, " ") });
      }
    }
  }
  for (const span of text
    .replace(/```[\s\S]*?```/g, "")
    .matchAll(/`((?:npm run|npx cdktf|terraform|aws|gh) [^`]+)`/g)) {
    for (const part of span[1].replace(/\\\|/g, "|").split(/&&/)) found.push({ document, text: part.trim() });
  }
  return found;
}

/** The kind of a command, as RUN_BY names it. */
function kindOf(command: string): string {
  const words = command.split(/\s+/);
  // The everyday actions of npm run ops, each with its own test (RUN_BY).
  const action =
    words[2] === "ops" ? words.slice(words.indexOf("--") + 2).find((word) => !word.startsWith("-")) : undefined;
  if (action && ["logs", "restart", "db", "db-setup", "run", "backup", "restore"].includes(action))
    return `npm run ops ${action}`;
  if (words[0] === "npm" && words[1] === "run") return `npm run ${words[2]}`;
  if (words[0] === "npx" && words[1] === "cdktf") return `npx cdktf ${words[2].split("|")[0]}`;
  if (words[0] === "npx") return `npx ${words[1]}`;
  if (words[0] === "bash") return `bash ${words[1]}`;
  if (words[0] === "npm") return `npm ${words[1]}`;
  return words[0];
}

/** A placeholder the page asks the user to fill in: <stack>, …, [release]. */
const placeholder = (word: string) =>
  /^(<[^>]*>?|\[[^\]]*\]?|…|\.\.\.)$/.test(word) || word.includes("…") || /^<|>$/.test(word);

const packageScripts = Object.keys(
  (JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
);
const stacks = EXAMPLE_SETTINGS_FILES.map((file) => exampleStackJson(file));
const variables = new Set(stacks.flatMap((stack) => Object.keys(stack.variable ?? {})));
const addresses = new Set(
  stacks.flatMap((stack) =>
    Object.entries(stack.resource ?? {}).flatMap(([type, items]) =>
      Object.keys(items).map((name) => `${type}.${name}`),
    ),
  ),
);
const workflowText = readdirSync(resolve(ROOT, ".github/workflows"))
  .map((file) => readFileSync(resolve(ROOT, ".github/workflows", file), "utf8"))
  .join("\n");
const OPS_OPTIONS = [
  "--host",
  "--port",
  "--user",
  "--identity",
  "--known-hosts",
  "--accept-new-host-key",
  "--help",
  "--lines",
  "--since",
  "--follow",
  "--output",
  "--drill",
  "--snapshot",
  "--var-file",
  "--no-backup",
];
/** The options of npm run ops that take a value. */
const OPS_VALUE_OPTIONS = [
  "--host",
  "--port",
  "--user",
  "--identity",
  "--known-hosts",
  "--lines",
  "--since",
  "--output",
  "--snapshot",
  "--var-file",
];
const CDKTF_COMMANDS = [
  "synth",
  "diff",
  "deploy",
  "destroy",
  "output",
  "get",
  "list",
  "init",
  "provider",
  "watch",
  "debug",
  "convert",
];

/** Commands a page names as a fact, not as something to run: each with why. */
const MENTIONED: Record<string, string> = {
  "terraform query":
    "docs/cdk-terrain.md names what CDK Terrain's list resources are for (Terraform 1.14); nothing to run",
};

/** What is wrong with a command (undefined: nothing); `ask` runs a tool (the real Terraform and AWS CLI). */
export function problemOf(command: string, ask: (program: string, args: string[]) => boolean): string | undefined {
  if (command in MENTIONED) return undefined;
  const words = command.split(/\s+/).filter(Boolean);
  if (words[0] === "npm" && words[1] === "run" && !packageScripts.includes(words[2]))
    return `npm run ${words[2]}: package.json has no such script`;
  if (words[0] === "npx" && words[1] === "cdktf" && !words[2].split("|").every((sub) => CDKTF_COMMANDS.includes(sub))) {
    return `npx cdktf ${words[2]}: no such cdktf command`;
  }
  const kind = kindOf(command);
  if (!(kind in RUN_BY)) return `no test runs "${kind}" and no reason says why it cannot be run (RUN_BY)`;
  if (words[0] === "npm" && words[1] === "run") {
    const args = words.slice(words.indexOf("--") + 1);
    if (words[2] === "ops" && words.includes("--")) {
      // `run -- <command…>`: what follows the second -- is the user's command, not ours to check.
      const second = args.indexOf("--");
      if (second >= 0) args.splice(second);
      const options = args.filter((word) => word.startsWith("-"));
      const unknown = options.find((option) => !OPS_OPTIONS.includes(option));
      if (unknown) return `npm run ops: no option ${unknown}`;
      const positional = args.filter(
        (word, i) => !word.startsWith("-") && !(i > 0 && OPS_VALUE_OPTIONS.includes(args[i - 1])),
      );
      const action = positional[1];
      if (action !== undefined && !placeholder(action) && !OPS_ACTION_DECLARATIONS.has(action))
        return `npm run ops: no action "${action}"`;
    }
    if (words[2] === "secrets" && words.includes("--")) {
      const sub = args.filter((word) => !word.startsWith("-"))[1];
      if (
        sub !== undefined &&
        !placeholder(sub) &&
        !sub.split("|").every((name) => ["set", "rotate", "check"].includes(name))
      )
        return `npm run secrets: no command "${sub}"`;
    }
    return undefined;
  }
  if (words[0] === "bash" && !existsSync(resolve(ROOT, words[1]))) return `${words[1]}: no such file`;
  for (const word of words) {
    const variable =
      /^(?:-var=?|TF_VAR_)([a-z_0-9]+)=/.exec(word)?.[1] ??
      (words[words.indexOf(word) - 1] === "-var" ? /^([a-z_0-9]+)=/.exec(word)?.[1] : undefined);
    if (variable && !variables.has(variable)) return `${command}: no example stack declares the variable ${variable}`;
    const file = /^file:\/\/(docs\/\S+)$/.exec(word)?.[1];
    if (file && !existsSync(resolve(ROOT, file))) return `${file}: no such file`;
  }
  if (words[0] === "terraform") {
    const sub = words.slice(1).find((word) => !word.startsWith("-"));
    if (sub && !placeholder(sub) && !ask("terraform", [sub, "-help"]))
      return `terraform ${sub}: Terraform has no such command`;
    const address = words.find(
      (word, i) => /^-replace=/.test(word) || (i > 1 && ["rm", "taint"].includes(words[i - 1])),
    );
    const target = address?.replace(/^-replace=/, "");
    if (target && !placeholder(target) && !addresses.has(target))
      return `${command}: no example stack has the resource ${target}`;
  }
  if (words[0] === "gh" && words[1] === "variable" && words[2] === "set" && !placeholder(words[3])) {
    const name = words[3];
    if (!workflowText.includes(`vars.${name}`) && !variables.has(name.toLowerCase()))
      return `gh variable set ${name}: no workflow reads it and it names no Terraform variable`;
  }
  if (words[0] === "gh" && words[1] === "secret" && words[2] === "set" && !workflowText.includes(`secrets.${words[3]}`))
    return `gh secret set ${words[3]}: no workflow reads it`;
  if (
    words[0] === "gh" &&
    words[1] === "workflow" &&
    words[2] === "run" &&
    !existsSync(resolve(ROOT, ".github/workflows", words[3]))
  )
    return `${words[3]}: no such workflow`;
  if (
    words[0] === "aws" &&
    words[1] &&
    words[2] &&
    !placeholder(words[2]) &&
    !words[2].startsWith("-") &&
    !ask("aws", [words[1], words[2], "help"])
  ) {
    return `aws ${words[1]} ${words[2]}: the AWS CLI has no such operation`;
  }
  return undefined;
}

const engine = findEngine();
const asked = new Map<string, boolean>();
/** Whether a tool accepts the arguments (memoized: the pages name the same ones often). */
function ask(program: string, args: string[]): boolean {
  const key = [program, ...args].join(" ");
  if (!asked.has(key)) {
    const file = program === "terraform" ? (engine ?? "terraform") : program;
    const result = spawnSync(file, args, {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, CHECKPOINT_DISABLE: "1", PAGER: "cat", AWS_PAGER: "" },
    });
    asked.set(key, result.status === 0);
  }
  return asked.get(key)!;
}
const haveTools = engine !== undefined && spawnSync("aws", ["--version"]).status === 0;

describe.each(DOCUMENTS)("the commands of %s", (document) => {
  const commands = commandsOf(document, readFileSync(resolve(ROOT, document), "utf8"));
  (haveTools ? it : it.skip)(
    "name only what the project, Terraform and the AWS CLI have, and each is run by a test or says why it needs AWS",
    () => {
      const problems = commands
        .map((command) => problemOf(command.text, ask))
        .filter((problem): problem is string => problem !== undefined);
      expect([...new Set(problems)]).toEqual([]);
    },
    300_000,
  );
});

describe("the check itself", () => {
  it("finds the commands of a page: shell lines (continued, chained, behind variables) and inline code", () => {
    const page =
      "Run `npm run ops -- <stack> status`.\n\n```sh\nexport A=1 B=2\nCRM_SETTINGS=x npx cdktf diff && terraform \\\n  state rm aws_eip.crm_host # why\n```\n";
    expect(commandsOf("p.md", page).map((command) => command.text)).toEqual([
      "npx cdktf diff",
      "terraform state rm aws_eip.crm_host",
      "npm run ops -- <stack> status",
    ]);
  });

  (haveTools ? it : it.skip)(
    "fails a page that names a command the project lacks",
    () => {
      expect(
        [
          "npm run deploy-all",
          "npm run ops -- <stack> frobnicate",
          "npm run ops -- S status --verbose",
          "npm run secrets -- S get",
          "npx cdktf apply",
          "terraform frobnicate",
          "terraform apply -var no_such_variable=1",
          "terraform state rm aws_instance.nope",
          "gh variable set NO_SUCH_VARIABLE --body x",
          "aws ec2 describe-frobnicators",
          "bash scripts/nope.sh",
          "make deploy",
        ].map((command) => problemOf(command, ask)),
      ).toEqual([
        "npm run deploy-all: package.json has no such script",
        'npm run ops: no action "frobnicate"',
        "npm run ops: no option --verbose",
        'npm run secrets: no command "get"',
        "npx cdktf apply: no such cdktf command",
        "terraform frobnicate: Terraform has no such command",
        "terraform apply -var no_such_variable=1: no example stack declares the variable no_such_variable",
        "terraform state rm aws_instance.nope: no example stack has the resource aws_instance.nope",
        "gh variable set NO_SUCH_VARIABLE: no workflow reads it and it names no Terraform variable",
        "aws ec2 describe-frobnicators: the AWS CLI has no such operation",
        'no test runs "bash scripts/nope.sh" and no reason says why it cannot be run (RUN_BY)',
        'no test runs "make" and no reason says why it cannot be run (RUN_BY)',
      ]);
      expect(problemOf("npm run ops -- <stack> rotate-secrets", ask)).toBeUndefined();
      // The everyday actions: each its own kind (RUN_BY), with its options.
      expect(problemOf("npm run ops -- CrmHostStack logs app --since 2h ago --follow", ask)).toBeUndefined();
      expect(
        problemOf("npm run ops -- CrmHostStack restore --drill --snapshot snap-0123456789abcdef0", ask),
      ).toBeUndefined();
      expect(problemOf("npm run ops -- CrmHostStack logs --tail 5", ask)).toBe("npm run ops: no option --tail");
      expect(problemOf("npx cdktf synth|diff|deploy", ask)).toBeUndefined();
      expect(
        problemOf("terraform apply -var data_volume_snapshot_id=snap-… -replace=aws_instance.crm_host", ask),
      ).toBeUndefined();
    },
    120_000,
  );
});
