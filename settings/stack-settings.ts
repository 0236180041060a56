/**
 * The synthesis-time settings of the stack: the spec's placeholders that are fixed per
 * deployment (names, the repository, the database), read from a JSON file and validated
 * before anything is synthesized. Values that differ per AWS account are Terraform variables
 * instead (see constructs/deployment-variables.ts); secrets are never settings.
 */
import { readFileSync } from "fs";
import { resolve } from "path";
import { ProvisioningSettings, PRODUCTION_PATHS, PROVISIONING_DEFAULTS, validateProvisioningSettings } from "../userdata/settings";
import { requireMatch, SettingsError } from "./errors";

/** The settings file used when `CRM_SETTINGS` is not set: the example set shipped with the repository. */
export const DEFAULT_SETTINGS_FILE = resolve(__dirname, "example.json");

export interface StackSettings {
  /** `<stack_name>`: cdktf stack name, first half of the Name tags. */
  readonly stackName: string;
  /** `<instance_name>`: second half of the Name tags; the output is `<instance_name>PublicIP`. */
  readonly instanceName: string;
  /** AWS region to deploy to. */
  readonly region: string;
  /** The provisioning script's settings (`<app>`, `<app_dir>`, `<repo_url>`, …). */
  readonly provisioning: ProvisioningSettings;
}

/** Keys a settings file may hold; any other key is a typo and is refused. */
const STACK_KEYS = ["stackName", "instanceName", "region"] as const;
const PROVISIONING_KEYS = [
  "appName", "appDir", "repoUrl", "databaseName", "appDbUser", "gitUser", "gitEmail",
  "loginUser", "loginHome", "unitDirectory", "swapFile", "logFile", "metadataEndpoint",
  "nftablesConfig", "fstab", "scriptDirectory", "redirectHttpPort",
] as const;

/** Reads and validates a settings file (default: `$CRM_SETTINGS`, else the example set). */
export function loadStackSettings(file: string = process.env.CRM_SETTINGS || DEFAULT_SETTINGS_FILE): StackSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`Cannot read the settings file ${file}: ${(error as Error).message}`);
  }
  return parseStackSettings(raw);
}

/**
 * Validates raw settings (as parsed from JSON) and fills in the production defaults of the
 * provisioning paths. Throws a SettingsError naming the first bad setting.
 */
export function parseStackSettings(raw: unknown): StackSettings {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new SettingsError("(settings file)", "a JSON object");
  }
  const values = raw as Record<string, unknown>;
  const known: readonly string[] = [...STACK_KEYS, ...PROVISIONING_KEYS];
  for (const key of Object.keys(values)) {
    if (!known.includes(key)) {
      throw new SettingsError(key, `one of the known settings (${known.join(", ")})`);
    }
  }

  const stackName = requireMatch("stackName", values.stackName, /^[A-Za-z][A-Za-z0-9-]{0,63}$/,
    "a stack name of 1 to 64 letters, digits or -, starting with a letter");
  const instanceName = requireMatch("instanceName", values.instanceName, /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
    "1 to 64 letters, digits, _ or -, starting with a letter (it names the Terraform output <instanceName>PublicIP)");
  const region = requireMatch("region", values.region, /^[a-z]{2}(-[a-z]+)+-[0-9]$/,
    "an AWS region name such as us-east-1");

  const provisioning = { ...PRODUCTION_PATHS, ...PROVISIONING_DEFAULTS } as Record<string, unknown>;
  for (const key of PROVISIONING_KEYS) {
    if (values[key] !== undefined) provisioning[key] = values[key];
  }
  for (const key of PROVISIONING_KEYS) {
    if (provisioning[key] === undefined) throw new SettingsError(key, "a value (the setting is required)");
  }
  validateProvisioningSettings(provisioning as unknown as ProvisioningSettings);
  return { stackName, instanceName, region, provisioning: provisioning as unknown as ProvisioningSettings };
}
