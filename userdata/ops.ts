import { readFileSync } from "fs";
import { dirname, join } from "path";
import { ProvisioningSettings } from "../settings/provisioning-settings";

/** Where the ops command and its state live on the host (docs/operations.md). */
export interface OpsPaths {
  /** The command, root only: `<scriptDirectory>/<appName>-ops`. */
  readonly command: string;
  /** The releases, each a directory `<UTC time>-<commit>` owned by the login user; `<app_dir>` links to the current one. */
  readonly releasesDirectory: string;
  /** The audit log: one line per changing action (when, who, what, from, to, result). */
  readonly auditLog: string;
  /** The lock of every changing action and of the provisioning script (a flock held by a process whose arguments name the run); the file keeps the last holder's line. */
  readonly lockFile: string;
  /** The releases' state (root's): the known good ones, the failed ones, a switch not verified yet. */
  readonly stateFile: string;
}

/** The paths of the ops command of a host with these settings (the log and lock next to the provisioning log). */
export function opsPaths(settings: ProvisioningSettings): OpsPaths {
  const logDirectory = dirname(settings.logFile);
  return {
    command: `${settings.scriptDirectory}/${settings.appName}-ops`,
    releasesDirectory: `${settings.loginHome}/${settings.appName}-releases`,
    auditLog: `${logDirectory}/${settings.appName}-ops.log`,
    lockFile: `${logDirectory}/${settings.appName}-ops.lock`,
    stateFile: `${logDirectory}/${settings.appName}-ops.state`,
  };
}

/** An action of the host's ops command, as ops.sh dispatches and documents it. */
export interface HostOpsAction {
  /** The action's word, e.g. `rotate-secrets`. */
  readonly name: string;
  /** Its arguments as its function's comment names them, e.g. `<ref>` or `[release]` (empty when none). */
  readonly args: string;
}

/**
 * The actions that the host's ops command dispatches (the `case` patterns of ops_main in ops.sh), each
 * with the arguments its function's comment names (`# ops_release REF: …`): the local command
 * (scripts/ops.ts) accepts and lists exactly these, so an action added on the host is one there too.
 */
export function hostOpsActions(script = readFileSync(join(__dirname, "ops.sh"), "utf8")): HostOpsAction[] {
  const body = /^ops_main\(\) \{\n([\s\S]*?)\n\}/m.exec(script)?.[1];
  if (body === undefined) throw new Error("userdata/ops.sh has no ops_main() { … } dispatcher");
  const names = [...body.matchAll(/^\s+([a-z][a-z |-]*)\)/gm)].flatMap((match) => match[1].split("|").map((name) => name.trim()));
  return names.map((name) => {
    const signature = new RegExp(`^# ops_${name.replace(/-/g, "_")}((?: \\S+)*):`, "m").exec(script);
    if (!signature) throw new Error(`userdata/ops.sh dispatches ${name} but has no comment "# ops_${name.replace(/-/g, "_")} [ARGS]: …"`);
    const args = signature[1].trim().split(/\s+/).filter(Boolean)
      .map((arg) => (arg.startsWith("[") ? `[${arg.slice(1, -1).toLowerCase()}]` : `<${arg.toLowerCase()}>`));
    return { name, args: args.join(" ") };
  });
}
