// The driver every ability generator shares: it draws items from a generator's templates, keeps
// each (context, question) once, deals the answer positions evenly, and numbers the items.
//
// A generator only says how to make one item: its text, the answer it computes, and wrong choices
// of the answer's type. Everything that makes a file pass the dataset checks of diagnostic.ts
// (unique ids, distinct choices, no repeated questions, balanced answer positions) is done here,
// once, so no generator can forget it.
import type { PaperAbility } from "../paperAbilities";
import type { DiagnosticItemFields } from "../item";
import { normalizedWords } from "../wordHashes";
import { Rng, streamSeed } from "./rng";

/** One item as a generator makes it, before its choices are ordered. */
export interface ItemDraft {
  context: string;
  question: string;
  /** The correct choice, computed from the item's own data. */
  answer: string;
  /** Wrong choices of the answer's type; distinct from each other and from the answer. */
  distractors: string[];
  /** Which of the generator's templates made it. */
  template: string;
}

export interface AbilityGenerator {
  ability: PaperAbility;
  /** Lower-case id of the generator: item ids and file names start with it. */
  slug: string;
  /** What its items ask, in a line (for `bprof generate --help` and the docs). */
  summary: string;
  /** The templates it draws from, in the order `meta.template` names them. */
  templates: readonly string[];
  draft(rng: Rng): ItemDraft;
}

export interface GenerateOptions {
  n: number;
  seed: number;
  /** Keys (itemKey) of items that must not be produced: another split's items. */
  exclude?: ReadonlySet<string>;
  /**
   * Default true: every (context, question) at most once, as a diagnostic dataset needs. False
   * lets items repeat (a training mixture larger than a generator's distinct items), still
   * never one of `exclude`.
   */
  distinct?: boolean;
  /** Item ids are `<idPrefix>-<seed>-<number>`; default the generator's slug. */
  idPrefix?: string;
  /** A last say on each finished item (choices in order): false draws another one instead. */
  accept?: (item: DiagnosticItemFields) => boolean;
}

/** Too many draws in a row were repeats: the generator has fewer distinct items than asked for. */
export class GeneratorCapacityError extends Error {
  override name = "GeneratorCapacityError";
}

/**
 * The identity of an item for duplicate checks: its context and question as the dataset check
 * compares them (lower case, punctuation dropped, words split on white space).
 */
export function itemKey(item: { context: string; question: string }): string {
  return `${normalizedWords(item.context).join(" ")}\u0000${normalizedWords(item.question).join(" ")}`;
}

/** Folded as the dataset check folds choices when it looks for repeats. */
function foldedChoice(choice: string): string {
  return choice.trim().toLowerCase();
}

/**
 * Deals answer positions from shuffled decks of 0..c-1, one deck per choice count c: over any
 * c consecutive items with c choices every position is dealt once, so no position is favoured.
 */
class PositionDealer {
  private readonly decks = new Map<number, number[]>();
  constructor(private readonly rng: Rng) {}

  deal(choices: number): number {
    let deck = this.decks.get(choices);
    if (!deck || deck.length === 0) {
      deck = this.rng.shuffled(Array.from({ length: choices }, (_, i) => i));
      this.decks.set(choices, deck);
    }
    return deck.pop()!;
  }

  /** Puts a dealt position back, for an item that was not used after all. */
  undeal(choices: number, position: number): void {
    this.decks.get(choices)!.push(position);
  }
}

/** Checks what the driver relies on; a failure is a bug in the generator, not bad luck. */
function checkDraft(generator: AbilityGenerator, draft: ItemDraft): void {
  const where = `${generator.slug} (${draft.template}): ${JSON.stringify(draft.question)}`;
  if (draft.question.trim() === "") throw new Error(`${where}: empty question`);
  if (draft.distractors.length === 0) throw new Error(`${where}: no distractors`);
  const seen = new Set<string>();
  for (const choice of [draft.answer, ...draft.distractors]) {
    const folded = foldedChoice(choice);
    if (folded === "") throw new Error(`${where}: empty choice`);
    if (seen.has(folded)) throw new Error(`${where}: choice ${JSON.stringify(choice)} appears twice`);
    seen.add(folded);
  }
}

/** Draws per requested item before giving up on finding a new one. */
const MAX_DRAWS_PER_ITEM = 200;

/**
 * `n` items of one generator, reproducible from `seed`: the same seed gives the same items
 * whether the generator runs alone or with the others (each has its own stream of the seed).
 */
export function generateItems(generator: AbilityGenerator, options: GenerateOptions): DiagnosticItemFields[] {
  const { n, seed } = options;
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative integer, got ${seed}`);
  const distinct = options.distinct ?? true;
  const exclude = options.exclude ?? new Set<string>();
  const prefix = options.idPrefix ?? generator.slug;
  const rng = new Rng(streamSeed(seed, generator.slug));
  const dealer = new PositionDealer(rng);
  const seen = new Set<string>();
  const items: DiagnosticItemFields[] = [];
  let misses = 0;
  while (items.length < n) {
    const miss = () => {
      if (++misses > MAX_DRAWS_PER_ITEM * (n + 10)) {
        throw new GeneratorCapacityError(
          `the ${generator.ability} generator found only ${items.length} of the ${n} ${distinct ? "distinct " : ""}items asked for ` +
            `(${exclude.size > 0 || options.accept ? "after leaving out the excluded items; " : ""}ask for fewer)`,
        );
      }
    };
    const draft = generator.draft(rng);
    checkDraft(generator, draft);
    const key = itemKey(draft);
    if (exclude.has(key) || (distinct && seen.has(key))) {
      miss();
      continue;
    }
    const count = draft.distractors.length + 1;
    const answer = dealer.deal(count);
    const wrong = rng.shuffled(draft.distractors);
    const item: DiagnosticItemFields = {
      id: `${prefix}-${seed}-${items.length + 1}`,
      ability: generator.ability,
      context: draft.context,
      question: draft.question,
      choices: [...wrong.slice(0, answer), draft.answer, ...wrong.slice(answer)],
      answer,
      meta: { template: draft.template },
    };
    if (options.accept && !options.accept(item)) {
      dealer.undeal(count, answer);
      miss();
      continue;
    }
    seen.add(key);
    items.push(item);
  }
  return items;
}

/** The JSONL text of items, one a line, as `*.diag.jsonl` files hold them. */
export function toJsonl(items: readonly DiagnosticItemFields[]): string {
  return items.map((item) => JSON.stringify(item)).join("\n") + (items.length > 0 ? "\n" : "");
}
