/**
 * Several environments in one app: each settings file is one stack (its own name, region,
 * backend and state key). `CRM_SETTINGS` names the files; `cdktf deploy <stackName>` deploys one.
 */
import { readdirSync, statSync } from "fs";
import { join, resolve } from "path";
import { defaultLocalStatePath, defaultStateKey } from "./backend-settings";
import { SettingsError, SettingsFileError } from "./errors";
import { DEFAULT_SETTINGS_FILE, loadStackSettings, StackSettings } from "./stack-settings";

/**
 * The settings files named by `spec` (`$CRM_SETTINGS`): a comma-separated list of files and
 * directories; a directory stands for its `*.json` files (JSON Schemas, `*.schema.json`, aside),
 * in name order. Empty or unset: the example set, `settings/example.json`.
 */
export function settingsFiles(spec: string | undefined = process.env.CRM_SETTINGS): string[] {
  const entries = (spec ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return [DEFAULT_SETTINGS_FILE];
  const files: string[] = [];
  for (const entry of entries) {
    const path = resolve(entry);
    let directory = false;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      // not there: loadStackSettings reports the file it cannot read
    }
    if (!directory) {
      files.push(path);
      continue;
    }
    let names: string[];
    try {
      names = readdirSync(path);
    } catch (error) {
      throw new SettingsFileError(path, (error as Error).message);
    }
    const found = names.filter((name) => name.endsWith(".json") && !name.endsWith(".schema.json")).sort();
    if (found.length === 0)
      throw new SettingsError("CRM_SETTINGS", `a directory holding settings files (*.json); ${entry} has none`);
    files.push(...found.map((name) => join(path, name)));
  }
  return [...new Set(files)];
}

/** The settings of every environment, validated; a message names the file of a bad one. */
export function loadEnvironments(files: string[] = settingsFiles()): StackSettings[] {
  const environments = files.map((file) => {
    try {
      return loadStackSettings(file);
    } catch (error) {
      // A file problem names its file already; each line of bad settings is prefixed with the file that holds it.
      if (error instanceof Error && !(error instanceof SettingsFileError))
        error.message = error.message
          .split("\n")
          .map((line) => `${file}: ${line}`)
          .join("\n");
      throw error;
    }
  });
  checkDistinct(environments, files);
  return environments;
}

/**
 * Two environments must never share a stack name or a state: the second would overwrite the first.
 * Names and local state files are compared ignoring case, as macOS and Windows file systems do
 * (cdktf writes each stack to a folder of its name); S3 keys are case-sensitive.
 */
function checkDistinct(environments: StackSettings[], files: string[]): void {
  const stacks = new Map<string, { file: string; name: string }>();
  const states = new Map<string, string>();
  environments.forEach((settings, index) => {
    const file = files[index];
    const other = stacks.get(settings.stackName.toLowerCase());
    if (other !== undefined) {
      const names = other.name === settings.stackName ? settings.stackName : `${other.name} and ${settings.stackName}`;
      throw new SettingsError(
        "stackName",
        `a name that no other settings file uses, ignoring case (${other.file} and ${file} both name ${names})`,
      );
    }
    stacks.set(settings.stackName.toLowerCase(), { file, name: settings.stackName });
    const backend = settings.backend;
    const state =
      backend.type === "s3"
        ? `s3://${backend.bucket}/${backend.key ?? defaultStateKey(settings.stackName)}`
        : resolve("cdktf.out", "stacks", settings.stackName, backend.path ?? defaultLocalStatePath(settings.stackName));
    const compared = backend.type === "s3" ? state : state.toLowerCase();
    const sharing = states.get(compared);
    if (sharing !== undefined) {
      throw new SettingsError(
        backend.type === "s3" ? "backend.key" : "backend.path",
        `a state of its own (${sharing} and ${file} both keep their state in ${state})`,
      );
    }
    states.set(compared, file);
  });
}
