// Word lists several generators share. Short words on purpose: the demo model reads bytes, and
// every byte of an item is work for it.

/**
 * First names, a pool of its own for each generator that names people. Names are the least
 * predictable words of an item, so they weigh heavily in the importance of its tokens; were the
 * pools shared, every ability's ranking would pick the same name-reading parameters and the
 * profile could not tell the abilities apart. All distinct, and none a word of another list.
 */
export const NAMES = {
  quantitative: ["Ana", "Ben", "Cal", "Dan", "Eva", "Fay", "Gus", "Hal", "Ida", "Jay", "Kim", "Leo", "Ada", "Bo", "Cy", "Di", "Ed", "Em", "Gwen", "Hope", "Iggy", "Jill", "Ken", "Liv"],
  contextual: ["Mia", "Ned", "Oli", "Pam", "Raj", "Sam", "Tia", "Uma", "Val", "Wes", "Zoe", "Amy", "Moe", "Nell", "Opal", "Pru", "Quin", "Rudy", "Sid", "Tess", "Uri", "Vin", "Wren", "Yoko"],
  deductive: ["Bob", "Cleo", "Dev", "Eli", "Finn", "Gia", "Huw", "Ivy", "Jon", "Kai", "Lou", "Max", "Boyd", "Cass", "Dirk", "Elsa", "Fern", "Glen", "Hank", "Iris", "Jack", "Kurt", "Lars", "Meg"],
  commonsense: ["Nia", "Omar", "Pia", "Rex", "Sue", "Ted", "Una", "Vic", "Yui", "Zac", "Abe", "Bea", "Cora", "Duke", "Enzo", "Faye", "Gabe", "Hale", "Ines", "Jade", "Kofi", "Lola", "Mark", "Nico"],
  knowledge: ["Cody", "Dora", "Emil", "Flo", "Gil", "Hana", "Ian", "Jude", "Kat", "Lena", "Milo", "Nora", "Olaf", "Poppy", "Reed", "Shay", "Theo", "Umi", "Vlad", "Willa", "Xavi", "Yael", "Zed", "Alma"],
  semantic: ["Otto", "Pete", "Rosa", "Saul", "Tom", "Ugo", "Vera", "Walt", "Xena", "Yves", "Zara", "Alf", "Brice", "Ciro", "Dee", "Edda", "Fitz", "Greta", "Hugh", "Ilse", "Joss", "Kirk", "Lyle", "Mavis"],
  spatial: ["Bert", "Carl", "Dina", "Ezra", "Fred", "Gina", "Hans", "Inez", "Joel", "Kira", "Luca", "Moss", "Noah", "Orla", "Pavel", "Rita", "Stan", "Tova", "Ula", "Vasco", "Wim", "Xia", "Yuri", "Zita"],
  temporal: ["Nils", "Owen", "Paz", "Rhea", "Seth", "Tara", "Ulla", "Vito", "Wyn", "Yara", "Zeke", "Ari", "Beck", "Cato", "Dag", "Ebba", "Fenn", "Gael", "Hedy", "Isak", "Juno", "Kees", "Lark", "Mads"],
} as const satisfies Record<string, readonly string[]>;

/** Colours that take "a" (not "an") before them. */
export const COLORS = ["red", "blue", "green", "pink", "brown", "black", "white", "gray", "yellow", "purple"] as const;

export const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;

