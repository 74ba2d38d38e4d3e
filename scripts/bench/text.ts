// Seeded synthetic English-like text for the editor-side benchmarks: a Zipf-distributed vocabulary
// of common English words and made-up words, so that word and shingle frequencies (which the
// duplicate search and tokenizers depend on) look like text. Same seed, same text.
import { seededRandom } from "../../src/core/base/random";

const COMMON =
  "the of and to a in is that for it as was with be by on not he this are or his from at which but have an they you were her she there would their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );
const SYLLABLES =
  "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge gi go ka ke ki ko la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo za ze zi zo ran ter mon vel dor kin".split(
    " ",
  );

export class TextSource {
  readonly random: () => number;
  private readonly vocabulary: string[];
  private readonly cumulative: number[];

  constructor(seed: number) {
    this.random = seededRandom(seed);
    const made = Array.from({ length: 8000 }, () =>
      Array.from({ length: this.int(1, 4) }, () => SYLLABLES[this.int(0, SYLLABLES.length - 1)]).join(""),
    );
    this.vocabulary = [...COMMON, ...made];
    let total = 0;
    this.cumulative = this.vocabulary.map((_, rank) => (total += 1 / (rank + 1) ** 1.05));
  }

  /** A uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  word(): string {
    const r = this.random() * this.cumulative[this.cumulative.length - 1]!;
    let [lo, hi] = [0, this.cumulative.length - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return this.vocabulary[lo]!;
  }

  words(count: number): string[] {
    return Array.from({ length: count }, () => this.word());
  }

  sentence(min: number, max: number, end = "."): string {
    const w = this.words(this.int(min, max)).map((x) => (this.random() < 0.08 ? `${x},` : x));
    const first = w[0]!;
    w[0] = first[0]!.toUpperCase() + first.slice(1);
    return w.join(" ").replace(/,$/, "") + end;
  }

  /** Sentences up to a length drawn from [minChars, maxChars]. */
  passage(minChars: number, maxChars: number): string {
    const target = this.int(minChars, maxChars);
    let text = this.sentence(8, 20);
    while (text.length < target) text += " " + this.sentence(8, 20);
    return text;
  }
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
