// The diagnostic item generators: reproducible from their seed, right by construction (each
// answer re-derived here from the item's text by code that shares nothing with the generator but
// the fact tables), answer positions balanced, wrong choices of the answer's type, and 2000 items
// of every generator passing the dataset checks without a single diagnostic.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PAPER_ABILITIES } from "../../../src/core/diagnostic/paperAbilities";
import { checkDiagnosticDataset } from "../../../src/core/diagnostic/dataset";
import type { DiagnosticItemFields } from "../../../src/core/diagnostic/item";
import { CAUSAL } from "../../../src/core/diagnostic/generators/commonsense";
import { BOOKS, CONTINENTS, COUNTRIES, ELEMENTS, PAINTINGS } from "../../../src/core/diagnostic/generators/facts";
import {
  ALL_GENERATORS,
  findGenerator,
  GENERATORS,
  generateAbilities,
  generateItems,
  GeneratorCapacityError,
  itemKey,
  toJsonl,
  type AbilityGenerator,
} from "../../../src/core/diagnostic/generators/index";
import { ANALOGY_RELATIONS, KINDS_OF, OPPOSITES, PART_OF } from "../../../src/core/diagnostic/generators/lexicon";
import { NAMES } from "../../../src/core/diagnostic/generators/words";

const N = 2000;
const bySlug = new Map<string, DiagnosticItemFields[]>(ALL_GENERATORS.map((g) => [g.slug, generateItems(g, { n: N, seed: 1 })]));
const itemsOf = (g: AbilityGenerator) => bySlug.get(g.slug)!;

// ---------------------------------------------------------------------------------------------
// Independent solvers: each reads an item's text and computes its answer.

const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const COUNT_WORDS: Record<string, number> = { one: 1, two: 2, three: 3 };
const UNIT: Record<string, [number, number, number]> = {
  north: [0, 1, 0],
  south: [0, -1, 0],
  east: [1, 0, 0],
  west: [-1, 0, 0],
  "left of": [-1, 0, 0],
  "right of": [1, 0, 0],
  above: [0, 1, 0],
  below: [0, -1, 0],
  "in front of": [0, 0, 1],
  behind: [0, 0, -1],
};
const TABLE_WORD: Record<string, string> = {
  "-1,0,0": "to the left",
  "1,0,0": "to the right",
  "0,1,0": "above",
  "0,-1,0": "below",
  "0,0,1": "in front",
  "0,0,-1": "behind",
};
const COMPASS_WORD: Record<string, string> = {
  "0,1,0": "north",
  "0,-1,0": "south",
  "1,0,0": "east",
  "-1,0,0": "west",
  "1,1,0": "northeast",
  "-1,1,0": "northwest",
  "1,-1,0": "southeast",
  "-1,-1,0": "southwest",
};

function match(re: RegExp, text: string): string[] {
  const m = re.exec(text);
  assert.ok(m, `${text} does not match ${re}`);
  return m.slice(1);
}

function solveQuantitative(it: DiagnosticItemFields): string {
  const q = it.question;
  if (/gets \d+ more/.test(it.context)) {
    const [, x, , y] = match(/^(\w+) has (\d+) (\w+) and gets (\d+) more\.$/, it.context);
    return String(Number(x) + Number(y));
  }
  if (/gives away/.test(it.context)) {
    const [, x, , y] = match(/^(\w+) has (\d+) (\w+) and gives away (\d+)\.$/, it.context);
    return String(Number(x) - Number(y));
  }
  const counts = new Map<string, number>();
  for (const m of it.context.matchAll(/(\w+) has (\d+) \w+\./g)) counts.set(m[1]!, Number(m[2]));
  const [a, b] = match(/^How many more \w+ does (\w+) have than (\w+)\?$/, q);
  return String(counts.get(a!)! - counts.get(b!)!);
}

