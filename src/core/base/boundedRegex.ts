// A regular expression from a user's file, run with a time bound. JavaScript's engine backtracks,
// and a pattern such as `(a+)+$` or `(\w+\s?)*$` takes exponential time on ordinary text, with no
// step limit to set. What does stop it is V8's termination of a script that runs past its
// `timeout` (node:vm), which interrupts a match in progress; every match, split and replace of a
// BoundedRegExp runs as such a script, and one that runs past its bound throws its owner's error.
// The bound is a second plus a millisecond per thousand characters: a match of an ordinary
// pattern takes a thousandth of that, one that backtracks catastrophically on a few dozen
// characters passes it within the second.
//
// The bound has a price (a watchdog thread per call, about a tenth of a millisecond), so a caller
// bounds the patterns it does not know, not those it has reason to trust.
import * as vm from "node:vm";

/** The time a match of `text` may take, in milliseconds. */
export function matchTimeBound(text: string): number {
  return 1000 + Math.ceil(text.length / 1000);
}

const context = vm.createContext({});
const callWork = new vm.Script("work()");
let working = false;

/** What `work` returns, or the error of `onTimeout` once it has run `ms` milliseconds. */
export function withinTime<T>(ms: number, work: () => T, onTimeout: () => Error): T {
  // a bound already running covers what runs inside it
  if (working) return work();
  let result: T | undefined;
  context.work = () => {
    result = work();
  };
  working = true;
  try {
    callWork.runInContext(context, { timeout: ms });
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") throw onTimeout();
    throw e;
  } finally {
    working = false;
    context.work = undefined;
  }
  return result as T;
}

/**
 * `regex` with every use bounded (withinTime, matchTimeBound): String's match, matchAll, replace,
 * replaceAll, split and search with it, and its own exec and test. `onTimeout` says what ran too
 * long, on which text.
 */
export class BoundedRegExp extends RegExp {
  readonly #plain: RegExp;
  readonly #onTimeout: (text: string) => Error;

  constructor(regex: RegExp, onTimeout: (text: string) => Error) {
    super(regex.source, regex.flags);
    this.#plain = new RegExp(regex.source, regex.flags);
    this.#onTimeout = onTimeout;
  }

  #run<T>(text: string, work: (plain: RegExp) => T): T {
    const plain = this.#plain;
    plain.lastIndex = this.lastIndex;
    try {
      return withinTime(
        matchTimeBound(text),
        () => work(plain),
        () => this.#onTimeout(text),
      );
    } finally {
      this.lastIndex = plain.lastIndex;
    }
  }

  override exec(text: string): RegExpExecArray | null {
    return this.#run(String(text), (plain) => plain.exec(String(text)));
  }

  override test(text: string): boolean {
    return this.#run(String(text), (plain) => plain.test(String(text)));
  }

  override [Symbol.match](text: string): RegExpMatchArray | null {
    return this.#run(text, (plain) => text.match(plain));
  }

  // Every match at once, in one bounded call: the native iterator would exec (and be bounded) once per match.
  override [Symbol.matchAll](text: string): RegExpStringIterator<RegExpMatchArray> {
    return this.#run(text, (plain) => [...text.matchAll(plain)])[Symbol.iterator]() as RegExpStringIterator<RegExpMatchArray>;
  }

  override [Symbol.replace](text: string, replacement: string | ((substring: string, ...args: unknown[]) => string)): string {
    return this.#run(text, (plain) => text.replace(plain, replacement as string));
  }

  override [Symbol.split](text: string, limit?: number): string[] {
    return this.#run(text, (plain) => text.split(plain, limit));
  }

  override [Symbol.search](text: string): number {
    return this.#run(text, (plain) => text.search(plain));
  }
}
