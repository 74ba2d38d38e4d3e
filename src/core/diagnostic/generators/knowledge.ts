// Long-term Knowledge: facts the passage does not give (facts.ts), asked both ways where the
// relation is one to one: capitals and their countries, continents, chemical symbols and their
// elements, authors and their books, painters. A one-line scene with a name opens each item and
// never contains the answer. Wrong choices are other entries of the same column, from the same
// continent first for capitals (the plausible confusions). Scenes and questions are short, so no
// 13 words in a row (the contamination test's n-gram) are fixed text and a name.
import type { AbilityGenerator, ItemDraft } from "./generate";
import { BOOKS, CONTINENTS, COUNTRIES, ELEMENTS, PAINTINGS } from "./facts";
import type { Rng } from "./rng";
import { NAMES } from "./words";

const TEMPLATES = ["capital", "country", "continent", "symbol", "element", "author", "book", "painter"] as const;
type Template = (typeof TEMPLATES)[number];

/** Three wrong values of a column, drawn from `preferred` first. */
function wrongOf(rng: Rng, answer: string, preferred: readonly string[], all: readonly string[]): string[] {
  const first = rng.sampleExcept(preferred, Math.min(3, preferred.filter((v) => v !== answer).length), [answer]);
  return [...first, ...rng.sampleExcept(all, 3 - first.length, [answer, ...first])];
}

function draft(rng: Rng): ItemDraft {
  const template: Template = rng.pick(TEMPLATES);
  const name = rng.pick(NAMES.knowledge);
  const item = (context: string, question: string, answer: string, distractors: string[]): ItemDraft => ({
    template,
    context: `${name} ${context}`,
    question,
    answer,
    distractors,
  });
  switch (template) {
    case "capital":
    case "country":
    case "continent": {
      const [country, capital, continent] = rng.pick(COUNTRIES);
      const near = COUNTRIES.filter((c) => c[2] === continent);
      if (template === "capital") {
        return item(
          rng.pick([`reads about ${country}.`, `visits ${country}.`]),
          `What is the capital of ${country}?`,
          capital,
          wrongOf(
            rng,
            capital,
            near.map((c) => c[1]),
            COUNTRIES.map((c) => c[1]),
          ),
        );
      }
      if (template === "country") {
        return item(
          rng.pick([`visits ${capital}.`, `flies to ${capital}.`]),
          `Which country has the capital ${capital}?`,
          country,
          wrongOf(
            rng,
            country,
            near.map((c) => c[0]),
            COUNTRIES.map((c) => c[0]),
          ),
        );
      }
      return item(
        rng.pick([`studies ${country}.`, `maps ${country}.`]),
        `On which continent is ${country}?`,
        continent,
        rng.sampleExcept(CONTINENTS, 3, [continent]),
      );
    }
    case "symbol":
    case "element": {
      const [element, symbol] = rng.pick(ELEMENTS);
      if (template === "symbol") {
        return item(
          rng.pick([`studies ${element}.`, `reads about ${element}.`]),
          `What is the chemical symbol for ${element}?`,
          symbol,
          rng.sampleExcept(
            ELEMENTS.map((e) => e[1]),
            3,
            [symbol],
          ),
        );
      }
      return item(
        rng.pick([`sees the symbol ${symbol}.`, `writes ${symbol} on a card.`]),
        `Which element has the symbol ${symbol}?`,
        element,
        rng.sampleExcept(
          ELEMENTS.map((e) => e[0]),
          3,
          [element],
        ),
      );
    }
    case "author":
    case "book": {
      const [book, author] = rng.pick(BOOKS);
      if (template === "author") {
        return item(
          rng.pick([`is reading ${book}.`, `buys ${book}.`]),
          `Who wrote ${book}?`,
          author,
          rng.sampleExcept(
            BOOKS.map((b) => b[1]),
            3,
            [author],
          ),
        );
      }
      return item(
        rng.pick([`likes ${author}.`, `reads ${author}.`]),
        `Which book did ${author} write?`,
        book,
        rng.sampleExcept(
          BOOKS.map((b) => b[0]),
          3,
          [book],
        ),
      );
    }
    case "painter": {
      const [painting, painter] = rng.pick(PAINTINGS);
      return item(
        rng.pick(["is at a museum.", "is in a gallery."]),
        `Who painted ${painting}?`,
        painter,
        rng.sampleExcept(
          PAINTINGS.map((p) => p[1]),
          3,
          [painter],
        ),
      );
    }
  }
}

export const knowledge: AbilityGenerator = {
  ability: "Long-term Knowledge",
  slug: "knowledge",
  summary: "capitals, continents, chemical symbols, authors and painters, from the project's fact table",
  templates: TEMPLATES,
  draft,
};
