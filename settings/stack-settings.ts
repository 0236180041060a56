/**
 * The synthesis-time settings of the stack: the original stack's placeholders that are fixed per
 * deployment (names, the repository, the database), read from a JSON file and validated
 * before anything is synthesized. Values that differ per AWS account are Terraform variables
 * instead (see constructs/deployment-variables.ts); secrets are never settings.
 * The schema below is also published as JSON Schema (stack-settings.schema.json, written by
 * `npm run docs`), so that `"$schema"` in a settings file gives completion and checking in editors.
 */
import { resolve } from "path";
import { z } from "zod";
import { BackendSettings } from "./backend-settings";
import { HOST_FILES, hostLayout, pathsApart } from "./host-layout";
import {
  domainBesideOwnPort80,
  PROVISIONING_DEFAULTS,
  PROVISIONING_FIELDS,
  ProvisioningSettings,
  PRODUCTION_PATHS,
  RELEASE_COMMAND_TIMEOUT_SECONDS,
  scaleOutProvisioning,
} from "./provisioning-settings";
import { backendSettings, backendSettingsSchema, stateKeyInBucketRegion } from "./backend-settings";
import { alarmEmailSchema, MAX_CERTIFICATE_NAME_LENGTH } from "./domain-settings";
import { oneProblem, RemovedSettingError, SettingsProblem, settingsProblemsFrom } from "./errors";
import { readJsonFile } from "./json-file";
import { tagsSchema } from "./tag-settings";
import { awsRegion, flag, isKmsKeyInRegion, kmsArnStart, matching, settingRules, text } from "./rules";

/** The settings file used when `CRM_SETTINGS` is not set: the example set shipped with the repository. */
export const DEFAULT_SETTINGS_FILE = resolve(__dirname, "example.json");

/** The JSON Schema of settings files, generated from stackSettingsSchema. */
export const SETTINGS_JSON_SCHEMA_FILE = resolve(__dirname, "stack-settings.schema.json");

/** The AWS managed key of Parameter Store, which encrypts SecureString parameters unless a key is named. */
export const DEFAULT_SECRETS_KMS_KEY_ID = "alias/aws/ssm";

/** What KMS takes as a KeyId: an alias name, a key id (multi-Region too), a key ARN or an alias ARN. */
const KMS_KEY_ID_PATTERN = new RegExp(
  "^(alias/[A-Za-z0-9/_-]{1,250}|(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})|" +
    "arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})|alias/[A-Za-z0-9/_-]{1,250}))$",
);

const STACK_NAME_EXPECTED =
  "a stack name of 1 to 64 letters, digits or -, starting with a letter (not with aws or ssm, in any case, " +
  'with "secrets": "parameter-store")';

/** The provisioning settings, the instance-side paths defaulting to the original stack's production values. */
const provisioningWithDefaults = {
  ...PROVISIONING_FIELDS,
  loginUser: PROVISIONING_FIELDS.loginUser.default(PRODUCTION_PATHS.loginUser),
  loginHome: PROVISIONING_FIELDS.loginHome.default(PRODUCTION_PATHS.loginHome),
  swapFile: PROVISIONING_FIELDS.swapFile.default(PRODUCTION_PATHS.swapFile),
  logFile: PROVISIONING_FIELDS.logFile.default(PRODUCTION_PATHS.logFile),
  metadataEndpoint: PROVISIONING_FIELDS.metadataEndpoint.default(PRODUCTION_PATHS.metadataEndpoint),
  dataMount: PROVISIONING_FIELDS.dataMount.default(PRODUCTION_PATHS.dataMount),
  dataVolumeWaitSeconds: PROVISIONING_FIELDS.dataVolumeWaitSeconds.default(PRODUCTION_PATHS.dataVolumeWaitSeconds),
  scriptDirectory: PROVISIONING_FIELDS.scriptDirectory.default(PRODUCTION_PATHS.scriptDirectory),
  redirectHttpPort: PROVISIONING_FIELDS.redirectHttpPort.default(PROVISIONING_DEFAULTS.redirectHttpPort),
  secrets: PROVISIONING_FIELDS.secrets.default(PROVISIONING_DEFAULTS.secrets),
  topology: PROVISIONING_FIELDS.topology.default(PROVISIONING_DEFAULTS.topology),
  healthCheckPath: PROVISIONING_FIELDS.healthCheckPath.default(PROVISIONING_DEFAULTS.healthCheckPath),
  releaseCommandTimeoutSeconds: PROVISIONING_FIELDS.releaseCommandTimeoutSeconds.default(
    RELEASE_COMMAND_TIMEOUT_SECONDS,
  ),
};

