/**
 * The synthesis-time settings of the stack: the spec's placeholders that are fixed per
 * deployment (names, the repository, the database), read from a JSON file and validated
 * before anything is synthesized. Values that differ per AWS account are Terraform variables
 * instead (see constructs/deployment-variables.ts); secrets are never settings.
 * The schema below is also published as JSON Schema (stack-settings.schema.json, written by
 * `npm run docs`), so that `"$schema"` in a settings file gives completion and checking in editors.
 */
import { resolve } from "path";
import { z } from "zod";
import { BackendSettings } from "../constructs/state-backend";
import {
  appDirInsideHome, databaseDirApartFromDataMount, PROVISIONING_DEFAULTS, PROVISIONING_FIELDS, ProvisioningSettings, PRODUCTION_PATHS,
} from "../userdata/settings";
import { backendSettings, backendSettingsSchema } from "./backend-settings";
import { settingsErrorFrom } from "./errors";
import { readJsonFile } from "./json-file";
import { awsRegion, flag, matching, settingRules, text } from "./rules";

/** The settings file used when `CRM_SETTINGS` is not set: the example set shipped with the repository. */
export const DEFAULT_SETTINGS_FILE = resolve(__dirname, "example.json");

/** The JSON Schema of settings files, generated from stackSettingsSchema. */
export const SETTINGS_JSON_SCHEMA_FILE = resolve(__dirname, "stack-settings.schema.json");

/** The provisioning settings, the instance-side paths defaulting to the spec's production values. */
const provisioningWithDefaults = {
  ...PROVISIONING_FIELDS,
  loginUser: PROVISIONING_FIELDS.loginUser.default(PRODUCTION_PATHS.loginUser),
  loginHome: PROVISIONING_FIELDS.loginHome.default(PRODUCTION_PATHS.loginHome),
  unitDirectory: PROVISIONING_FIELDS.unitDirectory.default(PRODUCTION_PATHS.unitDirectory),
  swapFile: PROVISIONING_FIELDS.swapFile.default(PRODUCTION_PATHS.swapFile),
  logFile: PROVISIONING_FIELDS.logFile.default(PRODUCTION_PATHS.logFile),
  metadataEndpoint: PROVISIONING_FIELDS.metadataEndpoint.default(PRODUCTION_PATHS.metadataEndpoint),
  deviceDirectory: PROVISIONING_FIELDS.deviceDirectory.default(PRODUCTION_PATHS.deviceDirectory),
  dataMount: PROVISIONING_FIELDS.dataMount.default(PRODUCTION_PATHS.dataMount),
  databaseDir: PROVISIONING_FIELDS.databaseDir.default(PRODUCTION_PATHS.databaseDir),
  fstabFile: PROVISIONING_FIELDS.fstabFile.default(PRODUCTION_PATHS.fstabFile),
  dataVolumeWaitSeconds: PROVISIONING_FIELDS.dataVolumeWaitSeconds.default(PRODUCTION_PATHS.dataVolumeWaitSeconds),
  nftablesConfig: PROVISIONING_FIELDS.nftablesConfig.default(PRODUCTION_PATHS.nftablesConfig),
  scriptDirectory: PROVISIONING_FIELDS.scriptDirectory.default(PRODUCTION_PATHS.scriptDirectory),
  redirectHttpPort: PROVISIONING_FIELDS.redirectHttpPort.default(PROVISIONING_DEFAULTS.redirectHttpPort),
  healthCheckPath: PROVISIONING_FIELDS.healthCheckPath.default(PROVISIONING_DEFAULTS.healthCheckPath),
};

/** A settings file: the stack's names and region, and the provisioning settings, in one flat object. */
export const stackSettingsSchema = z.strictObject({
  $schema: text("Address of this file's JSON Schema, for editors (ignored by the stack).", "a string").optional(),
  stackName: matching("`<stack_name>`: cdktf stack name, first half of the Name tags.",
    /^[A-Za-z][A-Za-z0-9-]{0,63}$/, "a stack name of 1 to 64 letters, digits or -, starting with a letter"),
  instanceName: matching("`<instance_name>`: second half of the Name tags; the output is `<instance_name>PublicIP`.",
    /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
    "1 to 64 letters, digits, _ or -, starting with a letter (it names the Terraform output <instanceName>PublicIP)"),
  region: awsRegion("AWS region to deploy to: one the AWS SDK's list of regions holds (a typo such as eu-wset-1 is refused)."),
  deleteDataVolumeOnDestroy: flag("Whether `terraform destroy` may delete the database's data volume (after a final snapshot). "
    + "Off: destroy stops at the volume (see docs/operations.md).").default(false),
  backend: backendSettingsSchema.optional(),
  ...provisioningWithDefaults,
}).check((ctx) => appDirInsideHome(ctx.value, ctx))
  .check((ctx) => databaseDirApartFromDataMount(ctx.value, ctx));

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
  /** The provisioning script's settings (`<app>`, `<app_dir>`, `<repo_url>`, …). */
  readonly provisioning: ProvisioningSettings;
}

/** Reads and validates a settings file (default: `$CRM_SETTINGS`, else the example set). */
export function loadStackSettings(file: string = process.env.CRM_SETTINGS || DEFAULT_SETTINGS_FILE): StackSettings {
  return parseStackSettings(readJsonFile(file));
}

/**
 * Validates raw settings (as parsed from JSON) and fills in the production defaults of the
 * provisioning paths. Throws a SettingsError naming the first bad setting.
 */
export function parseStackSettings(raw: unknown): StackSettings {
  const result = stackSettingsSchema.safeParse(raw);
  if (!result.success) {
    throw settingsErrorFrom(result.error, raw, stackSettingsSchema);
  }
  const { $schema: _editorsOnly, stackName, instanceName, region, deleteDataVolumeOnDestroy, backend, ...provisioning } = result.data;
  return { stackName, instanceName, region, deleteDataVolumeOnDestroy, backend: backendSettings(backend), provisioning };
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
