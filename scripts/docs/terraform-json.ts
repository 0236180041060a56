/**
 * Reading a synthesized cdktf stack (Terraform JSON): its blocks, and the references between
 * them. The docs' diagram and tables are derived from this, so they follow the code.
 */

/** The parts of a synthesized stack read here and by the tests (`__tests__/support/synth.ts`). */
export interface StackJson {
  resource?: Record<string, Record<string, Block>>;
  data?: Record<string, Record<string, Block>>;
  variable?: Record<string, VariableBlock>;
  output?: Record<string, OutputBlock>;
  locals?: Record<string, unknown>;
  provider?: Record<string, Block[]>;
  terraform?: Block;
}

export type Block = Record<string, unknown>;

export interface VariableBlock {
  description?: string;
  type?: string;
  default?: unknown;
  sensitive?: boolean;
  nullable?: boolean;
  validation?: { condition: string; error_message: string }[];
}

export interface OutputBlock {
  description?: string;
  value?: unknown;
  sensitive?: boolean;
}

/** A reference from one block to another (`aws_instance.x.public_ip`, `var.y`, `data.t.z`). */
export interface Reference {
  /** Address of the referenced block: `aws_instance.x`, `data.aws_ssm_parameter.y`, `var.z`. */
  readonly target: string;
  /** The attribute read, when there is one (`public_ip`). */
  readonly attribute?: string;
  /** The top-level field of the referring block that holds the reference (`key_name`). */
  readonly field: string;
}

const REFERENCE =
  /\b(?:(data)\.([a-z][a-z0-9_]*)\.([A-Za-z0-9_-]+)|(var|local)\.([A-Za-z0-9_-]+)|([a-z][a-z0-9]*_[a-z0-9_]+)\.([A-Za-z0-9_-]+))(?:\.([a-z0-9_]+))?/g;

/** Every reference inside `${…}` expressions of a value, and the plain addresses of `depends_on`. */
export function referencesOf(block: Block, locals: Record<string, unknown> = {}): Reference[] {
  const found: Reference[] = [];
  for (const [field, value] of Object.entries(block)) {
    if (field === "//") continue;
    if (field === "depends_on" && Array.isArray(value)) {
      for (const address of value) found.push({ target: String(address), field });
      continue;
    }
    collect(value, field, found, locals, new Set());
  }
  return found;
}

function collect(
  value: unknown,
  field: string,
  found: Reference[],
  locals: Record<string, unknown>,
  seen: Set<string>,
): void {
  if (typeof value === "string") {
    for (const expression of value.match(/\$\{[\s\S]*\}/g) ?? []) {
      for (const match of expression.matchAll(REFERENCE)) {
        const [, data, dataType, dataName, kind, name, type, typeName, attribute] = match;
        if (kind === "local") {
          // A local is a detour: follow it to what it reads.
          if (!seen.has(name)) {
            seen.add(name);
            collect(locals[name], field, found, locals, seen);
          }
          continue;
        }
        const target = data ? `data.${dataType}.${dataName}` : kind ? `${kind}.${name}` : `${type}.${typeName}`;
        found.push({ target, attribute, field });
      }
    }
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, field, found, locals, seen);
  } else if (value && typeof value === "object") {
    for (const item of Object.values(value)) collect(item, field, found, locals, seen);
  }
}

/** A resource or data source with its address. */
export interface Addressed {
  readonly address: string;
  readonly kind: "resource" | "data";
  readonly type: string;
  readonly name: string;
  readonly body: Block;
}

/** Every resource and data source, sorted by address. */
export function blocksOf(stack: StackJson): Addressed[] {
  const all: Addressed[] = [];
  for (const [type, items] of Object.entries(stack.resource ?? {})) {
    for (const [name, body] of Object.entries(items))
      all.push({ address: `${type}.${name}`, kind: "resource", type, name, body });
  }
  for (const [type, items] of Object.entries(stack.data ?? {})) {
    for (const [name, body] of Object.entries(items))
      all.push({ address: `data.${type}.${name}`, kind: "data", type, name, body });
  }
  return all.sort((a, b) => a.address.localeCompare(b.address));
}

/** The construct's name without cdktf's hash suffix (`instance_role_D48363DA` → `instance_role`). */
export function shortName(name: string): string {
  return name.replace(/_[0-9A-F]{8}$/, "");
}

/** The single variable an expression is, or undefined (`${var.x}` → `x`). */
export function wholeVariable(value: unknown): string | undefined {
  return typeof value === "string" ? /^\$\{var\.([A-Za-z0-9_-]+)\}$/.exec(value)?.[1] : undefined;
}
