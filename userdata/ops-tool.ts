import { createHash } from "crypto";
import { readFileSync } from "fs";
import { join } from "path";
import {
  MAX_APP_COMMAND_LENGTH,
  MAX_RELEASE_COMMAND_TIMEOUT_SECONDS,
  MIN_RELEASE_COMMAND_TIMEOUT_SECONDS,
  RELEASE_COMMAND_TIMEOUT_SECONDS,
} from "../settings/provisioning-settings";
import { hostFunction, OPS_ACTION_LIST } from "./ops-actions";
import { renderFrontConstants, renderToolConstants, SHELL_FILES, shellParts, shellQuote, splitShell } from "./script";

/**
 * The host's ops tool (`<scriptDirectory>/<app>-ops`, docs/operations.md): one bash file, the same for every host,
 * rendered by the CLI and installed by it before every host action (OPS_INSTALLER), so that a host always runs the
 * tool of the CLI that calls it. It reads the host's settings from the configuration the first boot writes beside it
 * (`<command>.conf`, userdata/first-boot.sh), made writable so that the tool's constants (renderToolConstants)
 * override the launch-time ones; then come every function of userdata/*.sh (`variant` picks the host's by the
 * configuration's TOPOLOGY and SECRETS) and the dispatcher, ops_main. Its second line is its version: the sha256 of
 * the lines after it.
 */

/** The tool's body: everything after its version line (renderOpsTool). */
export function renderOpsToolBody(): string {
  const prelude = shellParts("provision").prelude.replace(/^#!.*\n/, "");
  const functions = SHELL_FILES.flatMap((file) => shellParts(file).functions.map((f) => f.code));
  return `${prelude}
LOG_TAG=\${0##*/} CURRENT_STEP=\${0##*/}
# The host's settings, which its first boot wrote (or the installer took from an older host's command), not read-only.
OPS_CONFIG=\${BASH_SOURCE[0]}.conf
[[ -r $OPS_CONFIG ]] || { echo "$0: no $OPS_CONFIG (the host's settings): run npm run ops -- <stack> reprovision" >&2; exit 1; }
# shellcheck disable=SC1090
source <(sed -E 's/^declare -([a-zA-Z]*)r([a-zA-Z]*) ([A-Za-z_][A-Za-z0-9_]*=)/declare -g\\1\\2 \\3/' "$OPS_CONFIG")
${renderToolConstants()}${renderFrontConstants()}${renderReleaseCommandConstants()}${functions.join("\n")}
${renderOpsDispatcher()}
ops_main "$@"
`;
}

/**
 * The bounds of a release's build and release commands (settings/provisioning-settings.ts), which the tool checks
 * again in what `npm run ops` sends (ops.sh: release_args): in the tool only, as only its releases run them.
 */
export function renderReleaseCommandConstants(): string {
  return `# shellcheck disable=SC2034 # release_args's
readonly RELEASE_COMMAND_TIMEOUT_SECONDS=${RELEASE_COMMAND_TIMEOUT_SECONDS} MIN_RELEASE_COMMAND_TIMEOUT_SECONDS=${MIN_RELEASE_COMMAND_TIMEOUT_SECONDS} \\
  MAX_RELEASE_COMMAND_TIMEOUT_SECONDS=${MAX_RELEASE_COMMAND_TIMEOUT_SECONDS} MAX_APP_COMMAND_LENGTH=${MAX_APP_COMMAND_LENGTH}
`;
}

/**
 * The tool's dispatcher, ops_dispatch (ops_main calls it), from the declaration of the actions (userdata/ops-actions.ts):
 * for each host action its topologies' refusals (TOPOLOGY is single_host or scale_out), then a changing action through
 * ops_unit (its transient unit, then ops_change: lock, audit) and any other straight to its function; else the usage.
 */
export function renderOpsDispatcher(): string {
  const host = OPS_ACTION_LIST.filter((action) => action.runs === "host");
  const arms = host.map((action) => {
    const refusals = (action.refusals ?? []).map((refusal) => {
      const test = [
        `$TOPOLOGY != ${refusal.topology.replace("-", "_")}`,
        ...(refusal.argument ? [`\${2:-} != ${shellQuote(refusal.argument)}`] : []),
      ];
      return `      [[ ${test.join(" || ")} ]] || die ${shellQuote(refusal.message)}\n`;
    });
    const run = action.changes ? 'ops_unit "$@"' : `${hostFunction(action.name)} "\${@:2}"`;
    return `    ${action.name})\n${refusals.join("")}      ${run} ;;`;
  });
  const usage = host
    .map(({ name, args }) =>
      [
        name,
        ...args
          .split(" ")
          .filter(Boolean)
          .map((arg) => arg.replace(/[<>]/g, "").toUpperCase()),
      ].join(" "),
    )
    .join("|");
  return `# ops_dispatch ACTION ARGS...: rendered from the declaration of the actions (userdata/ops-actions.ts, renderOpsDispatcher).
ops_dispatch() {
  case \${1:-} in
${arms.join("\n")}
    *) die "usage: $OPS_COMMAND "${shellQuote(usage)} ;;
  esac
}`;
}

/** The sha256 of a tool's body: its version. */
export function opsToolVersion(body: string): string {
  return createHash("sha256").update(body).digest("hex");
}

/** A tool's text from its body: `#!/bin/bash`, the version line, the body. */
export function stampOpsTool(body: string): string {
  return `#!/bin/bash\nOPS_TOOL_VERSION=${opsToolVersion(body)}\n${body}`;
}

/** The ops tool of this version of the code, and its version. */
export function renderOpsTool(): { readonly text: string; readonly version: string } {
  const body = renderOpsToolBody();
  return { text: stampOpsTool(body), version: opsToolVersion(body) };
}

/** A version as people read it: a sha256's first 12 hex digits (legacy-… as it is). */
export function shortVersion(version: string): string {
  return /^[0-9a-f]{64}$/.test(version) ? version.slice(0, 12) : version;
}

/** The functions of userdata/*.sh that the installer calls, in front of userdata/ops-install.sh. */
const INSTALLER_FUNCTIONS = ["log", "escape", "audit_line", "ops_lock", "ops_unlock", "lock_holder", "settings_text"];

/**
 * The installer (userdata/ops-install.sh), with the functions it calls: run as
 * `sudo -n bash -c <OPS_INSTALLER> ops-install <version> <command> <lock> <audit log> <who>`, the tool on its standard input.
 */
export const OPS_INSTALLER: string = (() => {
  const all = new Map(SHELL_FILES.flatMap((file) => shellParts(file).functions.map((f) => [f.name, f.code] as const)));
  const installer = splitShell(readFileSync(join(__dirname, "ops-install.sh"), "utf8"));
  // The functions first: the installer's top-level code (its prelude) is its run.
  return [
    ...INSTALLER_FUNCTIONS.map((name) => all.get(name)!),
    ...installer.functions.map((f) => f.code),
    installer.prelude.replace(/^#!.*\n/, ""),
  ].join("\n");
})();
