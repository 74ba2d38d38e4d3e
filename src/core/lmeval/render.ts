// Documents rendered the way lm-eval's ConfigurableTask renders them: description, few-shot
// examples drawn with its seeded sampler, doc_to_text, choices and target, from templates, fields,
// literals or the values of `!function` helpers.
import type { Doc } from "./documents";
import type { DocumentHelperKey } from "./helpers";
import { parseListLiteral } from "./literal";
import { PythonRandom } from "./pythonRandom";
import { isFunctionTag, type TaskSpec } from "./spec";
import { fieldNames, lmEvalTemplate, TemplateError, type TextTemplate } from "./template";
import type { MultipleChoiceItem, PromptParts, TaskItem } from "./taskItems";

const LM_EVAL_FEWSHOT_SEED = 1234;

/** Renders documents the way lm-eval's ConfigurableTask does, few-shot examples included. */
export class Renderer {
  private readonly templates = new Map<string, TextTemplate>();
  private readonly rng = new PythonRandom(LM_EVAL_FEWSHOT_SEED);
  /** Whether doc_to_text gives an index (lm-eval's multiple-input form): read from the first document, as lm-eval reads it. */
  private multipleInput?: boolean;

  /** `helperValues`: what each `!function` helper gave for each document (lmeval/helpers.ts). */
  constructor(
    private readonly spec: TaskSpec,
    private readonly fewshotDocs: Doc[],
    private readonly helperValues: ReadonlyMap<DocumentHelperKey, WeakMap<Doc, unknown>>,
  ) {}

  item(doc: Doc, index: number): TaskItem {
    const text = this.textOrIndex(doc);
    if (this.spec.outputType === "generate_until") {
      const prompt = this.prompt(doc, String(text));
      return { kind: "generate_until", index, context: this.plainContextOf(prompt), prompt, target: this.targetText(doc) };
    }
    this.multipleInput ??= typeof text === "number";
    if (this.multipleInput !== (typeof text === "number")) {
      throw new Error(
        `doc_to_text gives ${typeof text === "number" ? `the index ${text}` : "text"} here but ${this.multipleInput ? "an index" : "text"} for the first document, and lm-eval reads the task's form (choices as contexts when it is an index) from the first document`,
      );
    }
    if (typeof text === "number") return this.multipleInputItem(doc, index, text);
    const prompt = this.prompt(doc, text);
    const choices = this.choices(doc);
    const target = this.targetIndex(doc, choices);
    return {
      kind: "multiple_choice",
      index,
      context: this.plainContextOf(prompt),
      prompt,
      choices,
      continuations: choices.map((c) => this.spec.targetDelimiter + c),
      target,
    };
  }

  /**
   * lm-eval's multiple-input form: doc_to_text is the gold index into doc_to_choice's contexts,
   * each choice is appended to the shared context (description and few-shot examples) and every
   * one is scored on the same continuation, target_delimiter + doc_to_target.
   */
  private multipleInputItem(doc: Doc, index: number, gold: number): MultipleChoiceItem {
    const contexts = this.contexts(doc);
    const target = checkedIndex(gold, contexts);
    const targetText = this.targetText(doc);
    const prompt = this.prompt(doc, "");
    return {
      kind: "multiple_choice",
      index,
      context: this.plainContextOf(prompt),
      prompt,
      choices: contexts,
      continuations: contexts.map(() => this.spec.targetDelimiter + targetText),
      target,
      multipleInput: { targetText },
    };
  }

  private plainContextOf(prompt: PromptParts): string {
    return plainContext(prompt, this.spec.targetDelimiter, this.spec.fewshotDelimiter);
  }

  /** The description, the few-shot examples with their answers, and the document's own text. */
  private prompt(doc: Doc, text: string): PromptParts {
    const description = this.spec.description ? String(this.apply("description", this.spec.description, doc).value) : "";
    return { description, fewshot: this.fewshotExamples(doc), text };
  }