/** A settings file: the stack's names and region, and the provisioning settings, in one flat object. */
export const stackSettingsSchema = z
  .strictObject({
    $schema: text("Address of this file's JSON Schema, for editors (ignored by the stack).", "a string").optional(),
    stackName: matching(
      '`<stack_name>`: cdktf stack name, first half of the Name tags; with `"secrets": "parameter-store"` ' +
        "the first level of the secrets' parameter names, which may not start with aws or ssm.",
      /^[A-Za-z][A-Za-z0-9-]{0,63}$/,
      STACK_NAME_EXPECTED,
    ),
    instanceName: matching(
      "`<instance_name>`: second half of the Name tags; the output is `<instance_name>PublicIP`.",
      /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
      "1 to 64 letters, digits, _ or -, starting with a letter (it names the Terraform output <instanceName>PublicIP)",
    ),
    region: awsRegion(
      "AWS region to deploy to: one the AWS SDK's list of regions holds (a typo such as eu-wset-1 is refused).",
    ),
    deleteDataVolumeOnDestroy: flag(
      "Whether `terraform destroy` may delete the database's data volume (after a final snapshot). " +
        "Off: destroy stops at the volume (see docs/operations.md).",
    ).default(false),
    backend: backendSettingsSchema.optional(),
    secretsKmsKeyId: matching(
      "KMS key of the secrets' SecureString parameters when `secrets` is `parameter-store`: " +
        "the AWS managed key `alias/aws/ssm`, or a customer key by alias, id or ARN. The instance role may decrypt with " +
        "this key only, and only through Parameter Store (docs/secrets.md).",
      KMS_KEY_ID_PATTERN,
      "a KMS key as alias/<name>, a key id (1234abcd-12ab-34cd-56ef-1234567890ab or mrk-…), or a key or alias ARN in the stack's " +
        "region; alias/aws/ssm or a customer managed key (not another service's AWS managed key, alias/aws/…)",
    ).default(DEFAULT_SECRETS_KMS_KEY_ID),
    alarmEmail: alarmEmailSchema.optional(),
    tags: tagsSchema.default({}),
    snapshotCopyRegion: awsRegion(
      "Second AWS region that Data Lifecycle Manager copies every snapshot of the data volume to, encrypted " +
        "there with its default EBS key and kept `snapshot_copy_retention_days` (docs/operations.md, Backups): a loss of the stack's " +
        "region or of the volume is then survivable. Default: none, the snapshots stay in the stack's region.",
    ).optional(),
    ...provisioningWithDefaults,
  })
  .check((ctx) => pathsApart(ctx.value, ctx))
  // The instance's own layout, after pathsApart: the first issue is the one reported, and that one is more specific.
  .check((ctx) => hostLayout(ctx.value, ctx))
  .check((ctx) => stateKeyInBucketRegion(ctx.value, ctx))
  .check((ctx) => domainBesideOwnPort80(ctx.value, ctx))
  .check((ctx) => scaleOutProvisioning(ctx.value, ctx))
  .check((ctx) => scaleOutStack(ctx.value, ctx))
  .check((ctx) => parameterStoreNames(ctx.value, ctx))
  .check((ctx) => secretsKey(ctx.value, ctx))
  .check((ctx) => snapshotCopyRegion(ctx.value, ctx));

/** A copy in the stack's own region would survive nothing that the snapshots there do not. */
function snapshotCopyRegion(
  settings: { region: string; snapshotCopyRegion?: string },
  ctx: z.core.ParsePayload<unknown>,
): void {
  if (settings.snapshotCopyRegion !== undefined && settings.snapshotCopyRegion === settings.region) {
    ctx.issues.push({
      code: "custom",
      path: ["snapshotCopyRegion"],
      input: settings.snapshotCopyRegion,
      message: `a region other than the stack's own, ${settings.region} (the copies are there to survive the loss of that region)`,
    });
  }
}

/** Parameter Store refuses a parameter name whose first level starts with `aws` or `ssm`, in any case. */
function parameterStoreNames(
  settings: { stackName: string; secrets: string },
  ctx: z.core.ParsePayload<unknown>,
): void {
  if (settings.secrets === "parameter-store" && /^(aws|ssm)/i.test(settings.stackName)) {
    ctx.issues.push({
      code: "custom",
      path: ["stackName"],
      input: settings.stackName,
      message:
        'a stack name not starting with aws or ssm (in any case) with "secrets": "parameter-store" (the secrets are the ' +
        "parameters /<stackName>/crm/…, and Parameter Store refuses a name starting with either)",
    });
  }
}

