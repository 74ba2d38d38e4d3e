// The config schema at a field path, for the editor's completion and hovers: which keys a mapping
// takes, what a value may be, and the description the schema gives each.
import schema from "./schema.json";

export interface SchemaNode {
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  $ref?: string;
}

const root = schema as unknown as SchemaNode & { definitions: Record<string, SchemaNode> };

function resolved(node: SchemaNode): SchemaNode {
  if (!node.$ref) return node;
  const name = node.$ref.replace("#/definitions/", "");
  return { ...root.definitions[name]!, ...(node.description ? { description: node.description } : {}) };
}

/** The alternatives a node allows: itself, or each branch of its anyOf (with the node's description). */
export function alternatives(node: SchemaNode): SchemaNode[] {
  const n = resolved(node);
  return n.anyOf
    ? n.anyOf.map((b) => ({ ...resolved(b), ...(n.description && !b.description ? { description: n.description } : {}) }))
    : [n];
}

/** The schema of the field at `path` (keys and list indexes), or undefined when the schema has none. */
export function schemaAt(path: readonly (string | number)[]): SchemaNode | undefined {
  let nodes: SchemaNode[] = [root];
  for (const segment of path) {
    const next: SchemaNode[] = [];
    for (const node of nodes.flatMap(alternatives)) {
      if (typeof segment === "number") {
        if (node.items) next.push(node.items);
      } else if (node.properties?.[segment]) next.push(node.properties[segment]!);
      else if (typeof node.additionalProperties === "object") next.push(node.additionalProperties);
    }
    if (next.length === 0) return undefined;
    nodes = next;
  }
  return nodes.length === 1 ? resolved(nodes[0]!) : { anyOf: nodes };
}

/** The keys a mapping at `path` takes, with their schemas. */
export function keysAt(path: readonly (string | number)[]): [string, SchemaNode][] {
  const node = schemaAt(path);
  if (!node) return [];
  return alternatives(node).flatMap((n) => Object.entries(n.properties ?? {}));
}

/** Whether the field at `path` may be a mapping (so a line typed there is a key). */
export function takesKeys(path: readonly (string | number)[]): boolean {
  const node = schemaAt(path);
  return node !== undefined && alternatives(node).some((n) => n.properties !== undefined || n.type === "object");
}

/** The values the schema lists for the field at `path` (its enums, and true/false for a boolean). */
export function valuesAt(path: readonly (string | number)[]): unknown[] {
  const node = schemaAt(path);
  if (!node) return [];
  return alternatives(node).flatMap((n) => (n.enum ? n.enum : n.type === "boolean" ? [true, false] : []));
}