  private fewshotExamples(doc: Doc): PromptParts["fewshot"] {
    const n = this.spec.numFewshot;
    if (n === 0) return [];
    // lm-eval draws one extra when the few-shot pool is the test split, then drops the document itself.
    const sameSplit = this.spec.fewshotSamples === undefined && this.spec.fewshotSplit === this.spec.testSplit;
    const draw = sameSplit ? n + 1 : n;
    const drawn = this.spec.fewshotSampler === "first_n" ? this.fewshotDocs.slice(0, draw) : this.rng.sample(this.fewshotDocs, draw);
    const selected = drawn.filter((d) => !sameDoc(d, doc)).slice(0, n);
    return selected.map((d) => ({ text: this.exampleText(d), target: this.exampleTarget(d) }));
  }

  /**
   * doc_to_text of a document: its text, or in a multiple-choice task an index (a number, or a
   * rendered template of digits only), which lm-eval reads as its multiple-input form.
   */
  private textOrIndex(doc: Doc): string | number {
    const { value, rendered } = this.apply("doc_to_text", this.spec.docToText, doc);
    if (this.spec.outputType !== "multiple_choice") return String(value);
    if (typeof value === "number") return value;
    const text = String(value);
    return rendered && /^\d+$/.test(text) ? Number(text) : text;
  }

  /** A few-shot example's text, as lm-eval's sampler writes it: the gold context when doc_to_text is an index. */
  private exampleText(doc: Doc): string {
    const text = this.textOrIndex(doc);
    if (typeof text === "string") return text;
    const contexts = this.contexts(doc);
    return contexts[checkedIndex(text, contexts)]!;
  }

  /**
   * The answer shown after a few-shot example: the choice text for an index, the string otherwise;
   * in the multiple-input form, the continuation.
   */
  private exampleTarget(doc: Doc): string {
    if (this.spec.outputType === "generate_until" || this.multipleInput) return this.targetText(doc);
    const choices = this.choices(doc);
    return choices[this.targetIndex(doc, choices)]!;
  }

  /**
   * doc_to_choice in the multiple-input form: the contexts, at least 2 strings. lm-eval appends
   * them to text, so anything but a list of strings (a template's rendered list literal
   * included) fails there.
   */
  private contexts(doc: Doc): string[] {
    const { value, rendered } = this.apply("doc_to_choice", this.spec.docToChoice, doc);
    const list: unknown[] | undefined = Array.isArray(value)
      ? value
      : rendered && typeof value === "string"
        ? parseListLiteral(value)
        : typeof value === "object" && value !== null
          ? Object.values(value)
          : undefined;
    if (list && list.length >= 2 && list.every((c) => typeof c === "string")) return list as string[];
    throw new TemplateFault(
      "doc_to_choice",
      `doc_to_text gives an index (lm-eval's multiple-input form, each choice a context), so doc_to_choice must give a list of at least 2 strings; it gives ${preview(value)}`,
      "render",
    );
  }

