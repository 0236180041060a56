/**
 * The action table of docs/operations.md: every action of `npm run ops` as userdata/ops-actions.ts declares it (where it
 * runs, whether it changes the host under the lock with an audit line, what each topology does with it, what it does).
 */
import { OPS_ACTION_LIST, OpsAction } from "../../userdata/ops-actions";
import { TOPOLOGIES, Topology } from "../../settings/provisioning-settings";

/** A table cell: no line break, no column break. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** What `topology` does with `action`: yes, refused (with the refusal), or refused with one argument. */
function onTopology(action: OpsAction, topology: Topology): string {
  const refusals = (action.refusals ?? []).filter((refusal) => refusal.topology === topology);
  if (refusals.length === 0) return "yes";
  return refusals
    .map((refusal) =>
      refusal.argument === undefined
        ? `refused: ${refusal.message}`
        : `yes, but \`${action.name} ${refusal.argument}\` is refused: ${refusal.message}`,
    )
    .join("; ");
}

/** The table, one row per action in the help's order. */
export function opsActionsTable(): string {
  const topologies = TOPOLOGIES.map((topology) =>
    topology === "scale-out" ? "scale-out (`--host <one of its hosts>`)" : topology.replace("-", " "),
  );
  return [
    `| action | runs on | lock, audit line | ${topologies.join(" | ")} | what it does |`,
    `|---|---|---|${TOPOLOGIES.map(() => "---|").join("")}---|`,
    ...OPS_ACTION_LIST.map(
      (action) =>
        `| \`${`${action.name} ${action.args}`.trim()}\` | ${action.runs === "host" ? "the host" : "your machine"} | ` +
        `${action.changes ? "yes (in a unit of its own)" : "no"} | ${TOPOLOGIES.map((topology) => cell(onTopology(action, topology))).join(" | ")} | ${cell(action.summary)} |`,
    ),
  ].join("\n");
}
