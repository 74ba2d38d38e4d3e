// A model's chat template, found and rendered as transformers' `apply_chat_template(messages,
// tokenize=False, add_generation_prompt=...)` does, which is what lm-eval's Hugging Face backend
// calls:
// - the template is `chat_template.jinja` in the model folder when there is one (transformers
//   reads it in preference to tokenizer_config.json), else `chat_template` of
//   tokenizer_config.json: a string, or a list of `{name, template}` from which the one named by
//   the config is taken, else the one named `default` (no default and no name is an error, as in
//   transformers);
// - Jinja as transformers sets it up (trim_blocks, lstrip_blocks, one trailing newline of the
//   template dropped): @huggingface/jinja's `Template` does exactly this;
// - the variables are `messages`, `add_generation_prompt`, `tools` and `documents` (none), and
//   the tokenizer's special tokens as strings (`bos_token`, `eos_token`, ... from
//   tokenizer_config.json), as transformers passes its special_tokens_map.
// The rendered text holds the special tokens the template writes (BOS for Llama 3), so it is
// tokenized without adding special tokens (transformers' apply_chat_template(tokenize=True) and
// lm-eval both encode it with add_special_tokens=False).
// Templates that print today's date (Llama 3.x: `strftime_now("%d %b %Y")`) get the date the run
// they render for started (`ChatTemplate.on`), in UTC, so a run's prompts, and its job, do not
// change when it is resumed on another day or in another time zone.
import { Template } from "@huggingface/jinja";
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { fileProblem, type Problem } from "../base/problems";
import { isFile } from "../base/fsutil";
import { readJsonSource, type JsonSource } from "../base/jsonSource";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatTemplate {
  /** Where the template comes from, for messages: a file, and the template's name when it has one. */
  origin: string;
  render(messages: readonly ChatMessage[], addGenerationPrompt: boolean): string;
  /** The same template with `strftime_now` reading `date` instead of the clock. */
  on(date: Date): ChatTemplate;
}

/** The special-token attributes transformers puts in special_tokens_map, in its order. */
const SPECIAL_TOKEN_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"] as const;

export interface ChatTemplateLookup {
  template?: ChatTemplate;
  /**
   * Why the folder has no usable template for the config's request, as a sentence for the
   * config's `chat_template` field (no template at all, no such name, no default).
   */
  problem?: string;
  /** Problems inside the model's files (tokenizer_config.json not JSON, a template that does not parse). */
  problems: Problem[];
}

export const CHAT_TEMPLATE_FILE = "chat_template.jinja";

/** The chat template of `modelDir`: the default one, or the one called `name`. */
export async function loadChatTemplate(modelDir: string, name?: string): Promise<ChatTemplateLookup> {
  const configFile = path.join(modelDir, "tokenizer_config.json");
  let config: JsonSource | undefined;
  const problems: Problem[] = [];
  if (await isFile(configFile)) {
    const read = await readJsonSource(configFile);
    problems.push(...read.problems);
    config = read.source;
    if (!config) return { problems };
  }
  const raw = (isObject(config?.value) ? config.value : {}) as Record<string, unknown>;
  const specialTokens = specialTokenMap(raw);

  const jinjaFile = path.join(modelDir, CHAT_TEMPLATE_FILE);
  if (await isFile(jinjaFile)) {
    if (name !== undefined)
      return {
        problem: `the model's chat template is the single one of ${CHAT_TEMPLATE_FILE}, which has no name: use \`chat_template: true\``,
        problems,
      };
    const text = await fs.readFile(jinjaFile, "utf8");
    return compiled(text, jinjaFile, specialTokens, (message) => fileProblem(jinjaFile, "model.chat-template", message), problems);
  }

  const value = raw.chat_template;
  if (value === undefined || value === null || (typeof value === "string" && value.trim() === "")) {
    const where = config ? `${configFile} has no \`chat_template\`` : `the model folder has no tokenizer_config.json`;
    return {
      problem: `the model has no chat template: ${where} and there is no ${CHAT_TEMPLATE_FILE} (a base model; set \`chat_template: false\` or leave it out)`,
      problems,
    };
  }
  const at = (jsonPath: (string | number)[]) => (message: string) => config!.at(jsonPath, "model.chat-template", message);
  if (typeof value === "string") {
    if (name !== undefined)
      return { problem: `the model has a single chat template in ${configFile}, which has no name: use \`chat_template: true\``, problems };
    return compiled(value, `${configFile} (chat_template)`, specialTokens, at(["chat_template"]), problems);
  }
  if (!Array.isArray(value) || !value.every((t) => isObject(t) && typeof t.name === "string" && typeof t.template === "string")) {
    problems.push(
      config!.at(["chat_template"], "model.chat-template", '`chat_template` must be a Jinja template, or a list of {"name", "template"}'),
    );
    return { problems };
  }
  const named = value as { name: string; template: string }[];
  const wanted = name ?? "default";
  const index = named.findIndex((t) => t.name === wanted);
  if (index < 0) {
    const names = named.map((t) => `\`${t.name}\``).join(", ");
    return {
      problem:
        name === undefined
          ? `the model has several chat templates and none is named \`default\`: name one with \`chat_template: <name>\` (templates: ${names})`
          : `the model has no chat template named \`${name}\` (templates: ${names})`,
      problems,
    };
  }
  return compiled(
    named[index]!.template,
    `${configFile} (chat_template \`${wanted}\`)`,
    specialTokens,
    at(["chat_template", index, "template"]),
    problems,
  );
}