/**
 * The secrets' key: an AWS managed key other than Parameter Store's own (alias/aws/s3, …) may be used by its
 * service only; a key ARN of another region or partition, by no service of the stack's region.
 */
function secretsKey(settings: { region: string; secretsKmsKeyId: string }, ctx: z.core.ParsePayload<unknown>): void {
  const key = settings.secretsKmsKeyId;
  const alias = /(^|:)alias\/(.*)$/.exec(key)?.[2];
  if (alias !== undefined && alias.startsWith("aws/") && `alias/${alias}` !== DEFAULT_SECRETS_KMS_KEY_ID) {
    ctx.issues.push({
      code: "custom",
      path: ["secretsKmsKeyId"],
      input: key,
      message: `${DEFAULT_SECRETS_KMS_KEY_ID} or a customer managed key (alias/${alias} is another service's AWS managed key, whose policy lets only that service use it)`,
    });
  } else if (!isKmsKeyInRegion(key, settings.region)) {
    ctx.issues.push({
      code: "custom",
      path: ["secretsKmsKeyId"],
      input: key,
      message: `a KMS key in the stack's region, ${settings.region} (an ARN starting ${kmsArnStart(settings.region)}): Parameter Store encrypts only with a key of its own region`,
    });
  }
}

/**
 * The single host's own settings, refused with `"topology": "scale-out"` rather than ignored: there the
 * database is RDS's (no data volume to keep or snapshot).
 */
function scaleOutStack(
  settings: {
    topology: string;
    deleteDataVolumeOnDestroy: boolean;
    snapshotCopyRegion?: string;
    domain?: { name: string };
  },
  ctx: z.core.ParsePayload<unknown>,
): void {
  if (settings.topology !== "scale-out") return;
  if (settings.domain !== undefined && settings.domain.name.length > MAX_CERTIFICATE_NAME_LENGTH) {
    ctx.issues.push({
      code: "custom",
      path: ["domain", "name"],
      input: settings.domain.name,
      message:
        `a name of at most ${MAX_CERTIFICATE_NAME_LENGTH} characters with "topology": "scale-out" (ACM takes no longer name as a ` +
        "certificate's first name, and the load balancer's certificate is ACM's)",
    });
  }
  if (settings.snapshotCopyRegion !== undefined) {
    ctx.issues.push({
      code: "custom",
      path: ["snapshotCopyRegion"],
      input: settings.snapshotCopyRegion,
      message:
        'no snapshotCopyRegion with "topology": "scale-out" (there is no data volume to snapshot: RDS keeps the ' +
        "database's backups, see docs/scale-out.md)",
    });
  }
  if (settings.deleteDataVolumeOnDestroy) {
    ctx.issues.push({
      code: "custom",
      path: ["deleteDataVolumeOnDestroy"],
      input: true,
      message:
        'false with "topology": "scale-out" (there is no data volume: the database is RDS\'s, kept by its deletion ' +
        "protection and a final snapshot, see docs/scale-out.md)",
    });
  }
}

export interface StackSettings {
  /** `<stack_name>`: cdktf stack name, first half of the Name tags. */
  readonly stackName: string;
  /** `<instance_name>`: second half of the Name tags; the output is `<instance_name>PublicIP`. */
  readonly instanceName: string;
  /** AWS region to deploy to. */
  readonly region: string;
  /**
   * Whether `terraform destroy` may delete the database's data volume (after AWS takes a final
   * snapshot of it). Off by default: destroy then stops at the volume (lifecycle.prevent_destroy).
   */
  readonly deleteDataVolumeOnDestroy: boolean;
  /** Where Terraform keeps the stack's state: local by default (constructs/state-backend.ts). */
  readonly backend: BackendSettings;
  /** KMS key of the secrets' parameters in `parameter-store` mode (provisioning.secrets). */
  readonly secretsKmsKeyId: string;
  /** Who is told by e-mail when an alarm of the stack fires (constructs/alarm-topic.ts): nobody by default. */
  readonly alarmEmail?: string;
  /** The user's tags, on every resource through the provider's default_tags (settings/tag-settings.ts): none by default. */
  readonly tags: Readonly<Record<string, string>>;
  /** Region that every snapshot of the data volume is copied to (constructs/data-volume-backups.ts): none by default. */
  readonly snapshotCopyRegion?: string;
  /** The provisioning script's settings (`<app>`, `<app_dir>`, `<repo_url>`, …). */
  readonly provisioning: ProvisioningSettings;
}

