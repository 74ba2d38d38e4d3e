// Word lists several generators share. Short words on purpose: the demo model reads bytes, and
// every byte of an item is work for it.

/** First names, all distinct and none of them a word of another list. */
export const NAMES = [
  "Ana", "Ben", "Cal", "Dan", "Eva", "Fay", "Gus", "Hal", "Ida", "Jay", "Kim", "Leo", "Mia", "Ned", "Oli", "Pam",
  "Raj", "Sam", "Tia", "Uma", "Val", "Wes", "Zoe", "Amy", "Bob", "Cleo", "Dev", "Eli", "Finn", "Gia", "Hugo", "Ivy",
  "Jon", "Kai", "Lou", "Max", "Nia", "Omar", "Pia", "Rex", "Sue", "Ted", "Una", "Vic", "Yui", "Zac",
] as const;

/** Colours that take "a" (not "an") before them. */
export const COLORS = ["red", "blue", "green", "pink", "brown", "black", "white", "gray", "yellow", "purple"] as const;

export const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;

/** "one" .. "nine", for counts written as words. */
export const NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"] as const;

/** Names of `count` distinct people. */
export function distinctNames(rng: { sample<T>(values: readonly T[], count: number): T[] }, count: number): string[] {
  return rng.sample(NAMES, count);
}