function compiled(
  text: string,
  origin: string,
  specialTokens: Record<string, unknown>,
  report: (message: string) => Problem,
  problems: Problem[],
): ChatTemplateLookup {
  let template: Template;
  try {
    template = new Template(text);
  } catch (e) {
    problems.push(report(`the chat template does not parse as Jinja: ${(e as Error).message}`));
    return { problems };
  }
  // The library's own strftime_now is a global a render cannot replace: the template's calls are
  // pointed at a variable of ours instead.
  renameIdentifiers(template.parsed, "strftime_now", RUN_STRFTIME);
  const at = (date: Date | undefined): ChatTemplate => ({
    origin,
    render: (messages, addGenerationPrompt) =>
      template.render({
        ...specialTokens,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        add_generation_prompt: addGenerationPrompt,
        tools: null,
        documents: null,
        [RUN_STRFTIME]: (format: string) => strftime(date ?? new Date(), format),
      }),
    on: (fixed) => at(fixed),
  });
  return { template: at(undefined), problems };
}

const RUN_STRFTIME = "__bprof_strftime_now";

/** Renames every Identifier node called `from` in a parsed template. */
function renameIdentifiers(node: unknown, from: string, to: string): void {
  if (Array.isArray(node)) {
    for (const child of node) renameIdentifiers(child, from, to);
  } else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>;
    if (record.type === "Identifier" && record.value === from) record.value = to;
    for (const value of Object.values(record)) renameIdentifiers(value, from, to);
  }
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/**
 * Python's time.strftime in the C locale (English names), as transformers' strftime_now calls it,
 * for the directives chat templates use; others are left as written. In UTC, unlike Python's
 * local time: a run's prompts then do not depend on the time zone it is resumed in.
 */
export function strftime(date: Date, format: string): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
  return format.replace(/%([YmdbBaAHMSjy%])/g, (_, directive: string) => {
    switch (directive) {
      case "Y":
        return String(year);
      case "y":
        return pad(year % 100);
      case "m":
        return pad(month + 1);
      case "d":
        return pad(day);
      case "b":
        return MONTHS[month]!.slice(0, 3);
      case "B":
        return MONTHS[month]!;
      case "a":
        return DAYS[date.getUTCDay()]!.slice(0, 3);
      case "A":
        return DAYS[date.getUTCDay()]!;
      case "H":
        return pad(date.getUTCHours());
      case "M":
        return pad(date.getUTCMinutes());
      case "S":
        return pad(date.getUTCSeconds());
      case "j":
        return pad((Date.UTC(year, month, day) - Date.UTC(year, 0, 1)) / 86_400_000 + 1, 3);
      default:
        return "%";
    }
  });
}

/** transformers' special_tokens_map: the set special tokens as strings, additional ones as a list. */
export function specialTokenMap(tokenizerConfig: Record<string, unknown>): Record<string, unknown> {
  const content = (token: unknown) =>
    typeof token === "string" ? token : isObject(token) && typeof token.content === "string" ? token.content : undefined;
  const map: Record<string, unknown> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const text = content(tokenizerConfig[key]);
    if (text !== undefined) map[key] = text;
  }
  const additional = tokenizerConfig.additional_special_tokens;
  if (Array.isArray(additional)) map.additional_special_tokens = additional.map(content).filter((t) => t !== undefined);
  return map;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
