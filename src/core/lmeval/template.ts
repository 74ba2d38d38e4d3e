// Jinja as lm-eval configures it (jinja2's defaults plus keep_trailing_newline): no block
// trimming, trailing newlines kept. @huggingface/jinja's Template is set up for chat templates
// (trim_blocks, lstrip_blocks, last newline dropped), so the parse is done here with lm-eval's options.
//
// Rendering is on the path of every document (doc_to_text, doc_to_choice, doc_to_target, and
// again for each few-shot example), and the library's render costs a microsecond per value it
// wraps: it wraps the whole document and its globals on every call. So a render here gives the
// library only the document fields the template names, and a template that only prints fields
// ("Question: {{question}}\nAnswer:", "{{answer}}", "{{choices.text}}") is printed without the
// library when the fields are strings, numbers or lists of those. Both give the library's text
// exactly (test/unit/lmeval/template.test.ts), except that printing an undefined name raises, as lm-eval's
// StrictUndefined does, and that a render stops at TEMPLATE_LIMITS.
import { Environment, Interpreter, parse, Template, tokenize } from "@huggingface/jinja";

export interface TextTemplate {
  render(context: Record<string, unknown>): string;
}

type Context = Record<string, unknown>;

/**
 * A fault of the template itself, whatever the document: it does not parse, it prints a name
 * that is not defined (lm-eval's jinja2 environment uses StrictUndefined, so it raises there too),
 * or it runs past the limits that keep a template from hanging the editor or filling memory.
 */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly kind: "syntax" | "undefined" | "limit",
  ) {
    super(message);
    this.name = "TemplateError";
  }
}

/** How far one render may go: nodes evaluated, characters printed, items of one range(), time. */
export const TEMPLATE_LIMITS = { steps: 1_000_000, output: 1_000_000, range: 100_000, milliseconds: 2_000 };

export function lmEvalTemplate(source: string): TextTemplate {
  // The tokenizer always drops one trailing newline; doubling it keeps the author's.
  const text = source.endsWith("\n") ? source + "\n" : source;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(tokenize(text, { lstrip_blocks: false, trim_blocks: false }));
  } catch (e) {
    throw new TemplateError(`Jinja syntax: ${e instanceof Error ? e.message : String(e)}`, "syntax");
  }
  const callsIndex = rewriteIndexCalls(parsed);
  const printed = printedStatements(parsed);
  const names = identifiers(parsed);
  const print = fieldPrinter(parsed);
  const withHelpers = (context: Context): Context => (callsIndex ? { ...context, [INDEX_FUNCTION]: pythonIndex } : context);
  const render = (context: Context, fields: Context) => renderBounded(parsed, printed, withHelpers(context), fields);
  return {
    render(context) {
      // A context the library would refuse (a value it cannot wrap, a field named like one of
      // its globals) goes to the library whole, so that it fails as it would.
      if (!wrapsCleanly(context)) return render(context, context);
      return print?.(context) ?? render(pick(context, names), context);
    },
  };
}

/**
 * The library's Template.render, with an interpreter that counts its steps and the size of what it
 * prints, a range() that refuses to build a list past the limit, and StrictUndefined for names
 * printed: `fields` are the document's, for the message.
 */
function renderBounded(parsed: ReturnType<typeof parse>, printed: WeakSet<object>, context: Context, fields: Context): string {
  const env = new Environment();
  env.set("false", false);
  env.set("true", true);
  env.set("none", null);
  env.set("False", false);
  env.set("True", true);
  env.set("None", null);
  env.set("range", boundedRange);
  env.set("raise_exception", (message: unknown) => {
    throw new Error(String(message));
  });
  for (const [key, value] of Object.entries(context)) env.set(key, value);
  return (new BoundedInterpreter(env, printed, fields).run(parsed) as { value: string }).value;
}

class BoundedInterpreter extends Interpreter {
  private steps = 0;
  private readonly deadline = Date.now() + TEMPLATE_LIMITS.milliseconds;

  constructor(
    env: Environment,
    private readonly printed: WeakSet<object>,
    private readonly fields: Context,
  ) {
    super(env);
  }

  /** One more node evaluated or block entered; past a limit, the render stops. */
  step(): void {
    if (++this.steps > TEMPLATE_LIMITS.steps)
      throw new TemplateError(
        `the template did not finish within ${TEMPLATE_LIMITS.steps.toLocaleString("en")} steps: a loop that does not end, or is far too long`,
        "limit",
      );
    if ((this.steps & 0x3ff) === 0 && Date.now() > this.deadline)
      throw new TemplateError(`the template did not finish within ${TEMPLATE_LIMITS.milliseconds / 1000} s`, "limit");
  }

