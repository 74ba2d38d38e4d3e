// The fluency measure's text and its job items. A variant that zeroed the wrong weights (attention)
// or too many of them stops writing plain prose; its log-likelihood of ordinary text falls. The
// text is scored as log-likelihood requests in the same `profile` job as the benchmarks, so the
// runner scores it with the baseline and with every variant in the pass it makes anyway
// (docs/method.md, "Fluency").
import { tokenizeRequest, type ModelTokenizer } from "./tokenize";

/**
 * Job item ids of the fluency text: `fluency text/<paragraph>`. A benchmark's are `<name>/<index>`,
 * and lm-eval's task names have no spaces; compileProfileJob refuses a benchmark of this name.
 */
export const FLUENCY_BENCHMARK = "fluency text";
export const FLUENCY_ID_PREFIX = `${FLUENCY_BENCHMARK}/`;

/**
 * The built-in neutral text, written for this project: everyday prose about no subject a
 * diagnostic dataset or benchmark asks about (no sums, no riddles, no facts to recall), in short
 * paragraphs that each fit any model's window.
 */
export const BUILT_IN_FLUENCY_TEXT = `The morning was quiet on the street where the bakery stood. A few people walked past with their coats buttoned against the wind, and the smell of fresh bread drifted out each time the door opened.

Inside, the owner wiped the counter and arranged the loaves on the wooden shelves. She had worked there for many years and knew most of her customers by name. Some came for a roll on their way to work, others stayed for a cup of coffee by the window.

Later in the day the sun came out and the street grew busy. Children walked home from school in small groups, talking and laughing. A man on a bicycle rang his bell as he passed the corner, and a dog waited patiently outside the shop for its owner.

In the evening the lights in the houses came on one by one. Families sat down to dinner, and the sound of plates and conversation filled the kitchens. Outside, the air was cool and still, and the first stars appeared above the roofs.

On the weekend the town held a small market in the square. Farmers brought vegetables, honey and flowers, and a musician played an old song near the fountain. People wandered between the stalls, greeting friends and stopping to look at the things for sale.

The library at the end of the road was a calm place to spend an afternoon. Its tall windows let in plenty of light, and the chairs by the shelves were soft and worn. Readers turned the pages slowly, and the only other sound was the ticking of the clock above the door.`;

/** The paragraphs of a text: blocks separated by blank lines, trimmed, empty ones dropped. */
export function fluencyParagraphs(text: string): string[] {
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.replace(/\s+/g, " ").trim())
    .filter((p) => p.length > 0);
}

/**
 * One log-likelihood request per paragraph, scored from the model's start (an empty context: the
 * tokenizer's prefix token, as lm-eval's rolling log-likelihood starts), cut to the model's
 * window where it is shorter than a paragraph.
 */
export function fluencyItems(
  tokenizer: ModelTokenizer,
  text: string,
  maxLength: number | undefined,
): { id: string; context: number[]; choices: number[][] }[] {
  return fluencyParagraphs(text).map((paragraph, i) => {
    const { context, continuation } = tokenizeRequest(tokenizer, "", paragraph);
    const room = maxLength === undefined ? continuation.length : Math.max(1, maxLength - context.length);
    return { id: `${FLUENCY_ID_PREFIX}${i}`, context, choices: [continuation.slice(0, room)] };
  });
}

/** A job as it was compiled before the fluency measure: its items without the fluency text's. */
export function withoutFluencyItems<T extends object>(job: T): T {
  const items = (job as { items?: { id: string }[] }).items;
  return items ? { ...job, items: items.filter((i) => !i.id.startsWith(FLUENCY_ID_PREFIX)) } : job;
}
