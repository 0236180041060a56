import { isGitRef, REF_EXPECTED } from "../settings/git-ref";
import { Topology } from "../settings/provisioning-settings";
import { isSnapshotId, SNAPSHOT_ID_EXPECTED } from "../settings/snapshot-id";

/**
 * Every action of `npm run ops`, declared once: the CLI's help, its argument and option checks and its
 * topology refusals (scripts/ops.ts), the host tool's dispatcher (renderOpsDispatcher, in the tool that
 * userdata/ops-tool.ts renders) and the action table of docs/operations.md (scripts/docs.ts) come from here. A host
 * action's work is its function `ops_<name, - as _>` in userdata/*.sh (a test checks both ways).
 */

/** Where an action runs: on the host (the tool, over ssh) or on the workstation (scripts/ops-everyday.ts). */
export type OpsActionPlace = "host" | "workstation";

/** A topology that refuses an action (or, with `argument`, the action with that first argument). */
export interface OpsRefusal {
  readonly topology: Topology;
  /** Only the action with this first argument (e.g. `logs database`). */
  readonly argument?: string;
  /** The refusal's one line, with its pointer. */
  readonly message: string;
  /** Why, in a few words, for the help's line of the topology. */
  readonly short: string;
}

/** An option of one action (besides the ssh options, which every action takes). */
export interface OpsActionOption {
  readonly name: string;
  /** The kind of its value (scripts/cli-options.ts checks it). */
  readonly value: "text" | "path" | "flag";
  /** Its help line's left part, e.g. `--lines <n>`. */
  readonly usage: string;
  readonly summary: string;
  /** Only with this first argument (`db dump --output`). */
  readonly argument?: string;
  /** The refusal of a value that is wrong whatever the stack (exit 2), or nothing. */
  readonly check?: (value: string) => string | undefined;
}

export interface OpsAction {
  /** The action's word, e.g. `rotate-secrets`. */
  readonly name: string;
  /** Its arguments as the help shows them, e.g. `<ref>` or `[release]` (empty when none). */
  readonly args: string;
  /** The refusal of arguments that are wrong whatever the stack (exit 2), or nothing. */
  readonly checkArgs?: (args: readonly string[], stack: string) => string | undefined;
  readonly summary: string;
  readonly runs: OpsActionPlace;
  /** A changing host action: in a transient systemd unit of its own, under the lock, one audit line (ops_change). */
  readonly changes: boolean;
  readonly options?: readonly OpsActionOption[];
  readonly refusals?: readonly OpsRefusal[];
}

/** `--master-secret`: a Secrets Manager secret's ARN (RDS names the secret it manages rds!db-<id>). */
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@!-]{1,512}$/;

const noArguments = (name: string) => (args: readonly string[]) =>
  args.length > 0 ? `${name} takes no arguments; got "${args.join(" ")}"` : undefined;
const GROUP_ROLLS = "the group rolls them out";
const RDS_BACKUPS = "RDS keeps its own backups";
/** backup and restore on a scale-out stack (scripts/ops-everyday.ts refuses them too). */
export const SCALE_OUT_BACKUPS =
  "backup and restore work on a single host's data volume; a scale-out stack's database is RDS, " +
  "which keeps its own automated backups (docs/scale-out.md)";