  override evaluate(statement: Parameters<Interpreter["evaluate"]>[0], environment: Environment): ReturnType<Interpreter["evaluate"]> {
    this.step();
    const value = super.evaluate(statement, environment);
    if (statement && this.printed.has(statement) && value.type === "UndefinedValue") {
      const name = fieldPath(statement as unknown as Node)?.join(".");
      throw new TemplateError(
        `${name ? `\`${name}\`` : "a value it prints"} is undefined (the document's fields: ${fieldNames(this.fields)})`,
        "undefined",
      );
    }
    if (value.type === "StringValue" && (value.value as string).length > TEMPLATE_LIMITS.output) {
      throw new TemplateError(`the template printed more than ${TEMPLATE_LIMITS.output.toLocaleString("en")} characters`, "limit");
    }
    return value;
  }
}

// Every iteration of a loop enters its body through evaluateBlock, even an empty body, which
// evaluates no node: it counts as a step too. The method is private in the library's types.
type BlockEvaluator = (this: BoundedInterpreter, statements: unknown, environment: Environment) => unknown;
const libraryBlock = (Interpreter.prototype as unknown as { evaluateBlock: BlockEvaluator }).evaluateBlock;
(BoundedInterpreter.prototype as unknown as { evaluateBlock: BlockEvaluator }).evaluateBlock = function (statements, environment) {
  this.step();
  return libraryBlock.call(this, statements, environment);
};

/** The fields of a document, for messages: `a`, `b`; "none" for an empty one. */
export function fieldNames(doc: Record<string, unknown>): string {
  const fields = Object.keys(doc);
  return fields.length === 0 ? "none" : fields.map((f) => `\`${f}\``).join(", ");
}

/** Python's range(stop), range(start, stop[, step]), refusing more than TEMPLATE_LIMITS.range items. */
function boundedRange(...args: unknown[]): number[] {
  const [start, stop, step] =
    args.length === 1 ? [0, Number(args[0]), 1] : [Number(args[0]), Number(args[1]), args[2] === undefined ? 1 : Number(args[2])];
  if (![start, stop, step].every(Number.isInteger) || step === 0)
    throw new Error(`range() takes integers and a step that is not 0, got ${args.join(", ")}`);
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > TEMPLATE_LIMITS.range)
    throw new TemplateError(
      `range() of ${count.toLocaleString("en")} items is past the limit of ${TEMPLATE_LIMITS.range.toLocaleString("en")}`,
      "limit",
    );
  return Array.from({ length: count }, (_, i) => start + i * step);
}

/** The statements whose value a block prints: the items of every block's body, in any statement. */
function printedStatements(node: unknown, into = new WeakSet<object>()): WeakSet<object> {
  if (Array.isArray(node)) node.forEach((n) => printedStatements(n, into));
  else if (typeof node === "object" && node !== null) {
    for (const [key, child] of Object.entries(node)) {
      if (Array.isArray(child) && ["body", "alternate", "defaultBlock"].includes(key))
        for (const s of child) if (typeof s === "object" && s !== null) into.add(s as object);
      printedStatements(child, into);
    }
  }
  return into;
}

/**
 * The library has no `.index()` method on lists and strings, which lm-eval tasks call (ARC's
 * `doc_to_target: "{{choices.label.index(answerKey)}}"`): each `x.index(y)` in the tree becomes
 * a call of a function of ours, `__bprof_index(x, y)`. Whether there was one.
 */
function rewriteIndexCalls(node: unknown): boolean {
  let found = false;
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      n.forEach(visit);
      return;
    }
    if (typeof n !== "object" || n === null) return;
    const call = n as { type?: string; callee?: Node; args?: unknown[] };
    const callee = call.callee;
    if (
      call.type === "CallExpression" &&
      callee?.type === "MemberExpression" &&
      !callee.computed &&
      callee.property?.type === "Identifier" &&
      callee.property.value === "index"
    ) {
      call.args = [callee.object, ...(call.args ?? [])];
      callee.property.value = INDEX_FUNCTION;
      call.callee = callee.property;
      found = true;
    }
    Object.values(n).forEach(visit);
  };
  visit(node);
  return found;
}

const INDEX_FUNCTION = "__bprof_index";

/**
 * Python's list.index(x) and str.index(sub): the first position, a ValueError's message when
 * absent. The library passes a list's items as its runtime values ({type, value}).
 */
function pythonIndex(container: unknown, value: unknown): number {
  const plain = (item: unknown) =>
    typeof item === "object" && item !== null && "value" in item ? (item as { value: unknown }).value : item;
  const position = Array.isArray(container)
    ? container.findIndex((item) => plain(item) === value)
    : typeof container === "string" && typeof value === "string"
      ? container.indexOf(value)
      : undefined;
  if (position === undefined) throw new Error(`.index() is called on ${JSON.stringify(container)}, which is neither a list nor a string`);
  if (position < 0)
    throw new Error(
      Array.isArray(container) ? `${JSON.stringify(value)} is not in list ${JSON.stringify(container.map(plain))}` : "substring not found",
    );
  return position;
}

