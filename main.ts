import { AwsProvider } from "@cdktf/provider-aws/lib/provider";
import { App, TerraformStack } from "cdktf";
import { Construct } from "constructs";
import { mkdtempSync, rmSync } from "fs";
import { tmpdir } from "os";
import { join } from "path";
import { HASHED_ADDRESSES, moveFromEarlierAddresses } from "./constructs/addresses";
import { BootstrapVersionCheck } from "./constructs/bootstrap-version-check";
import { BootstrapVariables } from "./constructs/bootstrap-variables";
import { DeploymentVariables } from "./constructs/deployment-variables";
import { UserDataTooLarge } from "./constructs/provisioning-user-data";
import { SecretParameters } from "./constructs/secret-parameters";
import { SecretVariables } from "./constructs/secret-variables";
import { SsmImageParameter } from "./constructs/ssm-image-parameter";
import { StateBackend } from "./constructs/state-backend";
import { loadEnvironments } from "./settings/environments";
import { SettingsProblem } from "./settings/errors";
import { AWS_PROVIDER_VERSION_VARIABLE, awsProviderVersion, PINNED_AWS_PROVIDER } from "./settings/provider-version";
import { StackSettings } from "./settings/stack-settings";
import { SharedParts, userDefaultTags } from "./topologies/shared";

/** The oldest Terraform that can run the stack: 1.10 brought S3-native state locking (`use_lockfile`). */
export const MINIMUM_TERRAFORM_VERSION = ">= 1.10.0";

/**
 * The CRM host of the original stack: one EC2 instance with its firewall, identity, key pair and first-boot script;
 * or, with `"topology": "scale-out"`, the same hosts in an Auto Scaling group behind an Application Load
 * Balancer, on Amazon RDS for MariaDB (docs/scale-out.md).
 */
export class CrmHostStack extends TerraformStack {
  constructor(scope: Construct, settings: StackSettings) {
    super(scope, settings.stackName);
    // No typed binding for required_version on a stack: an override of the terraform block.
    this.addOverride("terraform.required_version", MINIMUM_TERRAFORM_VERSION);
    new StateBackend(this, "state", { settings: settings.backend, defaultRegion: settings.region });
    const nameTag = `${settings.stackName}/${settings.instanceName}`;

    // The user's tags on every resource that takes tags (the provider merges them under each resource's own).
    new AwsProvider(this, "aws", { region: settings.region, defaultTags: userDefaultTags(settings.tags) });
    // The binding pins its own version exactly; CRM_AWS_PROVIDER_VERSION names another, tested one (a mirror's).
    const version = awsProviderVersion(process.env[AWS_PROVIDER_VERSION_VARIABLE]);
    if (version !== PINNED_AWS_PROVIDER) this.addOverride("terraform.required_providers.aws.version", version);
    // The variables both topologies take; each topology builds its own first too.
    const inputs = new DeploymentVariables(this, "inputs");
    const bootstrap = new BootstrapVariables(this, "bootstrap_inputs");
    const scaleOut = settings.provisioning.topology === "scale-out";
    // The secrets: sensitive variables in the user data (as the original stack), or parameters the host reads at boot.
    const secrets =
      settings.provisioning.secrets === "parameter-store"
        ? new SecretParameters(this, "secret_parameters", {
            stackName: settings.stackName,
            region: settings.region,
            rootPassword: !scaleOut,
          })
        : new SecretVariables(this, "secrets");
    new BootstrapVersionCheck(this, "bootstrap", {
      version: bootstrap.version,
      parameterName: bootstrap.parameterName,
    });
    const image = new SsmImageParameter(this, "image", { parameterName: inputs.imageParameter });
    const shared: SharedParts = { settings, nameTag, inputs, secrets, image };
    // Each topology's module is loaded only by a stack that uses it: the single host's synthesis then
    // skips the scale-out's constructs and provider bindings (what that saves: docs/testing.md, Benchmarks).
    if (scaleOut) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when used (above)
      (require("./topologies/scale-out") as typeof import("./topologies/scale-out")).buildScaleOut(this, shared);
    } else {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when used (above)
      (require("./topologies/single-host") as typeof import("./topologies/single-host")).buildSingleHost(this, shared);
      // Deployments made before the readable names keep every resource: the hashed addresses move to them.
      moveFromEarlierAddresses(this, HASHED_ADDRESSES);
    }
  }
}

/**
 * Synthesizes one stack per settings file: `$CRM_SETTINGS` (files or directories, comma-separated;
 * see settings/environments.ts), else the example set.
 */
export function synthesize(app: App = new App(), environments: StackSettings[] = loadEnvironments()): App {
  for (const settings of environments) new CrmHostStack(app, settings);
  app.synth();
  return app;
}

/**
 * The stacks of every settings file built without writing anything: what stops synthesis (a bad
 * setting or settings file, user data over EC2's limit) throws here too.
 */
export function checkSettings(environments: StackSettings[] = loadEnvironments()): void {
  // An App makes its output directory at once: a temporary one, removed, as nothing is synthesized.
  const outdir = mkdtempSync(join(tmpdir(), "crm-check-"));
  try {
    const app = new App({ outdir, skipValidation: true });
    for (const settings of environments) new CrmHostStack(app, settings);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** `npm run check:settings -- --help`. */
export const CHECK_SETTINGS_HELP = `usage: npm run check:settings [-- -h]
Type-checks the project, then builds every stack of the settings files without writing anything, as
npm run synth, diff, deploy and destroy do before cdktf starts: each problem of a settings file is one
line naming the file and the setting, all of a file's at once.
  CRM_SETTINGS  the settings files: comma-separated files and directories (their *.json files);
                empty or unset, the example set (settings/example.json)
Exit status: 0 when every stack builds;
  1: a problem of a settings file (or user data over EC2's limit);
  2: an argument it does not know, or the type check failed (tsc's messages above).
  -h, --help    this help`;

/**
 * The check's arguments (after `--check`): `--help` or `-h` prints the usage and exits 0; any other stops in one
 * line, exit 2, since the check has no option a misspelt one could stand for.
 */
function checkArguments(args: readonly string[]): void {
  if (args.some((arg) => arg === "--help" || arg === "-h")) {
    console.log(CHECK_SETTINGS_HELP);
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(`check:settings: unknown argument ${args[0]} (expected none, or --help)`);
    process.exit(2);
  }
}

/**
 * The app's entry point: `cdktf synth|diff|deploy|destroy` runs it (cdktf.json: `node --import tsx main.ts`).
 * With `--check` (`npm run check:settings`, which npm run synth, diff, deploy and destroy run before cdktf),
 * it only checks the settings, with the arguments that follow it: a problem's one line is then printed once,
 * where cdktf would print the app's error twice (as the app's output, and again in its summary;
 * docs/settings.md).
 */
export function main(args: readonly string[] = process.argv.slice(2)): void {
  const check = args.includes("--check");
  if (check) checkArguments(args.filter((arg) => arg !== "--check"));
  try {
    if (check) checkSettings();
    else synthesize();
  } catch (error) {
    // A bad setting or settings file is the user's to fix: show the message, not a stack trace.
    if (!(error instanceof SettingsProblem || error instanceof UserDataTooLarge)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

if (require.main === module) main();
