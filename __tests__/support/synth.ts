// Brings the cdktf jest matchers' types (toHaveResourceWithProperties, …) into every test;
// setup.js registers their implementation.
import "cdktf/lib/testing/adapters/jest";
import { Testing } from "cdktf";
import { Construct } from "constructs";
import { BootstrapVariables, BootstrapVariablesProps } from "../../constructs/bootstrap-variables";
import { BootstrapVersionCheck, BootstrapVersionCheckProps } from "../../constructs/bootstrap-version-check";
import { SettingsError } from "../../settings/errors";
import { parseStackSettings, StackSettings } from "../../settings/stack-settings";
import exampleSettings from "../../settings/example.json";
import { StackJson } from "../../scripts/docs/terraform-json";

/** Synthesized Terraform JSON of a scope, as text (for the cdktf matchers) and parsed. */
export interface Synthesized {
  readonly text: string;
  readonly json: StackJson;
}

/** Synthesizes what `build` adds to a fresh test stack. */
export function synthesize(build: (scope: Construct) => void): Synthesized {
  const text = Testing.synthScope(build);
  return { text, json: JSON.parse(text) };
}

/** The one resource (or data source) of a type in the JSON; fails when there is not exactly one. */
export function only(blocks: Record<string, Record<string, any>> | undefined, type: string): any {
  const all = Object.values(blocks?.[type] ?? {});
  if (all.length !== 1) throw new Error(`expected exactly one ${type}, found ${all.length}`);
  return all[0];
}

/** BootstrapVersionCheck with its variables (BootstrapVariables), as main.ts builds them; `check` adds to the check's props. */
export function bootstrapCheck(
  scope: Construct,
  variables: BootstrapVariablesProps = {},
  check: Partial<BootstrapVersionCheckProps> = {},
): BootstrapVersionCheck {
  const inputs = new BootstrapVariables(scope, "bootstrap_inputs", variables);
  return new BootstrapVersionCheck(scope, "bootstrap", {
    version: inputs.version,
    parameterName: inputs.parameterName,
    ...check,
  });
}

/** The example settings of the repository, parsed and validated, with optional changes. */
export function exampleStackSettings(changes: Record<string, unknown> = {}): StackSettings {
  return parseStackSettings({ ...exampleSettings, ...changes });
}

/** The message of the SettingsError that parsing `raw` settings throws; fails when they are accepted. */
export function settingsErrorOf(raw: unknown): string {
  try {
    parseStackSettings(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error("the settings were accepted");
}