function solveTemporal(it: DiagnosticItemFields): string {
  if (it.question.startsWith("In which month")) {
    const [start, event, count, unit, way] = match(/^The \w+ is in (\w+)\. The (\w+) is (\w+) (months?) (later|earlier)\.$/, it.context);
    assert.equal(unit, count === "one" ? "month" : "months");
    assert.equal(it.question, `In which month is the ${event}?`);
    const offset = COUNT_WORDS[count!]! * (way === "later" ? 1 : -1);
    return MONTH_NAMES[(MONTH_NAMES.indexOf(start!) + offset + 24) % 12]!;
  }
  const [, , day, person, event, count, unit, way] = match(
    /^(\w+)'s (\w+) is on (\w+)\. (\w+)'s (\w+) is (\w+) (days?) (later|earlier)\.$/,
    it.context,
  );
  assert.equal(unit, count === "one" ? "day" : "days");
  assert.equal(it.question, `On which day is ${person}'s ${event}?`);
  const offset = COUNT_WORDS[count!]! * (way === "later" ? 1 : -1);
  return DAYS[(DAYS.indexOf(day!) + offset + 14) % 7]!;
}

function solveSpatial(it: DiagnosticItemFields): string {
  const key = (v: number[]) => v.map((x) => Math.sign(x) || 0).join(",");
  if (it.context.startsWith("The ")) {
    const [x, rel, y] = match(/^The (\w+) is (left of|right of|above|below|in front of|behind) the (\w+)\.$/, it.context);
    const m = /^Where is the (\w+) from the (\w+)\?$/.exec(it.question) ?? /^From the (\w+), where is the (\w+)\?$/.exec(it.question);
    assert.ok(m, it.question);
    const [asked, from] = it.question.startsWith("From") ? [m[2], m[1]] : [m[1], m[2]];
    const sign = asked === x && from === y ? 1 : asked === y && from === x ? -1 : NaN;
    return TABLE_WORD[key(UNIT[rel!]!.map((v) => sign * v))]!;
  }
  // Positions from the two relations, walking from the last person named.
  const facts = [...it.context.matchAll(/(\w+) is (north|south|east|west) of (\w+)\./g)].map((m) => [m[1]!, m[2]!, m[3]!] as const);
  assert.equal(facts.length, 2);
  const pos = new Map<string, number[]>([[facts[1]![2], [0, 0, 0]]]);
  for (let pass = 0; pass < 3; pass++) {
    for (const [p, dir, q] of facts) {
      const u = UNIT[dir]!;
      if (pos.has(q) && !pos.has(p))
        pos.set(
          p,
          pos.get(q)!.map((v, i) => v + u[i]!),
        );
      if (pos.has(p) && !pos.has(q))
        pos.set(
          q,
          pos.get(p)!.map((v, i) => v - u[i]!),
        );
    }
  }
  const [asked, from] = match(/^In which direction is (\w+) from (\w+)\?$/, it.question);
  return COMPASS_WORD[key(pos.get(asked!)!.map((v, i) => v - pos.get(from!)![i]!))]!;
}

function solveDeductive(it: DiagnosticItemFields): string {
  if (it.context.startsWith("If ")) {
    const rules = [...it.context.matchAll(/If ([^,]+), (\w+) (\w+)\./g)].map((m) => [m[1]!, m[3]!] as const);
    const [fact] = match(/\. ([^.]+)\.$/, it.context);
    const rule = rules.find(([condition]) => condition.toLowerCase() === fact!.toLowerCase());
    assert.ok(rule, it.context);
    return rule[1];
  }
  const rules = new Map([...it.context.matchAll(/All (\w+)s (?:are|can) (\w+)\./g)].map((m) => [m[1]!, m[2]!] as const));
  const [, kind] = match(/ (\w+) is a (\w+)\.$/, it.context);
  return rules.get(kind!)!;
}

