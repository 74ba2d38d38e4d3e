// Parse a *.bprof.yaml against its JSON Schema, keeping source positions for every problem.
import Ajv, { type ErrorObject } from "ajv";
import type { Problem } from "../base/problems";
import { formatFieldPath, parseYamlSource, type YamlSource } from "../base/yamlSource";
import { nearestWord } from "../base/nearest";
import { jsonPointerPath } from "../base/jsonSource";
import schema from "./schema.json";
import type { ProfileConfig } from "./types";

export interface ParsedConfig {
  source: YamlSource;
  /** Undefined when the text is not valid YAML or does not match the schema. */
  config: ProfileConfig | undefined;
  problems: Problem[];
}

const validateSchema = new Ajv({ allErrors: true, verbose: true, strict: false }).compile(schema);

export function parseConfig(text: string, file: string): ParsedConfig {
  const source = parseYamlSource(text, file);
  const problems = [...source.problems];
  if (source.value === undefined && problems.length > 0) return { source, config: undefined, problems };
  const value = source.value ?? null;
  if (!validateSchema(value)) {
    // A key refused by `propertyNames` comes twice: its pattern's error (with `propertyName`) and the propertyNames one.
    const errors = withoutAnyOfNoise(validateSchema.errors ?? []).filter((e) => e.propertyName === undefined);
    problems.push(...errors.map((e) => schemaProblem(e, source)));
    return { source, config: undefined, problems };
  }
  const config = value as unknown as ProfileConfig;
  problems.push(...kOutsidePaper(config, source));
  return { source, config, problems };
}

/** The k values of the paper's sweep (each 4 times the one before); its main results use the last. */
export const PAPER_K_SWEEP = [0.00001, 0.00004, 0.00016, 0.00064, 0.00256, 0.01024] as const;

/** The k the paper swept: its sweep's ends, 1e-5 to 0.01024 of the parameters. */
export const PAPER_K_RANGE = { min: PAPER_K_SWEEP[0], max: PAPER_K_SWEEP[PAPER_K_SWEEP.length - 1]! } as const;

/** A k in (0, 1) that the paper never tried: valid, but its scores have nothing to be compared with. */
function kOutsidePaper(config: ProfileConfig, source: YamlSource): Problem[] {
  const ks = config.ablation?.k ?? [];
  return ks.flatMap((k, i) =>
    k < PAPER_K_RANGE.min || k > PAPER_K_RANGE.max
      ? [
          source.at(
            ["ablation", "k", i],
            "config.k-outside-paper",
            `k = ${k} is outside the paper's range (${PAPER_K_RANGE.min} to ${PAPER_K_RANGE.max}): ` +
              (k > PAPER_K_RANGE.max
                ? "zeroing this many parameters tends to break the model on every benchmark alike"
                : "so few parameters rarely change a score"),
          ),
        ]
      : [],
  );
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

/** A k of 1 or more is most likely a percentage: 1.024 meant 0.01024. */
function kOutOfRange(value: unknown, path: (string | number)[], source: YamlSource): Problem {
  const k = Number(value);
  const percentage = k >= 1 && k < 100 ? Number((k / 100).toPrecision(12)) : undefined;
  const hint = percentage !== undefined ? `: did you mean ${percentage} (${k}%)?` : "";
  return source.at(
    path,
    "config.k-out-of-range",
    `k = ${k} is not a fraction of the parameters in (0, 1)${hint}`,
    percentage !== undefined ? { data: { suggestion: String(percentage) } } : {},
  );
}

function schemaProblem(error: ErrorObject, source: YamlSource): Problem {
  const path = jsonPointerPath(error.instancePath);
  const name = path.length > 0 ? `\`${formatFieldPath(path)}\`` : "the config";
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  switch (error.keyword) {
    case "additionalProperties": {
      const key = (error.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys((error.parentSchema as { properties?: object }).properties ?? {});
      const guess = nearestWord(key, known);
      const hint = guess ? `did you mean \`${guess}\`?` : `known keys: ${known.join(", ")}`;
      return source.at([...path, key], "config.unknown-key", `unknown key \`${key}\`; ${hint}`, {
        on: "key",
        ...(guess ? { data: { suggestion: guess } } : {}),
      });
    }
    case "required": {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      const problem = source.at(path, "config.missing-field", `${name} needs the field \`${missing}\``, { data: { field: missing } });
      return { ...problem, field: formatFieldPath([...path, missing]) };
    }
    case "uniqueItems": {
      // Point at the repeat, not at the whole list.
      const { i, j } = error.params as { i: number; j: number };
      const [first, repeat] = [Math.min(i, j), Math.max(i, j)];
      return source.at(
        [...path, repeat],
        "config.repeated-value",
        `${name}: item ${repeat} repeats item ${first}; every value must be different`,
      );
    }
    case "propertyNames": {
      const key = (error.params as { propertyName: string }).propertyName;
      const what =
        path.at(-1) === "options"
          ? "an ssh option: ssh_config's keywords are letters and digits, such as ServerAliveInterval"
          : "a valid key here";
      return source.at([...path, key], "config.invalid-value", `\`${key}\` in ${name} is not ${what}`, { on: "key" });
    }
    case "enum": {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.join(", ");
      // a GPU of another name is given by its figures
      const other = path.length === 1 && path[0] === "gpu" ? ", or another GPU as `{memory_gib, bf16_tflops}`" : "";
      return source.at(path, "config.not-allowed", `${name} must be one of: ${allowed}${other}`);
    }
    default: {
      const isK = path.length === 3 && path[0] === "ablation" && path[1] === "k";
      if (isK && (error.keyword === "exclusiveMinimum" || error.keyword === "exclusiveMaximum"))
        return kOutOfRange(error.data, path, source);
      // A pattern means nothing to a reader; the field's description says what is expected.
      const why = (error.keyword === "pattern" || error.keyword === "anyOf") && description ? `: ${description}` : "";
      return source.at(path, "config.invalid-value", `${name} ${why ? "is invalid" : (error.message ?? "is invalid")}${why}`);
    }
  }
}