  private choices(doc: Doc): string[] {
    const template = this.spec.docToChoice;
    const value = this.apply("doc_to_choice", template, doc).value;
    const choices = Array.isArray(value)
      ? value.map(String)
      : typeof value === "object" && value !== null
        ? Object.values(value).map(String)
        : parseListLiteral(String(value));
    if (!choices && typeof template === "string" && !/{{|{%/.test(template)) {
      // Neither a field nor Jinja: the same for every document, so the key's fault, not the data's.
      throw new TemplateFault(
        "doc_to_choice",
        `\`${template}\` is not a field of the documents (their fields: ${fieldNames(doc)}) nor a template that gives a list`,
        "template",
      );
    }
    if (!choices || choices.length < 2)
      throw new Error(`doc_to_choice must give a list of at least 2 choices, got ${JSON.stringify(value)}`);
    return choices;
  }

  private targetText(doc: Doc): string {
    const { value } = this.apply("doc_to_target", this.spec.docToTarget, doc);
    return Array.isArray(value) ? String(value[0]) : String(value);
  }

  /**
   * As lm-eval: a number is an index; a rendered template made of digits is an index; any other
   * string (a field's raw value included) is the text of the correct choice.
   */
  private targetIndex(doc: Doc, choices: string[]): number {
    const { value, rendered } = this.apply("doc_to_target", this.spec.docToTarget, doc);
    const text = String(value).trim();
    const index = typeof value === "number" ? value : rendered && /^\d+$/.test(text) ? Number(text) : choices.indexOf(text);
    if (!Number.isInteger(index) || index < 0 || index >= choices.length) {
      throw new Error(`doc_to_target gives ${JSON.stringify(value)}, which is neither a choice nor an index below ${choices.length}`);
    }
    return index;
  }

  /** What the key's `!function` helper gave for `doc`. */
  private helperValue(key: TemplateKey, doc: Doc): unknown {
    const value = this.helperValues.get(key as DocumentHelperKey)?.get(doc);
    if (value === undefined || value === null) throw new TemplateFault(key, "its helper returned nothing (None)", "render");
    return value;
  }

  /** lm-eval's rule: a template that names a document field is that field, otherwise Jinja. */
  private apply(key: TemplateKey, template: unknown, doc: Doc): { value: unknown; rendered: boolean } {
    if (typeof template === "number" || Array.isArray(template)) return { value: template, rendered: false };
    if (isFunctionTag(template)) return { value: this.helperValue(key, doc), rendered: false };
    const text = String(template);
    if (Object.prototype.hasOwnProperty.call(doc, text)) return { value: doc[text], rendered: false };
    try {
      let compiled = this.templates.get(text);
      if (!compiled) this.templates.set(text, (compiled = lmEvalTemplate(text)));
      return { value: compiled.render(doc), rendered: true };
    } catch (e) {
      const origin = !(e instanceof TemplateError) ? "render" : e.kind === "undefined" ? "undefined" : "template";
      throw new TemplateFault(key, (e as Error).message, origin);
    }
  }
}

export type TemplateKey = "description" | "doc_to_text" | "doc_to_choice" | "doc_to_target";

/**
 * What stopped a render at a task key, by its origin. `template`: the template itself (syntax,
 * limits), whatever the document; `undefined`: it prints a name the document lacks
 * (StrictUndefined); `render`: the document's values made it fail (an operator or a method that
 * refuses them).
 */
export class TemplateFault extends Error {
  constructor(
    readonly key: TemplateKey,
    message: string,
    readonly origin: "template" | "undefined" | "render",
  ) {
    super(message);
  }
}

/** `index` when it is an index into `list`; an error that says which, otherwise (the data's fault). */
function checkedIndex(index: number, list: readonly string[]): number {
  if (Number.isInteger(index) && index >= 0 && index < list.length) return index;
  throw new Error(`doc_to_text gives ${index}, which is not an index below ${list.length} into the contexts doc_to_choice gives`);
}

/** A value as a message shows it: JSON, cut to 200 characters. */
function preview(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 200 ? `${json.slice(0, 200)}…` : json;
}

function sameDoc(a: Doc, b: Doc): boolean {
  return a === b || docJson(a) === docJson(b);
}

/** Documents are never changed once read, and few-shot draws compare the same ones over and over. */
const docJsonCache = new WeakMap<Doc, string>();
function docJson(doc: Doc): string {
  let json = docJsonCache.get(doc);
  if (json === undefined) docJsonCache.set(doc, (json = JSON.stringify(doc)));
  return json;
}

/**
 * The context lm-eval builds without a chat template (ContextSampler.get_context, then the
 * document): description, then each example as text + target_delimiter + answer +
 * fewshot_delimiter (an example whose answer is empty is its text alone), then doc_to_text.
 */
export function plainContext(prompt: PromptParts, targetDelimiter: string, fewshotDelimiter: string): string {
  return prompt.description + fewshotText(prompt.fewshot, targetDelimiter, fewshotDelimiter) + prompt.text;
}

/** The plain contexts of a task item: its one context, or one per choice in lm-eval's multiple-input form (context + choice). */
export function itemContexts(item: TaskItem): string[] {
  return item.kind === "multiple_choice" && item.multipleInput ? item.choices.map((choice) => item.context + choice) : [item.context];
}

/** The few-shot examples as one block of text, as lm-eval's get_context writes them. */
export function fewshotText(examples: PromptParts["fewshot"], targetDelimiter: string, fewshotDelimiter: string): string {
  return examples.map((e) => (e.target === "" ? e.text : e.text + targetDelimiter + e.target + fewshotDelimiter)).join("");
}
