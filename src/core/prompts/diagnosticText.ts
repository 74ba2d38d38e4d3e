// Diagnostic items as the text the importance loss reads (docs/method.md, step 1: an item is
// rendered to one text, context then question then the correct answer). The rendering is deliberately plain, one field a line:
//
//     {context}
//     {question}
//     Answer: {choices[answer]}
//
// - the context line is left out when the context is empty (only white space), so an item
//   without a passage does not start with a blank line;
// - fields are used as written (no trimming, no template), so what the user wrote is what the
//   model reads;
// - only the correct choice appears: the loss is over every token of the text (labels = inputs),
//   so the gradient points at the parameters that produce the right answer in context, not at
//   those that would reproduce a list of options.
// The text is then tokenized as lm-eval tokenizes a context (inputTokens): with the special
// tokens the tokenizer adds on its own (BOS for Llama), or the model's `add_bos_token`.
//
// A model whose config entry asks for its chat template reads the item as a conversation instead
// (chatPrompt.ts: the user asks context and question, the assistant answers), tokenized by the
// same rule: a template that writes BOS (Llama 3) gets none added, one that does not (Qwen) gets
// what the tokenizer adds.
import type { DiagnosticItem } from "../diagnostic/item";
import { renderDiagnosticChat } from "./chatPrompt";
import type { ChatTemplate } from "./chatTemplate";
import { inputTokens, type ModelTokenizer } from "./tokenize";

export const ANSWER_PREFIX = "Answer: ";

export function renderDiagnosticItem(item: Pick<DiagnosticItem, "context" | "question" | "choices" | "answer">): string {
  const answer = item.choices[item.answer];
  if (answer === undefined) throw new RangeError(`answer ${item.answer} is not an index into ${item.choices.length} choices`);
  const lines = item.context.trim() === "" ? [] : [item.context];
  lines.push(item.question, ANSWER_PREFIX + answer);
  return lines.join("\n");
}

/**
 * The token sequence of one item, through the chat template when one is given; the runner needs
 * at least 2 tokens (one prediction).
 */
export function diagnosticSequence(tokenizer: ModelTokenizer, item: DiagnosticItem, chatTemplate?: ChatTemplate): number[] {
  const tokens = inputTokens(tokenizer, chatTemplate ? renderDiagnosticChat(item, chatTemplate) : renderDiagnosticItem(item));
  if (tokens.length < 2)
    throw new Error(
      `diagnostic item ${item.id} (line ${item.line}) renders to ${tokens.length} token(s); the importance loss needs at least 2`,
    );
  return tokens;
}
