/**
 * The real AWS provider (hashicorp/aws) for the engine tests, through the project's Terraform CLI
 * configuration (TF_CLI_CONFIG_FILE, written by scripts/ci/install-tools.sh): from the machine's
 * filesystem mirror where there is one, from the registry otherwise. Stacks run as copies whose
 * backend is local and, with a mirror, whose provider constraint names the mirror's version; the
 * provider reaches moto through AWS_ENDPOINT_URL.
 */
import { execFile, spawn } from "child_process";
import { existsSync, readFileSync } from "fs";
import { resolve } from "path";
import { awsProviderMirror } from "../../scripts/doctor";
import { StackJson } from "../../scripts/docs/terraform-json";
import { StackSettings } from "../../settings/stack-settings";
import { newKey } from "./ssh-keys";
import { tfVars } from "./terraform-engine";

const ROOT = resolve(__dirname, "../..");

export interface ProviderSetup {
  /** The CLI configuration file (TF_CLI_CONFIG_FILE). */
  readonly cliConfig: string;
  /** The newest hashicorp/aws version of the filesystem mirror; undefined: the registry, the stack's own constraint. */
  readonly version?: string;
  /** The mirror's directory, if any. */
  readonly mirror?: string;
}

/** The project's CLI configuration and the provider it yields; undefined when `npm run tools` has not written it. */
export function findProviderSetup(): ProviderSetup | undefined {
  const cliConfig = process.env.TF_CLI_CONFIG_FILE;
  if (!cliConfig || !existsSync(cliConfig)) return undefined;
  // The mirror as `npm run doctor` reads it: the only source of hashicorp/aws.
  const mirror = awsProviderMirror(readFileSync(cliConfig, "utf8"));
  if (!mirror) return { cliConfig };
  return mirror.versions.length === 0
    ? undefined
    : { cliConfig, version: mirror.versions[mirror.versions.length - 1], mirror: mirror.path };
}

/** The resource types the gaps file's missing APIs drop from the copies. */
export function droppedTypes(gaps: { missing: { drop?: string }[] }): string[] {
  return gaps.missing.flatMap((gap) => (gap.drop ? [gap.drop] : []));
}

/**
 * A copy of a synthesized stack to run against moto: a local backend (state in `statePath`, by default
 * terraform.tfstate in the working directory),
 * the provider constraint set to `version` (when given), and the resources of the types in `drop`
 * removed with the `moved` blocks that lead to them (moto lacks their API: __tests__/engine/moto-gaps.json).
 */
export function providerCopy(
  stack: StackJson,
  version: string | undefined,
  drop: readonly string[] = [],
  statePath = "terraform.tfstate",
): StackJson {
  const copy = JSON.parse(JSON.stringify(stack)) as StackJson & { moved?: { from: string; to: string }[] };
  const terraform = copy.terraform as { backend?: unknown; required_providers: { aws: { version: string } } };
  terraform.backend = { local: { path: statePath } };
  if (version) terraform.required_providers.aws.version = version;
  for (const type of drop) delete copy.resource?.[type];
  if (copy.moved) copy.moved = copy.moved.filter((block) => !drop.some((type) => block.to.startsWith(`${type}.`)));
  const dangling = JSON.stringify(copy).match(new RegExp(`\\b(${drop.join("|") || "(?!)"})\\.[a-z0-9_]+`, "g"));
  if (dangling)
    throw new Error(`dropping ${drop.join(", ")} leaves references to ${[...new Set(dangling)].join(", ")}`);
  return copy;
}

/** The environment that points the provider and the AWS CLI at moto, with moto's dummy credentials. */
export function motoEnvironment(endpoint: string, region: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: "moto",
    AWS_SECRET_ACCESS_KEY: "moto",
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_PAGER: "",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

/**
 * {@link motoEnvironment} as an operator's command meets it, spread over `process.env`: the machine user's
 * profile, session token and AWS config and credentials files left out (undefined: a child process gets
 * none), so nothing outside the test can answer in moto's place.
 */
export function isolatedMotoEnvironment(endpoint: string, region: string): NodeJS.ProcessEnv {
  return {
    ...motoEnvironment(endpoint, region),
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_CONFIG_FILE: "/dev/null",
    AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
  };
}

/** One resource change of `terraform show -json` on a plan. */
interface ResourceChange {
  readonly address: string;
  readonly change: {
    actions: string[];
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
    after_unknown?: Record<string, unknown>;
  };
}

/**
 * What a plan would change, as `<address> <attribute>` for an update (one per top-level attribute whose
 * value differs or becomes unknown) and `<address> <action>` for anything else.
 */
export function plannedChanges(planJson: { resource_changes?: ResourceChange[] }): string[] {
  return Object.keys(plannedChangeDetails(planJson)).sort();
}

/** plannedChanges with each change's before, after and unknown values (for failure messages). */
export function plannedChangeDetails(planJson: { resource_changes?: ResourceChange[] }): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  for (const { address, change } of planJson.resource_changes ?? []) {
    const actions = change.actions.join("+");
    if (actions === "no-op" || actions === "read") continue;
    if (actions !== "update") {
      found[`${address} ${actions}`] = actions;
      continue;
    }
    const before = change.before ?? {};
    const after = change.after ?? {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (JSON.stringify(before[key]) !== JSON.stringify(after[key]) || containsTrue(change.after_unknown?.[key])) {
        found[`${address} ${key}`] = { before: before[key], after: after[key], unknown: change.after_unknown?.[key] };
      }
    }
  }
  return found;
}

function containsTrue(value: unknown): boolean {
  if (value === true) return true;
  if (Array.isArray(value)) return value.some(containsTrue);
  if (value && typeof value === "object") return Object.values(value).some(containsTrue);
  return false;
}

