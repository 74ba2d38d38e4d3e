// The fact tables of the Long-term Knowledge generator, written for this project: capitals and
// continents, chemical symbols, authors of books and painters of paintings. Only facts without a
// second correct answer are listed (no country with two capitals, no country on two continents,
// one book per author), and no capital named after its country (Mexico City).

export type Continent = "Europe" | "Asia" | "Africa" | "South America" | "North America" | "Oceania";

export const CONTINENTS: readonly Continent[] = ["Europe", "Asia", "Africa", "South America", "North America", "Oceania"];

/** [country, capital, continent] */
export const COUNTRIES: readonly [string, string, Continent][] = [
  ["France", "Paris", "Europe"], ["Spain", "Madrid", "Europe"], ["Italy", "Rome", "Europe"], ["Germany", "Berlin", "Europe"],
  ["Portugal", "Lisbon", "Europe"], ["Greece", "Athens", "Europe"], ["Norway", "Oslo", "Europe"], ["Sweden", "Stockholm", "Europe"],
  ["Poland", "Warsaw", "Europe"], ["Austria", "Vienna", "Europe"], ["Ireland", "Dublin", "Europe"], ["Hungary", "Budapest", "Europe"],
  ["Japan", "Tokyo", "Asia"], ["China", "Beijing", "Asia"], ["Thailand", "Bangkok", "Asia"], ["Vietnam", "Hanoi", "Asia"],
  ["Iran", "Tehran", "Asia"], ["Nepal", "Kathmandu", "Asia"], ["Indonesia", "Jakarta", "Asia"], ["Pakistan", "Islamabad", "Asia"],
  ["Bangladesh", "Dhaka", "Asia"],
  ["Egypt", "Cairo", "Africa"], ["Kenya", "Nairobi", "Africa"], ["Ghana", "Accra", "Africa"], ["Nigeria", "Abuja", "Africa"],
  ["Ethiopia", "Addis Ababa", "Africa"], ["Morocco", "Rabat", "Africa"], ["Senegal", "Dakar", "Africa"],
  ["Peru", "Lima", "South America"], ["Chile", "Santiago", "South America"], ["Argentina", "Buenos Aires", "South America"],
  ["Colombia", "Bogota", "South America"], ["Ecuador", "Quito", "South America"], ["Brazil", "Brasilia", "South America"],
  ["Uruguay", "Montevideo", "South America"],
  ["Canada", "Ottawa", "North America"], ["Honduras", "Tegucigalpa", "North America"], ["Cuba", "Havana", "North America"],
  ["Jamaica", "Kingston", "North America"], ["Nicaragua", "Managua", "North America"],
  ["Australia", "Canberra", "Oceania"], ["New Zealand", "Wellington", "Oceania"], ["Fiji", "Suva", "Oceania"],
];

/** [element, symbol] */
export const ELEMENTS: readonly [string, string][] = [
  ["hydrogen", "H"], ["helium", "He"], ["lithium", "Li"], ["carbon", "C"], ["nitrogen", "N"], ["oxygen", "O"],
  ["fluorine", "F"], ["neon", "Ne"], ["sodium", "Na"], ["magnesium", "Mg"], ["aluminium", "Al"], ["silicon", "Si"],
  ["sulfur", "S"], ["chlorine", "Cl"], ["potassium", "K"], ["calcium", "Ca"], ["iron", "Fe"], ["copper", "Cu"],
  ["zinc", "Zn"], ["silver", "Ag"], ["tin", "Sn"], ["gold", "Au"], ["mercury", "Hg"], ["lead", "Pb"],
];

/** [book, author]: one book per author, titles of at most three words. */
export const BOOKS: readonly [string, string][] = [
  ["Hamlet", "Shakespeare"], ["Pride and Prejudice", "Austen"], ["Oliver Twist", "Dickens"], ["War and Peace", "Tolstoy"],
  ["Don Quixote", "Cervantes"], ["Moby-Dick", "Melville"], ["Nineteen Eighty-Four", "Orwell"], ["Frankenstein", "Mary Shelley"],
  ["The Odyssey", "Homer"], ["Jane Eyre", "Charlotte Bronte"], ["Crime and Punishment", "Dostoevsky"], ["Dracula", "Bram Stoker"],
  ["Ulysses", "James Joyce"], ["Les Miserables", "Victor Hugo"], ["Madame Bovary", "Flaubert"], ["The Trial", "Kafka"],
  ["The Great Gatsby", "Fitzgerald"], ["Treasure Island", "Stevenson"], ["Robinson Crusoe", "Defoe"],
  ["Gulliver's Travels", "Swift"], ["The Time Machine", "H. G. Wells"], ["Mrs Dalloway", "Virginia Woolf"],
  ["The Divine Comedy", "Dante"], ["Little Women", "Alcott"], ["The Hobbit", "Tolkien"],
];

/** [painting, painter] */
export const PAINTINGS: readonly [string, string][] = [
  ["the Mona Lisa", "Leonardo da Vinci"], ["The Starry Night", "Van Gogh"], ["Guernica", "Picasso"],
  ["The Night Watch", "Rembrandt"], ["The Scream", "Munch"], ["Girl with a Pearl Earring", "Vermeer"],
  ["The Birth of Venus", "Botticelli"], ["The Kiss", "Klimt"], ["The Persistence of Memory", "Dali"],
];
