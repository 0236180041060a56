/**
 * The architecture diagram of the README (Mermaid), derived from the synthesized stack: one node per
 * resource and data source, an arrow for every reference between them (labelled with the field
 * that holds it), who may reach each security group on which ports, and the outputs. Nothing is
 * named here by hand, so a resource added to the stack appears in the diagram once it exists.
 */
import { Addressed, Block, blocksOf, referencesOf, shortName, StackJson, wholeVariable } from "./terraform-json";

/** Literal attributes worth showing inside a resource's box, when present. */
const SHOWN_ATTRIBUTES = ["instance_type", "volume_type", "type", "size", "encrypted", "state"];

/** Mermaid flowchart source (without the code fence). */
export function architectureDiagram(stack: StackJson): string {
  const lines: string[] = ["flowchart LR"];
  const edges: string[] = [];
  const blocks = blocksOf(stack);
  const known = new Set(blocks.map((block) => block.address));
  const locals = stack.locals ?? {};
  const sources = new Map<string, string>();

  for (const block of blocks) {
    lines.push(`  ${node(block.address)}${shape(block, label(block, stack))}`);
    // One arrow per referenced block and field; attributes read through the same field share it.
    const arrows = new Map<string, { from: string; dotted: boolean; fields: Set<string> }>();
    for (const reference of referencesOf(block.body, locals)) {
      if (!known.has(reference.target) || reference.target === block.address) continue;
      const key = `${reference.target} ${reference.field === "depends_on"}`;
      const arrow = arrows.get(key) ?? {
        from: reference.target,
        dotted: reference.field === "depends_on",
        fields: new Set(),
      };
      arrow.fields.add(reference.field);
      arrows.set(key, arrow);
    }
    for (const arrow of [...arrows.values()].sort((a, b) => a.from.localeCompare(b.from))) {
      edges.push(
        `  ${node(arrow.from)} ${arrow.dotted ? "-.->" : "-->"}|${quote([...arrow.fields].sort().join(", "))}| ${node(block.address)}`,
      );
    }
    if (block.type === "aws_security_group") edges.push(...firewall(block, stack, sources));
    if (block.type === "aws_dlm_lifecycle_policy") edges.push(...snapshotTargets(block, blocks));
  }
  for (const [id, text] of [...sources.entries()].sort()) lines.push(`  ${id}([${quote(text)}])`);
  for (const [name, output] of Object.entries(stack.output ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const id = node(`output.${name}`);
    lines.push(`  ${id}[/${quote(`output ${name}${output.sensitive ? " (sensitive)" : ""}`)}/]`);
    const read = new Map<string, Set<string>>();
    for (const reference of referencesOf({ value: output.value }, locals)) {
      if (!known.has(reference.target)) continue;
      const attributes = read.get(reference.target) ?? new Set<string>();
      if (reference.attribute) attributes.add(reference.attribute);
      read.set(reference.target, attributes);
    }
    for (const [target, attributes] of [...read.entries()].sort()) {
      edges.push(`  ${node(target)} -->|${quote([...attributes].sort().join(", ") || "value")}| ${id}`);
    }
  }
  return [...lines, ...edges].join("\n");
}

/** Who may reach a security group (ingress) and where it may go (egress), as arrows with ports. */
function firewall(group: Addressed, stack: StackJson, sources: Map<string, string>): string[] {
  const arrows: string[] = [];
  for (const direction of ["ingress", "egress"] as const) {
    const byPeer = new Map<string, string[]>();
    for (const rule of (group.body[direction] as Block[] | undefined) ?? []) {
      for (const [id, text] of peers(rule, stack)) {
        sources.set(id, text);
        byPeer.set(id, [...(byPeer.get(id) ?? []), ports(rule)]);
      }
    }
    for (const [peer, rules] of [...byPeer.entries()].sort()) {
      const text = quote(`${direction}: ${rules.sort(byPort).join("; ")}`);
      arrows.push(
        direction === "ingress"
          ? `  ${peer} -->|${text}| ${node(group.address)}`
          : `  ${node(group.address)} -->|${text}| ${peer}`,
      );
    }
  }
  return arrows;
}

/** The peers of a rule: a CIDR variable (with its default), or each literal CIDR block. */
function peers(rule: Block, stack: StackJson): [string, string][] {
  const found: [string, string][] = [];
  for (const field of ["cidr_blocks", "ipv6_cidr_blocks"]) {
    const value = rule[field];
    const variable = wholeVariable(value);
    if (variable) {
      const fallback = stack.variable?.[variable]?.default;
      found.push([
        node(`var.${variable}`),
        `var.${variable}${fallback === undefined ? "" : `<br/>default ${JSON.stringify(fallback)}`}`,
      ]);
    } else if (Array.isArray(value)) {
      for (const cidr of value) found.push([node(`cidr.${cidr}`), String(cidr)]);
    }
  }
  return found;
}

/** `tcp 22 SSH`, `tcp 8000-8080`, `all protocols …`. */
function ports(rule: Block): string {
  const protocol = String(rule.protocol);
  const range = rule.from_port === rule.to_port ? `${rule.from_port}` : `${rule.from_port}-${rule.to_port}`;
  const what = protocol === "-1" ? "all protocols" : `${protocol} ${range}`;
  return rule.description ? `${what} (${rule.description})` : what;
}

function byPort(a: string, b: string): number {
  const port = (text: string) => Number(/ (\d+)/.exec(text)?.[1] ?? -1);
  return port(a) - port(b) || a.localeCompare(b);
}

/** A lifecycle policy snapshots the resources whose tags include all its target tags. */
function snapshotTargets(policy: Addressed, blocks: Addressed[]): string[] {
  const details = [policy.body.policy_details].flat() as (Block | undefined)[];
  const arrows: string[] = [];
  for (const detail of details) {
    const targets = detail?.target_tags as Record<string, unknown> | undefined;
    if (!targets || Object.keys(targets).length === 0) continue;
    for (const block of blocks) {
      const tags = block.body.tags as Record<string, unknown> | undefined;
      if (block.kind === "resource" && tags && Object.entries(targets).every(([key, value]) => tags[key] === value)) {
        arrows.push(`  ${node(policy.address)} -.->|${quote("snapshots (target tags)")}| ${node(block.address)}`);
      }
    }
  }
  return arrows;
}

function label(block: Addressed, stack: StackJson): string {
  const parts = [block.kind === "data" ? `data ${block.type}` : block.type, shortName(block.name)];
  for (const attribute of SHOWN_ATTRIBUTES) {
    const value = block.body[attribute];
    if (["string", "number", "boolean"].includes(typeof value) && !String(value).includes("${"))
      parts.push(`${attribute}: ${value}`);
  }
  const read = wholeVariable(block.body.name);
  if (block.kind === "data" && read) {
    const fallback = stack.variable?.[read]?.default;
    parts.push(`name: var.${read}${fallback === undefined ? "" : ` = ${fallback}`}`);
  }
  const trust = trustedServices(block.body.assume_role_policy);
  if (trust.length > 0) parts.push(`assumed by ${trust.join(", ")}`);
  if (block.body.count !== undefined || block.body.for_each !== undefined) parts.push("(conditional)");
  const preconditions = ((block.body.lifecycle as Block | undefined)?.precondition as unknown[] | undefined)?.length;
  if (preconditions) parts.push(`${preconditions} plan-time precondition${preconditions > 1 ? "s" : ""}`);
  return parts.join("<br/>");
}

/** The AWS services a role's trust policy names (`ec2.amazonaws.com`). */
function trustedServices(policy: unknown): string[] {
  if (typeof policy !== "string" || policy.includes("${")) return [];
  const statements =
    (JSON.parse(policy) as { Statement?: { Principal?: { Service?: string | string[] } }[] }).Statement ?? [];
  return statements.flatMap((statement) => [statement.Principal?.Service ?? []].flat()).sort();
}

function shape(block: Addressed, text: string): string {
  return block.kind === "data" ? `[(${quote(text)})]` : `[${quote(text)}]`;
}

/** A Mermaid node id for an address. */
function node(address: string): string {
  return address.replace(/[^A-Za-z0-9_]/g, "_");
}

/** A quoted Mermaid label; quotes and angle brackets other than <br/> become entities. */
function quote(text: string): string {
  const escaped = text
    .replace(/"/g, "#quot;")
    .replace(/<(?!br\/>)/g, "#lt;")
    .replace(/(?<!<br\/)>/g, "#gt;");
  return `"${escaped}"`;
}
