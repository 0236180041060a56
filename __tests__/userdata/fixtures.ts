import { spawnSync } from "child_process";
import { PRODUCTION_PATHS, ProvisioningSettings, ScriptSecrets } from "../../userdata";

/** The example settings of the repository, with the spec's production paths. */
export const PRODUCTION_SETTINGS: ProvisioningSettings = {
  ...PRODUCTION_PATHS,
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

/**
 * Whether a command-line tool exists. When it does not, the caller skips its test with a visible
 * notice, except in CI (`process.env.CI`), where a missing tool fails the run.
 */
export function haveTool(name: string): boolean {
  const found = spawnSync("bash", ["-c", `command -v ${name} || test -x /usr/sbin/${name} || test -x /sbin/${name}`]).status === 0;
  if (!found && process.env.CI) throw new Error(`CI needs ${name} for the userdata tests, and it is missing.`);
  if (!found) console.warn(`SKIPPED: tests that need ${name} (it is not installed; CI requires it)`);
  return found;
}

/** The text of one shell function `name() { … }` of a rendered script. */
export function shellFunction(script: string, name: string): string {
  const start = script.indexOf(`\n${name}() {\n`);
  if (start < 0) throw new Error(`no function ${name}`);
  const end = script.indexOf("\n}\n", start);
  return script.slice(start + 1, end + 3);
}