/** The host's own paths that were settings once (HOST_FILES holds them, and paths that never were). */
const FORMER_PATH_SETTINGS = [
  "unitDirectory",
  "deviceDirectory",
  "databaseDir",
  "fstabFile",
  "nftablesConfig",
] as const;

/**
 * Settings that are gone, by their path in the file (`domain.caddyUrl`: inside `domain`), with what took their place:
 * the host's own paths became constants of the host (HOST_FILES); Caddy's download left `domain` when every single host
 * got Caddy as its front. A file that still names one is told so, rather than that the key is unknown.
 */
export const REMOVED_SETTINGS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    FORMER_PATH_SETTINGS.map((name) => [
      name,
      `the host's path ${HOST_FILES[name]} is a constant of the host, no longer a setting`,
    ]),
  ),
  "domain.caddyUrl": 'set the top-level "caddyUrl" instead (every single host downloads Caddy, its front)',
  "domain.caddySha512": 'set the top-level "caddySha512" instead (every single host downloads Caddy, its front)',
};

/** Whether `raw` (an object) holds the setting at `path` (REMOVED_SETTINGS' keys: one level, or one object deep). */
function holds(raw: Record<string, unknown>, path: string): boolean {
  const [outer, inner] = path.split(".");
  const value = raw[outer];
  return inner === undefined
    ? Object.hasOwn(raw, outer)
    : typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, inner);
}

/** `raw` without the settings at `paths` (copies: the caller's object stays as it is). */
function without(raw: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...raw };
  for (const path of paths) {
    const [outer, inner] = path.split(".");
    if (inner === undefined) delete copy[outer];
    else
      copy[outer] = Object.fromEntries(
        Object.entries(copy[outer] as Record<string, unknown>).filter(([key]) => key !== inner),
      );
  }
  return copy;
}

/** Reads and validates a settings file (default: `$CRM_SETTINGS`, else the example set). */
export function loadStackSettings(file: string = process.env.CRM_SETTINGS || DEFAULT_SETTINGS_FILE): StackSettings {
  return parseStackSettings(readJsonFile(file));
}

/**
 * Validates raw settings (as parsed from JSON) and fills in the production defaults of the
 * provisioning paths. Throws a SettingsProblem naming every bad setting, one line each (a SettingsError
 * or RemovedSettingError when there is one).
 */
export function parseStackSettings(raw: unknown): StackSettings {
  const object = typeof raw === "object" && raw !== null && !Array.isArray(raw);
  const removed = object
    ? Object.keys(REMOVED_SETTINGS).filter((path) => holds(raw as Record<string, unknown>, path))
    : [];
  const problems: SettingsProblem[] = removed.map((path) => new RemovedSettingError(path, REMOVED_SETTINGS[path]));
  // The removed keys are told as such, not again as unknown keys.
  const result = stackSettingsSchema.safeParse(object ? without(raw as Record<string, unknown>, removed) : raw);
  if (!result.success) problems.push(...settingsProblemsFrom(result.error, raw, stackSettingsSchema));
  if (problems.length > 0 || !result.success) throw oneProblem(problems);
  const {
    $schema: _editorsOnly,
    stackName,
    instanceName,
    region,
    deleteDataVolumeOnDestroy,
    backend,
    secretsKmsKeyId,
    alarmEmail,
    tags,
    snapshotCopyRegion,
    ...provisioning
  } = result.data;
  return {
    stackName,
    instanceName,
    region,
    deleteDataVolumeOnDestroy,
    backend: backendSettings(backend),
    secretsKmsKeyId,
    alarmEmail,
    tags,
    snapshotCopyRegion,
    provisioning,
  };
}

/** The JSON Schema of settings files (draft 2020-12), as written to SETTINGS_JSON_SCHEMA_FILE. */
export function settingsJsonSchema(): string {
  const schema = z.toJSONSchema(stackSettingsSchema, {
    io: "input",
    target: "draft-2020-12",
    // Editors show patternErrorMessage (VS Code) instead of the bare pattern when a value fails it.
    override: ({ zodSchema, jsonSchema }) => {
      const rule = settingRules.get(zodSchema);
      if (rule && jsonSchema.pattern) jsonSchema.patternErrorMessage = `Expected ${rule.expected}.`;
    },
  });
  return `${JSON.stringify({ ...schema, title: "crm-host stack settings" }, null, 2)}\n`;
}