function solveInductive(it: DiagnosticItemFields): string {
  const [list] = match(/^The (?:letters go|pattern goes) (.+)\.$/, it.context);
  const terms = list!.split(", ");
  if (it.context.startsWith("The letters")) {
    const codes = terms.map((t) => t.charCodeAt(0));
    const step = codes[1]! - codes[0]!;
    codes.forEach((c, i) => i > 0 && assert.equal(c - codes[i - 1]!, step));
    return String.fromCharCode(codes[codes.length - 1]! + step);
  }
  const period = [1, 2, 3, 4].find((p) => terms.every((t, i) => i < p || t === terms[i - p]))!;
  return terms[terms.length - period]!;
}

function solveAnalogical(it: DiagnosticItemFields): string {
  const q = it.question;
  const [a, b, c] = q.startsWith("If ")
    ? match(/^If (\w+) goes with (\w+), what goes with (\w+)\?$/, q)
    : / is to what as /.test(q)
      ? ((m) => [m[1]!, m[2]!, m[0]!])(match(/^(\w+) is to what as (\w+) is to (\w+)\?$/, q))
      : match(/^(\w+) is to (\w+) as (\w+) is to what\?$/, q);
  const lower = (w: string) => w.toLowerCase();
  const relation = Object.values(ANALOGY_RELATIONS).find((pairs) => pairs.some(([x, y]) => x === lower(a!) && y === b));
  assert.ok(relation, `no relation holds ${a} : ${b}`);
  return relation.find(([x]) => x === lower(c!))![1];
}

function solveSemantic(it: DiagnosticItemFields): string[] {
  // The set of right answers: every other choice must be outside it.
  const q = it.question;
  let m: RegExpExecArray | null;
  if ((m = /^What is the opposite of (\w+)\?$/.exec(q))) {
    const pair = OPPOSITES.find(([x, y]) => x.includes(m![1]!) || y.includes(m![1]!))!;
    return [...(pair[0].includes(m[1]!) ? pair[1] : pair[0])];
  }
  if ((m = /^Which word means the same as (\w+)\?$/.exec(q))) {
    return OPPOSITES.flat()
      .find((concept) => concept.includes(m![1]!))!
      .filter((w) => w !== m![1]);
  }
  if ((m = /^What kind of thing is (.+)\?$/.exec(q))) return Object.keys(KINDS_OF).filter((k) => KINDS_OF[k]!.includes(m![1]!));
  const [piece] = match(/^A (\w+) is part of what\?$/, q);
  return PART_OF.filter(([p]) => p === piece).map(([, whole]) => whole);
}