/**
 * Every name the template could read: the identifiers anywhere in its syntax tree (a few are
 * attribute or filter names, which costs nothing). A template reads variables only by name.
 */
function identifiers(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const child of node) identifiers(child, into);
  else if (typeof node === "object" && node !== null) {
    const n = node as { type?: unknown; value?: unknown };
    if (n.type === "Identifier" && typeof n.value === "string") into.add(n.value);
    for (const child of Object.values(node)) identifiers(child, into);
  }
  return into;
}

function pick(context: Context, names: Set<string>): Context {
  const picked: Context = {};
  for (const name of names) if (Object.prototype.hasOwnProperty.call(context, name)) picked[name] = context[name];
  return picked;
}

/** Contexts already checked, and key lists already checked against the library's globals. */
const checkedContexts = new WeakMap<object, boolean>();
const checkedKeys = new Map<string, boolean>();

/**
 * Whether the library's render would take `context` without an error: every value is one it
 * wraps (not a bigint or symbol, at any depth), and no field is named like a global of its
 * environment (`true`, `range`, ...), which it refuses to declare twice; the second is asked of
 * the library itself, once per list of field names.
 */
function wrapsCleanly(context: Context): boolean {
  let clean = checkedContexts.get(context);
  if (clean === undefined) {
    const keys = Object.keys(context);
    const keyList = keys.join("\u0000");
    let keysClean = checkedKeys.get(keyList);
    if (keysClean === undefined) {
      keysClean = rendersWithout(() => EMPTY.render(Object.fromEntries(keys.map((k) => [k, null]))));
      checkedKeys.set(keyList, keysClean);
    }
    clean = keysClean && wrappable(context);
    checkedContexts.set(context, clean);
  }
  return clean;
}

const EMPTY = new Template("");

function rendersWithout(render: () => unknown): boolean {
  try {
    render();
    return true;
  } catch {
    return false;
  }
}

/** convertToRuntimeValues' cases: what it wraps without throwing. */
function wrappable(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "undefined":
    case "function":
      return true;
    case "object":
      return value === null || (Array.isArray(value) ? value.every(wrappable) : Object.values(value).every(wrappable));
    default:
      return false;
  }
}

type Node = { type: string; value?: unknown; object?: Node; property?: Node; computed?: boolean };

/**
 * For a template made of text and `{{ field }}` / `{{ field.key.key }}` only: prints it as the
 * library would when each printed value is a string, a number or a list of those, and the path
 * goes through objects' own keys (the entries the library wraps). Anything else (a missing
 * field, null, a method, an attribute of a string) returns undefined, for the library to render.
 * Undefined for other templates.
 */
function fieldPrinter(program: unknown): ((context: Context) => string | undefined) | undefined {
  const body = (program as { body?: Node[] }).body;
  if (!Array.isArray(body)) return undefined;
  const parts: (string | string[])[] = [];
  for (const node of body) {
    if (node.type === "StringLiteral" && typeof node.value === "string") parts.push(node.value);
    else {
      const path = fieldPath(node);
      if (!path) return undefined;
      parts.push(path);
    }
  }
  return (context) => {
    let out = "";
    for (const part of parts) {
      if (typeof part === "string") {
        out += part;
        continue;
      }
      let value: unknown = context;
      for (const key of part) {
        if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.prototype.propertyIsEnumerable.call(value, key))
          return undefined;
        value = (value as Context)[key];
      }
      if (typeof value === "string") out += value;
      // The library's IntegerValue prints String(n); its FloatValue too, for every number that
      // is not an integer (the ".0" it adds is for integers, which JavaScript keeps as IntegerValue).
      else if (typeof value === "number") out += String(value);
      // A list prints as the library's toJSON writes it: each item JSON.stringify'd, ", " between.
      else if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number"))
        out += `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
      else return undefined;
    }
    return out;
  };
}

/** ["a", "b", "c"] for `a.b.c` (dots only, names only); undefined for any other expression. */
function fieldPath(node: Node): string[] | undefined {
  if (node.type === "Identifier" && typeof node.value === "string") return [node.value];
  if (
    node.type === "MemberExpression" &&
    !node.computed &&
    node.object &&
    node.property?.type === "Identifier" &&
    typeof node.property.value === "string"
  ) {
    const base = fieldPath(node.object);
    return base ? [...base, node.property.value] : undefined;
  }
  return undefined;
}
