// Lexical relations written for the Semantic Relationship and Analogical Reasoning generators.
//
// Opposites and synonyms are stored as pairs of *concepts* (one or two words that mean the same),
// not of words: a wrong choice is drawn from other concepts only, so a question never has a second
// right answer hidden among its choices ("little" when asking for the opposite of "big"). Words
// with two senses that could make a second concept right are left out ("light": not heavy, not
// dark).

/** Pairs of opposite concepts; the words within a concept mean the same. */
export const OPPOSITES: readonly [readonly string[], readonly string[]][] = [
  [["big", "large"], ["small", "little"]],
  [["fast", "quick"], ["slow"]],
  [["happy", "glad"], ["sad", "unhappy"]],
  [["begin", "start"], ["end", "finish"]],
  [["hot"], ["cold"]],
  [["rich", "wealthy"], ["poor"]],
  [["easy", "simple"], ["hard", "difficult"]],
  [["wet"], ["dry"]],
  [["loud", "noisy"], ["quiet", "silent"]],
  [["clean"], ["dirty"]],
  [["strong"], ["weak"]],
  [["near"], ["far"]],
  [["full"], ["empty"]],
  [["brave", "bold"], ["scared", "afraid"]],
  [["shut", "closed"], ["open"]],
  [["buy", "purchase"], ["sell"]],
  [["high"], ["low"]],
  [["tall"], ["short"]],
  [["smart", "clever"], ["foolish", "silly"]],
  [["shout", "yell"], ["whisper"]],
  [["laugh"], ["cry"]],
  [["win"], ["lose"]],
  [["push"], ["pull"]],
  [["early"], ["late"]],
  [["bright"], ["dark", "dim"]],
  [["correct"], ["wrong"]],
  [["nice", "kind"], ["mean", "cruel"]],
  [["give"], ["take"]],
  [["sweet"], ["sour"]],
  [["cheap"], ["expensive", "costly"]],
  [["awake"], ["asleep"]],
  [["enter"], ["exit"]],
  [["friend", "pal"], ["enemy", "foe"]],
  [["remember", "recall"], ["forget"]],
  [["accept"], ["refuse", "reject"]],
  [["build"], ["destroy", "wreck"]],
  [["safe"], ["dangerous"]],
  [["polite"], ["rude"]],
  [["wide", "broad"], ["narrow"]],
  [["always"], ["never"]],
  [["inside"], ["outside"]],
];

/** Kinds of things and members of each, written with the article they take ("" for none). */
export const KINDS_OF: Record<string, readonly string[]> = {
  flower: ["a rose", "a tulip", "a daisy", "a lily"],
  tree: ["an oak", "a pine", "a maple", "a birch"],
  bird: ["an eagle", "a robin", "an owl", "a parrot", "a crow"],
  fish: ["a salmon", "a trout", "a shark", "a tuna"],
  tool: ["a hammer", "a saw", "a wrench", "a drill"],
  fruit: ["an apple", "a pear", "a plum", "a mango", "a banana"],
  vegetable: ["a carrot", "an onion", "a potato", "a cabbage"],
  instrument: ["a piano", "a violin", "a drum", "a flute", "a guitar"],
  vehicle: ["a bus", "a truck", "a tractor", "a van"],
  sport: ["tennis", "soccer", "golf", "hockey"],
  insect: ["an ant", "a bee", "a beetle", "a wasp"],
  drink: ["tea", "coffee", "juice", "milk"],
  furniture: ["a chair", "a sofa", "a bed", "a desk"],
  shape: ["a circle", "a square", "a triangle"],
};

/**
 * Parts and the one whole each belongs to. The wholes were chosen so that no part listed here is
 * also a part of another whole listed here (no "car" next to "bicycle" for "wheel").
 */
export const PART_OF: readonly [string, string][] = [
  ["petal", "flower"], ["stem", "flower"], ["page", "book"], ["fin", "fish"], ["gill", "fish"], ["beak", "bird"],
  ["feather", "bird"], ["branch", "tree"], ["bark", "tree"], ["roof", "house"], ["chimney", "house"], ["sleeve", "shirt"],
  ["lace", "shoe"], ["blade", "knife"], ["pedal", "bicycle"], ["wheel", "bicycle"], ["string", "guitar"], ["lens", "camera"],
  ["yolk", "egg"], ["crust", "bread"], ["sail", "ship"], ["mast", "ship"], ["bristle", "brush"], ["nib", "pen"],
];

/** Word pairs by relation, for analogies A : B :: C : D. Each relation maps its first words one to one. */
export const ANALOGY_RELATIONS: Record<string, readonly [string, string][]> = {
  young: [
    ["dog", "puppy"], ["cat", "kitten"], ["cow", "calf"], ["sheep", "lamb"], ["horse", "foal"], ["duck", "duckling"],
    ["bear", "cub"], ["frog", "tadpole"], ["hen", "chick"], ["pig", "piglet"], ["deer", "fawn"], ["goose", "gosling"],
    ["kangaroo", "joey"], ["owl", "owlet"],
  ],
  past: [
    ["go", "went"], ["eat", "ate"], ["see", "saw"], ["run", "ran"], ["swim", "swam"], ["write", "wrote"], ["sing", "sang"],
    ["drink", "drank"], ["buy", "bought"], ["fly", "flew"], ["take", "took"], ["give", "gave"], ["speak", "spoke"],
    ["drive", "drove"], ["think", "thought"], ["sleep", "slept"], ["teach", "taught"], ["catch", "caught"], ["ring", "rang"],
    ["throw", "threw"],
  ],
  plural: [
    ["mouse", "mice"], ["child", "children"], ["foot", "feet"], ["tooth", "teeth"], ["man", "men"], ["woman", "women"],
    ["person", "people"], ["ox", "oxen"], ["leaf", "leaves"], ["knife", "knives"], ["wolf", "wolves"], ["goose", "geese"],
    ["cactus", "cacti"], ["loaf", "loaves"],
  ],
  female: [
    ["king", "queen"], ["prince", "princess"], ["actor", "actress"], ["uncle", "aunt"], ["nephew", "niece"],
    ["brother", "sister"], ["father", "mother"], ["son", "daughter"], ["husband", "wife"], ["boy", "girl"],
    ["lion", "lioness"], ["rooster", "hen"], ["waiter", "waitress"],
  ],
  comparative: [
    ["good", "better"], ["bad", "worse"], ["big", "bigger"], ["small", "smaller"], ["fast", "faster"], ["hot", "hotter"],
    ["happy", "happier"], ["far", "farther"], ["tall", "taller"], ["old", "older"], ["easy", "easier"], ["thin", "thinner"],
    ["wet", "wetter"], ["busy", "busier"],
  ],
  home: [
    ["bee", "hive"], ["bird", "nest"], ["spider", "web"], ["dog", "kennel"], ["horse", "stable"], ["pig", "sty"],
    ["bear", "den"], ["rabbit", "burrow"], ["ant", "anthill"],
  ],
};
