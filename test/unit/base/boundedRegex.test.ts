// A regular expression run with a time bound: the same results as the plain one for every use a
// tokenizer makes of it, and an error within its bound for patterns that backtrack
// catastrophically, whichever of them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BoundedRegExp, matchTimeBound, withinTime } from "../../../src/core/base/boundedRegex";

const TEXT = "Question: Is the sun a star?\nAnswer: yes, it's a star.  \n\n12 345 6789 café 東京 🙂";

test("every use gives what the plain pattern gives: match, matchAll, replace(All), split, search, exec, test", () => {
  for (const [source, flags] of [
    ["\\s+(?!\\S)|\\s+|\\p{L}+|\\p{N}{1,3}|[^\\s\\p{L}\\p{N}]+", "gu"],
    ["(\\p{L})(\\p{L}*)", "gu"],
    ["a", "u"],
  ] as const) {
    const plain = new RegExp(source, flags);
    const bounded = new BoundedRegExp(new RegExp(source, flags), () => new Error("timed out"));
    assert.deepEqual(TEXT.match(bounded), TEXT.match(plain));
    assert.deepEqual(TEXT.search(bounded), TEXT.search(plain));
    assert.deepEqual(TEXT.split(bounded), TEXT.split(plain));
    assert.deepEqual(TEXT.split(bounded, 3), TEXT.split(plain, 3));
    assert.equal(TEXT.replace(bounded, "<$&>"), TEXT.replace(plain, "<$&>"));
    if (flags.includes("g")) {
      assert.deepEqual([...TEXT.matchAll(bounded)], [...TEXT.matchAll(plain)]);
      assert.equal(TEXT.replaceAll(bounded, "_"), TEXT.replaceAll(plain, "_"));
      const steps: (string | undefined)[][] = [[], []];
      for (const [i, r] of [plain, bounded].entries()) {
        r.lastIndex = 0;
        for (let m = r.exec(TEXT); m; m = r.exec(TEXT)) steps[i]!.push([m.index, ...m].map(String).join("|"));
      }
      assert.deepEqual(steps[1], steps[0], "exec walks the text as the plain one does");
    }
    assert.equal(bounded.test(TEXT), new RegExp(source, flags).test(TEXT));
  }
});

test("a pattern that backtracks catastrophically throws its owner's error within its bound, whichever it is", () => {
  const text = "A train travels sixty kilometres in one hour and then it goes on for many more hours of travel!";
  const as = "a".repeat(40) + "!";
  for (const [source, subject] of [
    ["(a+)+$", as],
    ["(a|a)*$", as],
    ["(.*a){25}", as],
    ["(\\w+\\s?)*$", text],
    ["^(\\w+\\s?)*$", text],
    ["(\\s*\\w*)*#", text],
    ["(?:\\p{L}+\\s?)+\\d", text],
  ] as const) {
    const bounded = new BoundedRegExp(new RegExp(source, "gu"), (t) => new Error(`timed out on ${t.length} characters`));
    const start = performance.now();
    assert.throws(() => subject.match(bounded), /timed out on \d+ characters/, source);
    const ms = performance.now() - start;
    assert.ok(ms < matchTimeBound(subject) + 1500, `${source}: stopped after ${Math.round(ms)} ms`);
  }
});

test("the bound grows with the text, and a bound inside a bound is the outer one", () => {
  assert.equal(matchTimeBound(""), 1000);
  assert.equal(matchTimeBound("x".repeat(2_000_000)), 3000);
  assert.equal(
    withinTime(
      50,
      () =>
        withinTime(
          10_000,
          () => 42,
          () => new Error("inner"),
        ),
      () => new Error("outer"),
    ),
    42,
  );
  assert.throws(
    () =>
      withinTime(
        50,
        () =>
          withinTime(
            10_000,
            () => /(a+)+$/.test("a".repeat(40) + "!"),
            () => new Error("inner"),
          ),
        () => new Error("outer"),
      ),
    /outer/,
  );
});
