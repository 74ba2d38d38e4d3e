// results.json as it is read: every field's type against its JSON Schema (results.schema.json,
// the fields of docs/results-schema.md), then what a schema cannot say: a benchmark's cells by its
// output type, a variant's groups by the model's, the overlap matrices' sizes, items_file inside
// the model's folder. Bad input is a ReportInputError naming the file and the first field that
// is wrong. A run folder can come with a repository the user opened: nothing of it reaches a
// report, the editor or a comparison before this check.
import Ajv from "ajv";
import * as path from "node:path";
import { metricsOf, type Metric } from "../analysis/ais";
import { isWithinFolder } from "../base/fsutil";
import { fieldPath, ReportInputError, schemaErrorText } from "./inputError";
import schema from "./results.schema.json";
import { RESULTS_SCHEMA_VERSION, type ModelProfile, type ModelResults, type Results } from "./schema";

const validateResults = new Ajv({ allErrors: true, verbose: true, strict: false }).compile(schema);

type OutputType = "multiple_choice" | "generate_until";

/** The shape of results.json version 1 (docs/results-schema.md); the value itself, older profiles' `method` filled in. */
export function checkResults(raw: unknown, file: string): Results {
  checkIdentity(raw, file);
  const infinite = nonFiniteNumber(raw, []);
  // JSON reads 1e999 as Infinity, which no figure of a run is
  if (infinite) throw new ReportInputError(`${file}: ${fieldPath(infinite)}: expected a number`);
  if (!validateResults(raw)) throw new ReportInputError(`${file}: ${schemaErrorText(validateResults.errors ?? [], schema)}`);
  const results = raw as unknown as Results;
  results.models.forEach((model, m) => checkModel(model, `models[${m}]`, file));
  return results;
}

/** The schema and its version, first: a file of another kind gets one message saying so, not its first odd field. */
function checkIdentity(raw: unknown, file: string): void {
  if (!isObject(raw) || raw.schema !== "bprof.results") {
    const schemaName = isObject(raw) && typeof raw.schema === "string" ? ` (its schema is \`${raw.schema}\`)` : "";
    throw new ReportInputError(`${file} is not a Benchmark Profiler results file${schemaName}: expected "schema": "bprof.results"`);
  }
  if (raw.schema_version !== RESULTS_SCHEMA_VERSION) {
    throw new ReportInputError(
      `${file} has schema_version ${JSON.stringify(raw.schema_version)}; this bprof reads version ${RESULTS_SCHEMA_VERSION}`,
    );
  }
}

/** The path of the first number in `value` that is not finite; undefined when there is none. */
function nonFiniteNumber(value: unknown, at: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : at;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = nonFiniteNumber(v, [...at, i]);
      if (found) return found;
    }
  } else if (isObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      const found = nonFiniteNumber(v, [...at, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/** What the schema cannot say about one model: its profiles' cells against its benchmarks and groups. */
function checkModel(model: ModelResults, where: string, file: string): void {
  // A benchmark without output_type is multiple choice (files written before generate_until ran).
  const outputTypeOf = new Map<string, OutputType>(model.benchmarks.map((b) => [b.name, b.output_type ?? "multiple_choice"]));
  // Groups scored as a whole (files written before them have none): their metrics, by name.
  const groupMetrics = new Map((model.groups ?? []).map((g) => [g.name, g.aggregates.map((a) => a.metric)]));
  const profiles = [
    ...(model.profile ? [{ profile: model.profile, at: `${where}.profile` }] : []),
    ...(model.other_methods ?? []).map((profile, r) => ({ profile, at: `${where}.other_methods[${r}]` })),
  ];
  for (const { profile, at } of profiles) checkProfile(profile, { where: at, model: where, file, outputTypeOf, groupMetrics });
}

interface ProfileFrame {
  where: string;
  /** The model's field path, for messages that name its groups. */
  model: string;
  file: string;
  outputTypeOf: ReadonlyMap<string, OutputType>;
  groupMetrics: ReadonlyMap<string, Metric[]>;
}

function checkProfile(p: ModelProfile, frame: ProfileFrame): void {
  const { where, file } = frame;
  const wrong = (field: string, what: string) => new ReportInputError(`${file}: ${where}.${field}: expected ${what}`);
  // results written before the method could be chosen used the paper's
  p.method ??= "paper";
  for (const [v, variant] of p.variants.entries()) {
    const vw = `variants[${v}]`;
    if (!isPathInFolder(variant.items_file)) throw wrong(`${vw}.items_file`, "a path inside the model's folder");
    for (const [b, bench] of variant.benchmarks.entries()) {
      for (const metric of metricsOf(frame.outputTypeOf.get(bench.name))) {
        if (bench[metric] === undefined) throw wrong(`${vw}.benchmarks[${b}].${metric}`, "an object");
      }
    }
    for (const [g, group] of (variant.groups ?? []).entries()) {
      // A metric whose tasks have no documents has no cell: a group's cells are each optional.
      if (!frame.groupMetrics.has(group.name)) throw wrong(`${vw}.groups[${g}].name`, `the name of one of ${frame.model}.groups`);
    }
  }
  for (const [o, overlap] of (p.overlap ?? []).entries()) {
    const size = overlap.abilities.length;
    for (const key of ["intersections", "jaccard"] as const) {
      const matrix = overlap[key];
      if (matrix.length !== size || matrix.some((row) => row.length !== size))
        throw wrong(`overlap[${o}].${key}`, `a ${size} x ${size} matrix`);
    }
  }
}

/** A relative path that stays in its folder: no .., not absolute (links are checked when the file is read). */
function isPathInFolder(v: string): boolean {
  return v !== "" && !path.isAbsolute(v) && isWithinFolder(".", path.normalize(v));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