/**
 * `copy` with moto's listed drift (moto-gaps.json's `drift`) ignored by Terraform: each listed attribute of
 * a resource the copy holds joins that resource's `lifecycle.ignore_changes`. For the workflow test, whose
 * drift check must be able to find a deployed stack unchanged; __tests__/engine/real-provider.test.ts proves
 * on copies without this that those attributes, and only they, are what moto does not keep.
 */
export function ignoringMotoDrift(
  copy: StackJson,
  gaps: { drift: { address: string; attributes: string[] }[] },
): StackJson {
  const result = JSON.parse(JSON.stringify(copy)) as StackJson;
  for (const { address, attributes } of gaps.drift) {
    const [type, name] = address.split(".");
    const resource = (
      result.resource?.[type] as Record<string, { lifecycle?: { ignore_changes?: string[] } }> | undefined
    )?.[name];
    if (!resource) continue;
    resource.lifecycle = {
      ...resource.lifecycle,
      ignore_changes: [...new Set([...(resource.lifecycle?.ignore_changes ?? []), ...attributes])],
    };
  }
  return result;
}

/**
 * An AWS CLI command against moto (`env`: motoEnvironment's), its JSON answer; bounded, and it throws on failure.
 * The machine user's AWS config and credentials files are not read (unless `env` names others).
 */
export function awsJson(args: string[], env: Record<string, string>): Promise<any> {
  // --endpoint-url as well: the AWS CLI v1 ignores AWS_ENDPOINT_URL for some services (RDS).
  return new Promise((done, fail) =>
    execFile(
      "aws",
      [
        ...args,
        "--endpoint-url",
        env.AWS_ENDPOINT_URL,
        "--output",
        "json",
        "--cli-read-timeout",
        "20",
        "--cli-connect-timeout",
        "5",
      ],
      {
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          AWS_CONFIG_FILE: "/dev/null",
          AWS_SHARED_CREDENTIALS_FILE: "/dev/null",
          ...env,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) =>
        error
          ? fail(new Error(`aws ${args.join(" ")}: ${stderr || error.message}`))
          : done(stdout.trim() ? JSON.parse(stdout) : {}),
    ),
  );
}

/**
 * moto seeded as an account the example stacks deploy into would be: DNS hostnames on in the default VPC,
 * the hosted zones of the settings' domains, and the secrets `npm run secrets -- <stack> set` puts for
 * those that keep them in Parameter Store (`files`: the settings files, as the command reads them).
 * Resolves with the default VPC's subnets, by zone.
 */
export async function seedAccount(
  files: readonly { file: string; settings: StackSettings }[],
  env: Record<string, string>,
): Promise<string[]> {
  const vpc = (await awsJson(["ec2", "describe-vpcs", "--filters", "Name=is-default,Values=true"], env)).Vpcs[0]
    .VpcId as string;
  await awsJson(["ec2", "modify-vpc-attribute", "--vpc-id", vpc, "--enable-dns-hostnames", '{"Value":true}'], env);
  const subnets = (
    (await awsJson(["ec2", "describe-subnets", "--filters", `Name=vpc-id,Values=${vpc}`], env)).Subnets as {
      SubnetId: string;
      AvailabilityZone: string;
    }[]
  )
    .sort((a, b) => a.AvailabilityZone.localeCompare(b.AvailabilityZone))
    .map((subnet) => subnet.SubnetId);
  for (const zone of new Set(files.map(({ settings }) => settings.provisioning.domain?.hostedZone).filter(Boolean))) {
    // Where Route 53's own endpoint is set (AWS_ENDPOINT_URL_ROUTE_53, as the provider reads it), the zone goes there.
    await awsJson(["route53", "create-hosted-zone", "--name", zone!, "--caller-reference", `seed-${zone}`], {
      ...env,
      AWS_ENDPOINT_URL: env.AWS_ENDPOINT_URL_ROUTE_53 ?? env.AWS_ENDPOINT_URL,
    });
  }
  for (const { file, settings } of files)
    if (settings.provisioning.secrets === "parameter-store") await putSecrets(file, settings, env);
  return subnets;
}

/** `npm run secrets -- <stack> set`, as the operator runs it, the values on standard input. */
export function putSecrets(file: string, settings: StackSettings, env: Record<string, string>): Promise<void> {
  const lines =
    settings.provisioning.topology === "scale-out"
      ? ["app-Pass-1", "token-1"]
      : ["root-Pass-1", "app-Pass-1", "token-1"];
  return new Promise((done, fail) => {
    const child = spawn("npm", ["run", "-s", "secrets", "--", settings.stackName, "set"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CRM_SETTINGS: file, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) done();
      else fail(new Error(`npm run secrets -- ${settings.stackName} set: exit ${code}\n${output}`));
    });
    child.stdin.end(`${lines.join("\n")}\n`);
  });
}

/** The variables (TF_VAR_…) a stack's apply is given: a new key pair, the subnets, and the secrets unless Parameter Store holds them. */
export function stackVariables(settings: StackSettings, subnets: readonly string[]): Record<string, string> {
  const scaleOut = settings.provisioning.topology === "scale-out";
  return {
    ...tfVars({
      key_pair_name: `${settings.stackName}-admin`,
      ssh_public_key: newKey("ed25519").line,
      ...(scaleOut ? { subnet_ids: subnets.slice(0, 2) } : { subnet_id: subnets[0] }),
    }),
    ...(settings.provisioning.secrets === "parameter-store"
      ? {}
      : tfVars({ db_root_password: "root-Pass-1", app_db_password: "app-Pass-1", source_host_token: "token-1" })),
  };
}
