// Benchmark documents and diagnostic items as chat conversations, for models whose config entry
// asks for their chat template (`chat_template`).
//
// Benchmarks follow lm-eval's `--apply_chat_template` (ConfigurableTask.fewshot_context and
// ContextSampler.get_chat_context, with no system_instruction and no gen_prefix):
// - the task's description, when it has one, is a system message;
// - few-shot examples are, by default, inside the one user message, written exactly as without a
//   template (text + target_delimiter + answer + fewshot_delimiter each), followed by the
//   document's doc_to_text; with `fewshot_as_multiturn`, each example is a user message (its
//   doc_to_text) and an assistant message (its answer, no delimiter), then the document is a user
//   message of its own;
// - the conversation is rendered with add_generation_prompt=True, so the text ends where the
//   assistant's answer begins;
// - a template that refuses the conversation (many refuse a system message) is tried again
//   without the system message, as lm-eval's HFLM.apply_chat_template does;
// - multiple choice: the continuations are the choices without target_delimiter (lm-eval sets it
//   to "" when a chat template is applied); the context/continuation split then moves the
//   context's trailing white space (e.g. the "\n\n" after Llama 3's assistant header) into each
//   continuation, as lm-eval's _encode_pair does;
// - lm-eval's multiple-input form (winogrande: each choice is a context, doc_to_target the one
//   continuation): the description and examples are one conversation, each choice one more after
//   it, and the continuation is doc_to_target without target_delimiter (multipleInputChatContexts).
//
// Diagnostic items (docs/method.md, step 1: with an instruction model's chat template)
// are one exchange: the user asks "{context}\n{question}" (the question alone when the context is
// blank) and the assistant answers with the correct choice's text; rendered with
// add_generation_prompt=False, so the text ends with the template's end of turn. The importance
// loss reads every token of it, template tokens included, as a chat model is fine-tuned.
import type { DiagnosticItem } from "../diagnostic/item";
import { fewshotText } from "../lmeval/render";
import type { PromptParts, TaskItem } from "../lmeval/task";
import type { ChatMessage, ChatTemplate } from "./chatTemplate";

export interface ChatSettings {
  template: ChatTemplate;
  /** lm-eval's --fewshot_as_multiturn: one user/assistant exchange per few-shot example. */
  fewshotAsMultiturn: boolean;
}

/** The conversation of a benchmark document (lm-eval's fewshot_context with a chat template). */
export function benchmarkMessages(
  prompt: PromptParts,
  delimiters: { targetDelimiter: string; fewshotDelimiter: string },
  fewshotAsMultiturn: boolean,
): ChatMessage[] {
  const messages = contextMessages(prompt, delimiters, fewshotAsMultiturn);
  // lm-eval's append_target_question: into the last user message, unless the examples are turns of their own.
  const last = messages[messages.length - 1];
  if (!fewshotAsMultiturn && last?.role === "user") last.content += prompt.text;
  else messages.push({ role: "user", content: prompt.text });
  return messages;
}

/** The conversation before the document's own text: the description as a system message, then the few-shot examples. */
function contextMessages(
  prompt: PromptParts,
  delimiters: { targetDelimiter: string; fewshotDelimiter: string },
  fewshotAsMultiturn: boolean,
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (prompt.description !== "") messages.push({ role: "system", content: prompt.description });
  if (prompt.fewshot.length > 0) {
    if (fewshotAsMultiturn) {
      for (const example of prompt.fewshot) {
        messages.push({ role: "user", content: example.text }, { role: "assistant", content: example.target });
      }
    } else {
      messages.push({ role: "user", content: fewshotText(prompt.fewshot, delimiters.targetDelimiter, delimiters.fewshotDelimiter) });
    }
  }
  return messages;
}

/** A benchmark document's context: its conversation rendered up to the assistant's turn. */
export function benchmarkChatContext(
  prompt: PromptParts,
  delimiters: { targetDelimiter: string; fewshotDelimiter: string },
  chat: ChatSettings,
): string {
  return renderedConversation(benchmarkMessages(prompt, delimiters, chat.fewshotAsMultiturn), chat);
}

/**
 * The contexts of a document in lm-eval's multiple-input form (lmeval/task.ts) through the chat
 * template, one per choice, as lm-eval's fewshot_context and construct_requests build them: the
 * description and few-shot examples, when there are any, are one conversation rendered up to the
 * assistant's turn (the few-shot examples show the gold context and the continuation); each
 * choice is then a conversation of its own, one user message rendered the same way, written
 * after it. So a template that writes BOS at the start of a conversation writes it twice when
 * there are examples, as in lm-eval.
 */
export function multipleInputChatContexts(
  prompt: PromptParts,
  choices: readonly string[],
  delimiters: { targetDelimiter: string; fewshotDelimiter: string },
  chat: ChatSettings,
): string[] {
  const shared = contextMessages(prompt, delimiters, chat.fewshotAsMultiturn);
  const prefix = shared.length === 0 ? "" : renderedConversation(shared, chat);
  return choices.map((choice) => prefix + renderedConversation([{ role: "user", content: choice }], chat));
}

/** A task item's contexts through the chat template: one, or one per choice in the multiple-input form. */
export function itemChatContexts(
  item: TaskItem,
  delimiters: { targetDelimiter: string; fewshotDelimiter: string },
  chat: ChatSettings,
): string[] {
  return item.kind === "multiple_choice" && item.multipleInput
    ? multipleInputChatContexts(item.prompt, item.choices, delimiters, chat)
    : [benchmarkChatContext(item.prompt, delimiters, chat)];
}

/** A conversation rendered up to the assistant's turn; without its system message when the template refuses it (lm-eval's HFLM.apply_chat_template). */
function renderedConversation(messages: ChatMessage[], chat: ChatSettings): string {
  try {
    return chat.template.render(messages, true);
  } catch (e) {
    const withoutSystem = messages.filter((m) => m.role !== "system");
    if (withoutSystem.length < messages.length) {
      try {
        return chat.template.render(withoutSystem, true);
      } catch {
        // the first error says more
      }
    }
    throw new Error(`the chat template of ${chat.template.origin} refuses the conversation: ${(e as Error).message}`);
  }
}

/** Whether the template accepts a system message (a task description); lm-eval drops it otherwise. */
export function acceptsSystemMessage(template: ChatTemplate): boolean {
  try {
    template.render(
      [
        { role: "system", content: "s" },
        { role: "user", content: "u" },
      ],
      true,
    );
    return true;
  } catch {
    return false;
  }
}

/** A diagnostic item as one exchange: the question (after its context), then the correct answer. */
export function diagnosticMessages(item: Pick<DiagnosticItem, "context" | "question" | "choices" | "answer">): ChatMessage[] {
  const answer = item.choices[item.answer];
  if (answer === undefined) throw new RangeError(`answer ${item.answer} is not an index into ${item.choices.length} choices`);
  const question = item.context.trim() === "" ? item.question : `${item.context}\n${item.question}`;
  return [
    { role: "user", content: question },
    { role: "assistant", content: answer },
  ];
}

export function renderDiagnosticChat(
  item: Pick<DiagnosticItem, "context" | "question" | "choices" | "answer">,
  template: ChatTemplate,
): string {
  try {
    return template.render(diagnosticMessages(item), false);
  } catch (e) {
    throw new Error(`the chat template of ${template.origin} refuses a diagnostic item: ${(e as Error).message}`);
  }
}
