// What a run folder holds that a report cannot be made from, in one line that says where: the
// file, then the line (JSONL files) or the field path (results.json). A run folder can come with
// a repository the user opened, so everything in it is checked for its type when it is read;
// the checks' JSON Schemas say what each field is, and their errors are worded here.
import type { ErrorObject } from "ajv";
import { jsonPointerPath } from "../base/jsonSource";

/** Input a report cannot be made from (a missing run, another schema, a damaged file). */
export class ReportInputError extends Error {
  override name = "ReportInputError";
}

/**
 * A run file that is there but does not hold what it should (a line of the wrong type): unlike
 * a missing items file, which only leaves a cell's documents out of a report, nothing is made
 * from it.
 */
export class DamagedRunFileError extends ReportInputError {}

/** A JSON Schema node, as far as the wording of its errors needs it. */
interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, SchemaNode>;
  $ref?: string;
}

/** A field path as the messages write it: `models[0].profile.variants[2].benchmarks[1].acc.ais`. */
export function fieldPath(segments: readonly (string | number)[]): string {
  return segments
    .map((s, i) =>
      typeof s === "number" ? `[${s}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? (i === 0 ? s : `.${s}`) : `[${JSON.stringify(s)}]`,
    )
    .join("");
}

/**
 * The first error of a failed validation as `field: expected ...` (no field for the value as a
 * whole). Ajv adds an `if` error after the errors of the branch that failed: the branch's say more.
 */
export function schemaErrorText(errors: readonly ErrorObject[], root: object): string {
  const error = firstError(errors);
  const segments = jsonPointerPath(error.instancePath);
  let what: string;
  if (error.keyword === "required") {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    segments.push(missing);
    const property = propertySchema(root, error.parentSchema as SchemaNode | undefined, missing);
    what = property ? expectedOf(property, undefined, root) : "a value";
  } else what = expectedOf(error.parentSchema as SchemaNode, error.data, root);
  const where = fieldPath(segments);
  return where === "" ? `expected ${what}` : `${where}: expected ${what}`;
}

/**
 * The error to report (of Ajv's, with allErrors): the first, but a field missing from an object
 * after a field of the same object that is there and wrong, as a reader of the object's fields
 * in order finds them.
 */
function firstError(errors: readonly ErrorObject[]): ErrorObject {
  const relevant = errors.filter((e) => e.keyword !== "if");
  const first = relevant[0] ?? errors[0]!;
  if (first.keyword !== "required") return first;
  return relevant.find((e) => e.instancePath.startsWith(`${first.instancePath}/`)) ?? first;
}

/**
 * The schema of a property a `required` error names: in the object schema that holds the
 * `required`, or, for a `then` or `else` branch that required it, in the schema of the branch's
 * `if` (Ajv gives the branch as the error's parent schema, by reference).
 */
function propertySchema(root: object, parent: SchemaNode | undefined, property: string): SchemaNode | undefined {
  if (!parent) return undefined;
  return parent.properties?.[property] ?? branchOwner(root, parent)?.properties?.[property];
}

/** The node of `root` whose `then` or `else` is `branch`. */
function branchOwner(root: unknown, branch: object): SchemaNode | undefined {
  if (typeof root !== "object" || root === null) return undefined;
  const node = root as Record<string, unknown>;
  if (node.then === branch || node.else === branch) return node as SchemaNode;
  for (const child of Object.values(node)) {
    const found = branchOwner(child, branch);
    if (found) return found;
  }
  return undefined;
}

function at(root: object, segments: readonly string[]): SchemaNode | undefined {
  let node: unknown = root;
  for (const s of segments) node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[s] : undefined;
  return node as SchemaNode | undefined;
}

function resolved(node: SchemaNode, root: object): SchemaNode {
  return node.$ref ? resolved(at(root, node.$ref.replace(/^#\//, "").split("/")) ?? {}, root) : node;
}

/** What a schema node takes, in words; `data`: the value found, which makes "a whole number" of an integer that is not one. */
function expectedOf(raw: SchemaNode, data: unknown, root: object): string {
  const node = resolved(raw, root);
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return alternatives(node.enum.map(String));
  if (node.type === "array" && node.minItems !== undefined && node.minItems === node.maxItems) return `an array of ${node.minItems}`;
  if (node.type === "array" && node.minItems !== undefined && Array.isArray(data))
    return `at least ${node.minItems} ${node.minItems === 1 ? "entry" : "entries"}`;
  const types = Array.isArray(node.type) ? node.type : node.type ? [node.type] : [];
  if (types.length === 0) return "a value";
  return alternatives(types.map((t) => typeWords(t, node, data)));
}

function typeWords(type: string, node: SchemaNode, data: unknown): string {
  switch (type) {
    case "boolean":
      return "true or false";
    case "integer":
      // a value that is not a number at all: "a number", as every number field says
      if (typeof data !== "number") return "a number";
      return node.minimum === 0 ? "a whole number, 0 or more" : "a whole number";
    case "object":
      return "an object";
    case "array":
      return "an array";
    case "null":
      return "null";
    default:
      return `a ${type}`;
  }
}

/** "a", "a or b", "a, b or c". */
function alternatives(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}