/** The actions, in the help's order (the host's, then the workstation's). */
export const OPS_ACTION_LIST: readonly OpsAction[] = [
  {
    name: "release",
    args: "<ref>",
    runs: "host",
    changes: true,
    summary:
      "build the git ref in a new release, run the stack's buildCommand and releaseCommand there, and switch to it when it " +
      "answers; back by itself if not",
    options: [
      {
        name: "no-backup",
        value: "flag",
        usage: "--no-backup",
        summary:
          "release: no snapshot of the data volume before the stack's releaseCommand (by default one is taken, its id printed and audited)",
      },
    ],
    checkArgs: (args, stack) => {
      if (args.length !== 1) {
        return `release takes one git ref (a branch, tag or commit): npm run ops -- ${stack} release <ref>; got ${args.length === 0 ? "none" : `"${args.join(" ")}"`}`;
      }
      return isGitRef(args[0]) ? undefined : `the ref "${args[0]}" of release must be ${REF_EXPECTED}`;
    },
    refusals: [
      {
        topology: "scale-out",
        short: GROUP_ROLLS,
        message:
          "release: the group's hosts deploy the launch template's release_ref; set it and apply, and the instance refresh rolls it out (docs/scale-out.md)",
      },
    ],
  },
  {
    name: "rollback",
    args: "[release]",
    runs: "host",
    changes: true,
    summary:
      "switch the code (not a releaseCommand's migration: expand, then contract, docs/operations.md) back to a kept release " +
      "(default: the good release before the current one, further back each time; never a newer one)",
    refusals: [
      {
        topology: "scale-out",
        short: GROUP_ROLLS,
        message: "rollback: set release_ref back and apply; the instance refresh rolls it out (docs/scale-out.md)",
      },
    ],
  },
  {
    name: "patch",
    args: "[version]",
    runs: "host",
    changes: true,
    summary: "operating-system updates (to a version, default the latest); reboots only if needed",
  },
  {
    name: "reprovision",
    args: "",
    runs: "host",
    changes: true,
    summary: "run the first-boot provisioning again: the repair of a failed first boot",
  },
  {
    name: "rotate-secrets",
    args: "",
    runs: "host",
    changes: true,
    summary: "apply the values that `npm run secrets -- <stack> rotate` put in Parameter Store",
    refusals: [
      {
        topology: "scale-out",
        short: GROUP_ROLLS,
        message:
          "rotate-secrets: new secrets reach the group's hosts as new hosts, through an instance refresh (docs/scale-out.md)",
      },
    ],
  },
  {
    name: "restart",
    args: "",
    runs: "host",
    changes: true,
    summary: "restart the app's unit, then wait for its health check (audited)",
  },
  {
    name: "releases",
    args: "",
    runs: "host",
    changes: false,
    summary: "list the kept releases, the current one marked *",
  },
  {
    name: "status",
    args: "",
    runs: "host",
    changes: false,
    summary: "the release, the service, the app's answer, the front, the lock and the last actions",
  },
  {
    name: "db",
    args: "[dump]",
    runs: "host",
    changes: false,
    summary: "a MariaDB shell on the app's database as the app user; db dump: a consistent dump to stdout or --output",
    options: [
      {
        name: "output",
        value: "path",
        argument: "dump",
        usage: "--output <file>",
        summary: "db dump: into this file (mode 600, complete or not there) instead of standard output",
      },
    ],
  },
  {
    name: "run",
    args: "-- <command…>",
    runs: "host",
    changes: false,
    summary:
      "a one-off command in the serving release, as the app's user with the unit's environment; exits with its status",
    checkArgs: (args, stack) =>
      args.length > 0
        ? undefined
        : `run takes a command after --: npm run ops -- ${stack} run -- <command…> (e.g. run -- node -e "…")`,
  },
  {
    name: "db-setup",
    args: "",
    runs: "host",
    changes: false,
    summary:
      "scale-out: the database and the app's account, with RDS's master secret (read with your credentials, sent over ssh's stdin)",
    options: [
      {
        name: "master-secret",
        value: "text",
        usage: "--master-secret <arn>",
        summary: "db-setup: the master secret's ARN (default: the stack's output <instanceName>DatabaseSecretArn)",
        check: (value) =>
          SECRET_ARN.test(value)
            ? undefined
            : `--master-secret must be a Secrets Manager secret's ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>), got ${JSON.stringify(value)}`,
      },
    ],
    refusals: [
      {
        topology: "single-host",
        short: "its database is its own",
        message:
          "db-setup is the scale-out topology's: the single host's database is its own, set up by its first boot",
      },
    ],
  },
  {
    name: "logs",
    args: "[log]",
    runs: "workstation",
    changes: false,
    summary:
      "app (the default: its journal), provisioning, ops (the audit log) or database; --lines, --since, --follow",
    // The log and the options' values: logOptions (scripts/ops-everyday.ts).
    options: [
      { name: "lines", value: "text", usage: "--lines <n>", summary: "logs: the last n lines (default 100)" },
      {
        name: "since",
        value: "text",
        usage: "--since <time>",
        summary: 'logs: from then on (journals: app, database), e.g. "2026-05-01 14:00", "2h ago", today',
      },
      { name: "follow", value: "flag", usage: "--follow", summary: "logs: go on printing new lines until Ctrl-C" },
    ],
    refusals: [
      {
        topology: "scale-out",
        argument: "database",
        short: "RDS keeps its logs",
        message:
          "logs database: a scale-out stack's database is RDS, whose logs RDS keeps (the console, or aws rds describe-db-log-files)",
      },
    ],
  },
  {
    name: "backup",
    args: "",
    runs: "workstation",
    changes: false,
    checkArgs: noArguments("backup"),
    summary: "snapshot the data volume now, application-consistent, and wait for it (single host)",
    refusals: [{ topology: "scale-out", short: RDS_BACKUPS, message: SCALE_OUT_BACKUPS }],
  },
  {
    name: "restore",
    args: "",
    runs: "workstation",
    changes: false,
    checkArgs: noArguments("restore"),
    summary: "--drill: check a snapshot on a scratch volume; else the guided real restore (single host)",
    options: [
      {
        name: "drill",
        value: "flag",
        usage: "--drill",
        summary: "restore: check a snapshot on a scratch volume, change nothing",
      },
      {
        name: "snapshot",
        value: "text",
        usage: "--snapshot <snap-id>",
        summary: "restore: this snapshot of the stack (default: the newest)",
        check: (value) =>
          isSnapshotId(value) ? undefined : `--snapshot must be ${SNAPSHOT_ID_EXPECTED}, got ${JSON.stringify(value)}`,
      },
      {
        name: "var-file",
        value: "path",
        usage: "--var-file <file>",
        summary: "restore: the stack's tfvars, for the guided real restore's terraform apply",
      },
    ],
    refusals: [{ topology: "scale-out", short: RDS_BACKUPS, message: SCALE_OUT_BACKUPS }],
  },
];

/** The actions by name. */
export const OPS_ACTION_DECLARATIONS: ReadonlyMap<string, OpsAction> = new Map(
  OPS_ACTION_LIST.map((action) => [action.name, action]),
);

/** The names of the actions that run on the host (the tool's dispatcher has exactly these). */
export const HOST_ACTIONS: readonly string[] = OPS_ACTION_LIST.filter((action) => action.runs === "host").map(
  (action) => action.name,
);

/** The refusal of `action args` on a stack of `topology`, or nothing. */
export function topologyRefusal(
  action: OpsAction,
  args: readonly string[],
  topology: Topology,
): OpsRefusal | undefined {
  return action.refusals?.find(
    (refusal) => refusal.topology === topology && (refusal.argument === undefined || refusal.argument === args[0]),
  );
}

/** An action's host function: `ops_<name, - as _>`. */
export function hostFunction(name: string): string {
  return `ops_${name.replace(/-/g, "_")}`;
}