function solveContextual(it: DiagnosticItemFields): string {
  const owned = [...it.context.matchAll(/(\w+) has a (\w+) (\w+)\./g)].map((m) => ({ who: m[1]!, color: m[2]!, thing: m[3]! }));
  const jobs = new Map([...it.context.matchAll(/(\w+) works as a (\w+)\./g)].map((m) => [m[1]!, m[2]!] as const));
  let m: RegExpExecArray | null;
  if ((m = /^What color is (\w+)'s (\w+)\?$/.exec(it.question))) return owned.find((o) => o.who === m![1] && o.thing === m![2])!.color;
  if ((m = /^Who has the (\w+) (\w+)\?$/.exec(it.question))) return owned.find((o) => o.color === m![1] && o.thing === m![2])!.who;
  const [who] = match(/^What is (\w+)'s job\?$/, it.question);
  return jobs.get(who!)!;
}

function solveKnowledge(it: DiagnosticItemFields): string {
  const q = it.question;
  const rules: [RegExp, (x: string) => string | undefined][] = [
    [/^What is the capital of (.+)\?$/, (x) => COUNTRIES.find((c) => c[0] === x)?.[1]],
    [/^Which country has the capital (.+)\?$/, (x) => COUNTRIES.find((c) => c[1] === x)?.[0]],
    [/^On which continent is (.+)\?$/, (x) => COUNTRIES.find((c) => c[0] === x)?.[2]],
    [/^What is the chemical symbol for (.+)\?$/, (x) => ELEMENTS.find((e) => e[0] === x)?.[1]],
    [/^Which element has the symbol (.+)\?$/, (x) => ELEMENTS.find((e) => e[1] === x)?.[0]],
    [/^Who wrote (.+)\?$/, (x) => BOOKS.find((b) => b[0] === x)?.[1]],
    [/^Which book did (.+) write\?$/, (x) => BOOKS.find((b) => b[1] === x)?.[0]],
    [/^Who painted (.+)\?$/, (x) => PAINTINGS.find((p) => p[0] === x)?.[1]],
  ];
  for (const [re, solve] of rules) {
    const m = re.exec(q);
    if (m) {
      const answer = solve(m[1]!);
      assert.ok(answer, q);
      const asWord = new RegExp(`\\b${answer.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`);
      assert.ok(!asWord.test(it.context), `the scene gives the answer away: ${it.context}`);
      return answer;
    }
  }
  assert.fail(`unknown knowledge question: ${q}`);
}

function solveCommonsense(it: DiagnosticItemFields): string {
  const [name, rest] = match(/^(\w+) (.+)$/, it.context);
  const effectOf = (row: (typeof CAUSAL)[number]) => row.effect.replace("{name}", name!);
  const byCause = CAUSAL.find((row) => `${row.cause}.` === rest);
  if (byCause) return effectOf(byCause);
  const byEffect = CAUSAL.find((row) => effectOf(row) === it.context);
  assert.ok(byEffect, it.context);
  return `${name} ${byEffect.cause}.`;
}

const SOLVERS: Record<string, (it: DiagnosticItemFields) => string | string[]> = {
  quantitative: solveQuantitative,
  temporal: solveTemporal,
  spatial: solveSpatial,
  deductive: solveDeductive,
  inductive: solveInductive,
  analogical: solveAnalogical,
  semantic: solveSemantic,
  contextual: solveContextual,
  knowledge: solveKnowledge,
  commonsense: solveCommonsense,
};

// ---------------------------------------------------------------------------------------------
// The type of a choice, per generator: every choice of an item must have the answer's type.

const words = (values: Iterable<string>) => new Set(values);
const TYPES: Record<string, (it: DiagnosticItemFields) => Set<string> | RegExp> = {
  quantitative: () => /^\d+$/,
  temporal: (it) => (it.question.startsWith("In which month") ? words(MONTH_NAMES) : words(DAYS)),
  spatial: (it) => (it.context.startsWith("The ") ? words(Object.values(TABLE_WORD)) : words(Object.values(COMPASS_WORD))),
  deductive: (it) => words(choicePool(it)),
  inductive: (it) =>
    it.context.startsWith("The letters")
      ? /^[a-z]$/
      : words(["star", "moon", "sun", "tree", "fish", "bird", "ship", "rock", "leaf", "frog", "ring", "wave"]),
  analogical: (it) => {
    const relation = Object.values(ANALOGY_RELATIONS).find((pairs) => pairs.some(([, y]) => y === it.choices[it.answer]))!;
    return words(relation.flat());
  },
  semantic: (it) => {
    if (it.question.startsWith("What kind")) return words(Object.keys(KINDS_OF));
    if (it.question.startsWith("A ")) return words(PART_OF.map(([, w]) => w));
    return words(OPPOSITES.flat(2));
  },
  contextual: (it) =>
    it.question.startsWith("Who")
      ? words(NAMES.contextual)
      : it.question.endsWith("job?")
        ? words([
            "baker",
            "nurse",
            "pilot",
            "farmer",
            "tailor",
            "judge",
            "miner",
            "chef",
            "guard",
            "clerk",
            "dancer",
            "singer",
            "potter",
            "barber",
            "plumber",
          ])
        : words(["red", "blue", "green", "pink", "brown", "black", "white", "gray", "yellow", "purple"]),
  knowledge: (it) => {
    const columns: (readonly string[])[] = [
      COUNTRIES.map((c) => c[0]),
      COUNTRIES.map((c) => c[1]),
      CONTINENTS,
      ELEMENTS.map((e) => e[0]),
      ELEMENTS.map((e) => e[1]),
      BOOKS.map((b) => b[0]),
      BOOKS.map((b) => b[1]),
      PAINTINGS.map((p) => p[1]),
    ];
    return words(columns.find((col) => col.includes(it.choices[it.answer]!))!);
  },
  commonsense: (it) => {
    const name = it.context.split(" ")[0]!;
    const isCause = it.choices[it.answer]!.startsWith(`${name} `) && CAUSAL.some((r) => it.choices[it.answer] === `${name} ${r.cause}.`);
    return words(CAUSAL.map((r) => (isCause ? `${name} ${r.cause}.` : r.effect.replace("{name}", name))));
  },
};

/** Deductive choices: colours, skills or actions, whichever the answer is. */
function choicePool(it: DiagnosticItemFields): string[] {
  const pools = [
    ["furry", "spotted", "striped", "scaly", "fluffy", "shiny", "bumpy", "smooth", "slimy", "hairy"],
    ["swim", "fly", "climb", "dig", "jump", "sing", "glow", "hide"],
    ["reads", "swims", "runs", "sleeps", "paints", "cooks", "sings", "dances", "skates", "knits"],
  ];
  return pools.find((p) => p.includes(it.choices[it.answer]!))!;
}

// ---------------------------------------------------------------------------------------------

test("there is one generator per ability of the paper, found by its name or slug", () => {
  assert.deepEqual(Object.keys(GENERATORS).sort(), [...PAPER_ABILITIES].sort());
  for (const g of ALL_GENERATORS) {
    assert.equal(GENERATORS[g.ability], g);
    for (const name of [g.ability, g.ability.toUpperCase(), g.slug]) {
      const found = findGenerator(name);
      assert.ok("generator" in found && found.generator === g, name);
    }
  }
  const typo = findGenerator("Spatial Reasonng");
  assert.ok("error" in typo && /did you mean `Spatial Reasoning`/.test(typo.error));
  const slugTypo = findGenerator("spatal");
  assert.ok("error" in slugTypo && /did you mean `spatial`/.test(slugTypo.error));
  assert.ok("error" in findGenerator("Abductive Reasoning"));
  assert.equal(new Set(ALL_GENERATORS.map((g) => g.slug)).size, 10);
});

test("the same seed gives the same items; another seed other items; alone or all ten together", () => {
  for (const g of ALL_GENERATORS) {
    assert.deepEqual(generateItems(g, { n: 50, seed: 1 }), itemsOf(g).slice(0, 50), `${g.slug}: a prefix of the same seed's stream`);
    const other = generateItems(g, { n: 50, seed: 2 });
    assert.ok(other.filter((it, i) => it.question === itemsOf(g)[i]!.question && it.context === itemsOf(g)[i]!.context).length < 5, g.slug);
  }
  const together = generateAbilities(ALL_GENERATORS, { n: 30, seed: 1 });
  assert.deepEqual(
    together,
    ALL_GENERATORS.flatMap((g) => itemsOf(g).slice(0, 30)),
  );
  assert.equal(new Set(together.map((it) => it.id)).size, together.length, "ids are unique across abilities");
});

test("every label is right: each answer re-derived from the item's text", () => {
  for (const g of ALL_GENERATORS) {
    const solve = SOLVERS[g.slug]!;
    for (const it of itemsOf(g).slice(0, 400)) {
      const solved = solve(it);
      const right = Array.isArray(solved) ? solved : [solved];
      const where = `${g.slug}: ${JSON.stringify(it)}`;
      assert.ok(right.includes(it.choices[it.answer]!), `${where}: the answer should be ${right.join(" or ")}`);
      assert.equal(it.choices.filter((c) => right.includes(c)).length, 1, `${where}: exactly one choice is right`);
    }
  }
});

test("every template of every generator is drawn", () => {
  for (const g of ALL_GENERATORS) {
    const seen = new Set(itemsOf(g).map((it) => it.meta?.template));
    assert.deepEqual([...seen].sort(), [...g.templates].sort(), g.slug);
  }
});

test("answer positions are balanced: each position within one of an equal share", () => {
  for (const g of ALL_GENERATORS) {
    const counts = [0, 0, 0, 0];
    for (const it of itemsOf(g)) {
      assert.equal(it.choices.length, 4, `${g.slug} items have four choices`);
      counts[it.answer]!++;
    }
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `${g.slug}: ${counts.join(", ")}`);
  }
});

test("wrong choices are distinct and of the answer's type", () => {
  for (const g of ALL_GENERATORS) {
    for (const it of itemsOf(g)) {
      const folded = it.choices.map((c) => c.trim().toLowerCase());
      assert.equal(new Set(folded).size, it.choices.length, `${g.slug}: ${JSON.stringify(it.choices)}`);
      const type = TYPES[g.slug]!(it);
      for (const c of it.choices) {
        const ok = type instanceof RegExp ? type.test(c) : type.has(c);
        assert.ok(ok, `${g.slug}: choice ${JSON.stringify(c)} is not of the answer's type in ${JSON.stringify(it)}`);
      }
    }
  }
});

test("2000 items of each generator, and all ten in one file, pass the dataset checks without a diagnostic", () => {
  for (const g of ALL_GENERATORS) {
    const { items, problems } = checkDiagnosticDataset(`${g.slug}.diag.jsonl`, toJsonl(itemsOf(g)));
    assert.deepEqual(
      problems.map((d) => `${d.line}: ${d.message}`),
      [],
      g.slug,
    );
    assert.equal(items.length, N);
  }
  const all = ALL_GENERATORS.flatMap((g) => itemsOf(g));
  const { problems } = checkDiagnosticDataset("all.diag.jsonl", toJsonl(all));
  assert.deepEqual(
    problems.map((d) => `${d.line}: ${d.message}`),
    [],
  );
});

test("excluded items never come back, and a generator says when it runs out of distinct items", () => {
  const g = GENERATORS["Analogical Reasoning"];
  const exclude = new Set(itemsOf(g).slice(0, 500).map(itemKey));
  const other = generateItems(g, { n: 300, seed: 7, exclude });
  assert.ok(other.every((it) => !exclude.has(itemKey(it))));
  const repeated = generateItems(g, { n: 500, seed: 7, exclude, distinct: false });
  assert.ok(repeated.every((it) => !exclude.has(itemKey(it))));

  const tiny: AbilityGenerator = {
    ability: "Spatial Reasoning",
    slug: "tiny",
    summary: "three items",
    templates: ["t"],
    draft: (rng) => ({ template: "t", context: "", question: `Which is ${rng.int(1, 3)}?`, answer: "yes", distractors: ["no"] }),
  };
  assert.equal(generateItems(tiny, { n: 3, seed: 1 }).length, 3);
  assert.throws(() => generateItems(tiny, { n: 4, seed: 1 }), GeneratorCapacityError);
  assert.equal(generateItems(tiny, { n: 10, seed: 1, distinct: false }).length, 10);
  assert.throws(() => generateItems(tiny, { n: 1, seed: -1 }), RangeError);
});

test("each generator names people from its own pool only, so no two abilities share a name", () => {
  const pools = Object.entries(NAMES) as [string, readonly string[]][];
  const everyName = pools.flatMap(([, names]) => names);
  assert.equal(new Set(everyName).size, everyName.length, "a name is in two pools");
  for (const g of ALL_GENERATORS) {
    const own = new Set<string>((NAMES as Record<string, readonly string[]>)[g.slug] ?? []);
    const used = new Set(itemsOf(g).flatMap((it) => [it.context, it.question, ...it.choices].join(" ").match(/\b[A-Z][a-z]+\b/g) ?? []));
    const foreign = [...used].filter((w) => everyName.includes(w) && !own.has(w));
    assert.deepEqual(foreign, [], `${g.slug} uses names of another pool`);
  }
});
