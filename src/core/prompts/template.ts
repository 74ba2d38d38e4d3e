// Jinja as lm-eval configures it (jinja2's defaults plus keep_trailing_newline): no block
// trimming, trailing newlines kept. @huggingface/jinja's Template is set up for chat templates
// (trim_blocks, lstrip_blocks, last newline dropped), so the parse is done here with lm-eval's options.
import { parse, Template, tokenize } from "@huggingface/jinja";

export interface TextTemplate {
  render(context: Record<string, unknown>): string;
}

export function lmEvalTemplate(source: string): TextTemplate {
  // The tokenizer always drops one trailing newline; doubling it keeps the author's.
  const text = source.endsWith("\n") ? source + "\n" : source;
  const template = Object.create(Template.prototype) as Template;
  (template as unknown as { parsed: unknown }).parsed = parse(tokenize(text, { lstrip_blocks: false, trim_blocks: false }));
  return { render: (context) => template.render(context) };
}
