// Parse a *.bprof.yaml against its JSON Schema, keeping source positions for every diagnostic.
import Ajv, { type ErrorObject } from "ajv";
import type { Diagnostic } from "../diagnostics";
import { formatFieldPath, parseYamlSource, type YamlSource } from "../yamlSource";
import { nearestWord } from "./nearest";
import schema from "./schema.json";
import type { ProfileConfig } from "./types";

export interface ParsedConfig {
  source: YamlSource;
  /** Undefined when the text is not valid YAML or does not match the schema. */
  config: ProfileConfig | undefined;
  diagnostics: Diagnostic[];
}

const validateSchema = new Ajv({ allErrors: true, verbose: true, strict: false }).compile(schema);

export function parseConfig(text: string, file: string): ParsedConfig {
  const source = parseYamlSource(text, file);
  const diagnostics = [...source.diagnostics];
  if (source.value === undefined && diagnostics.length > 0) return { source, config: undefined, diagnostics };
  const value = source.value ?? null;
  if (!validateSchema(value)) {
    diagnostics.push(...withoutAnyOfNoise(validateSchema.errors ?? []).map((e) => schemaDiagnostic(e, source)));
    return { source, config: undefined, diagnostics };
  }
  return { source, config: value as unknown as ProfileConfig, diagnostics };
}

/**
 * A value checked against alternatives (`data`: a file or a list of files) fails every branch,
 * and Ajv reports each branch's errors plus the `anyOf` itself. The branch whose type the value
 * has is the one the user meant: keep only its errors. When the value has none of the branches'
 * types, one message with the field's description says what is expected.
 */
function withoutAnyOfNoise(errors: ErrorObject[]): ErrorObject[] {
  const anyOfs = errors.filter((e) => e.keyword === "anyOf");
  if (anyOfs.length === 0) return errors;
  const drop = new Set<ErrorObject>();
  for (const anyOf of anyOfs) {
    const prefix = `${anyOf.schemaPath}/`;
    const branchErrors = errors.filter((e) => e.schemaPath.startsWith(prefix));
    const branchOf = (e: ErrorObject) => e.schemaPath.slice(prefix.length).split("/")[0]!;
    const wrongType = new Set(branchErrors.filter((e) => e.keyword === "type" && e.instancePath === anyOf.instancePath).map(branchOf));
    const branches = new Set(branchErrors.map(branchOf));
    const meant = [...branches].filter((b) => !wrongType.has(b));
    // A branch that reaches its fields through a $ref reports their errors under the definition's
    // path: an error inside the value means the value had that branch's shape.
    const insideValue = errors.some((e) => e !== anyOf && !branchErrors.includes(e) && e.instancePath.startsWith(`${anyOf.instancePath}/`));
    for (const e of branchErrors) if (meant.length === 0 || !meant.includes(branchOf(e))) drop.add(e);
    if (meant.length > 0 || insideValue) drop.add(anyOf);
  }
  return errors.filter((e) => !drop.has(e));
}

function pathFromPointer(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function schemaDiagnostic(error: ErrorObject, source: YamlSource): Diagnostic {
  const path = pathFromPointer(error.instancePath);
  const name = path.length > 0 ? `\`${formatFieldPath(path)}\`` : "the config";
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  switch (error.keyword) {
    case "additionalProperties": {
      const key = (error.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
      const guess = nearestWord(key, known);
      const hint = guess ? `did you mean \`${guess}\`?` : `known keys: ${known.join(", ")}`;
      return source.at([...path, key], "error", `unknown key \`${key}\`; ${hint}`, "key");
    }
    case "required": {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      const d = source.at(path, "error", `${name} needs the field \`${missing}\``);
      return { ...d, field: formatFieldPath([...path, missing]) };
    }
    case "uniqueItems": {
      // Point at the repeat, not at the whole list.
      const { i, j } = error.params as { i: number; j: number };
      const [first, repeat] = [Math.min(i, j), Math.max(i, j)];
      return source.at([...path, repeat], "error", `${name}: item ${repeat} repeats item ${first}; every value must be different`);
    }
    case "enum": {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.join(", ");
      return source.at(path, "error", `${name} must be one of: ${allowed}`);
    }
    default: {
      // A pattern means nothing to a reader; the field's description says what is expected.
      const why = (error.keyword === "pattern" || error.keyword === "anyOf") && description ? `: ${description}` : "";
      return source.at(path, "error", `${name} ${why ? "is invalid" : (error.message ?? "is invalid")}${why}`);
    }
  }
}
