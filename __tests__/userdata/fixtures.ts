import { spawnSync } from "child_process";
import { modulesNamed, withModules } from "../support/harness/module-parameters";
import { reportMissingTools } from "../support/required-tools";
import {
  PRODUCTION_PATHS,
  PROVISIONING_DEFAULTS,
  ProvisioningSettings,
  ScriptSecrets,
  SecretParameterNames,
} from "../../settings/provisioning-settings";

/** The example settings of the repository, with the original stack's production paths. */
export const PRODUCTION_SETTINGS: ProvisioningSettings = {
  ...PRODUCTION_PATHS,
  ...PROVISIONING_DEFAULTS,
  appName: "crm",
  appDir: "/home/ec2-user/crm-app",
  repoUrl: "https://github.com/example-org/crm-app.git",
  databaseName: "crm",
  appDbUser: "crm_app",
  gitUser: "CRM Deploy",
  gitEmail: "deploy@example.com",
};

/** Distinct, recognisable base64 secrets (each decodes to printable text). */
export const SECRETS: ScriptSecrets = {
  dbRootPasswordBase64: Buffer.from("root-secret-Qx7").toString("base64"),
  appDbPasswordBase64: Buffer.from("app-secret-Zk9").toString("base64"),
  sourceHostTokenBase64: Buffer.from("token-secret-Wm3").toString("base64"),
};

/** The production settings in parameter-store mode, and the parameters' names it reads. */
export const PARAMETER_STORE_SETTINGS: ProvisioningSettings = { ...PRODUCTION_SETTINGS, secrets: "parameter-store" };
export const PARAMETER_NAMES: SecretParameterNames = {
  region: "eu-west-1",
  dbRootPassword: "/CrmHostStack/crm/db-root-password",
  appDbPassword: "/CrmHostStack/crm/app-db-password",
  sourceHostToken: "/CrmHostStack/crm/source-host-token",
};

/** Whether a command-line tool exists; when it does not, reportMissingTools (a failure in CI). */
export function haveTool(name: string): boolean {
  const found =
    spawnSync("bash", ["-c", `command -v ${name} || test -x /usr/sbin/${name} || test -x /sbin/${name}`]).status === 0;
  if (!found) reportMissingTools("the userdata tests of this file", [name]);
  return found;
}

/**
 * The text of one shell function `name() { … }` of a rendered script (on its own lines, or on one line), or of the
 * modules its header names (which the host reads from Parameter Store: withModules).
 */
export function shellFunction(script: string, name: string): string {
  if (!script.includes(`\n${name}() {`) && modulesNamed(script).length > 0) script = withModules(script);
  const oneLine = script.split("\n").find((line) => line.startsWith(`${name}() {`) && line.endsWith("}"));
  if (oneLine !== undefined) return `${oneLine}\n`;
  const start = script.indexOf(`\n${name}() {\n`);
  if (start < 0) throw new Error(`no function ${name}`);
  const end = script.indexOf("\n}\n", start);
  return script.slice(start + 1, end + 3);
}
