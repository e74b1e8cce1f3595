// mkdemo.mjs — writes the demo page's data (demo/data.json): a vocabulary
// of word vectors and a few thousand product titles with their vectors and
// a category, all computed here, deterministically (no model, no download).
//
// Word vectors: each word of a topic is its topic's vector plus a smaller
// vector of its own, so words of one topic ("sneaker", "boot", "running")
// lie near each other; colours and adjectives are vectors of their own,
// shorter. A title's vector is the normalised sum of its words' vectors, and
// so is a typed query's: a query for "running shoes" finds trainers and
// sneakers without sharing a word with them.
//
// Usage: node tool/browser/mkdemo.mjs OUTFILE
import { writeFileSync } from "node:fs";

const DIM = 48;
const ROWS = 3000;
const TOPICS = {
  footwear: ["shoe", "shoes", "sneaker", "sneakers", "boot", "boots", "sandal",
    "sandals", "trainers", "running", "heels", "loafers", "slippers"],
  outerwear: ["jacket", "coat", "parka", "raincoat", "windbreaker", "anorak",
    "fleece", "rain", "winter", "puffer"],
  tops: ["shirt", "tshirt", "blouse", "sweater", "hoodie", "polo", "cardigan",
    "jumper", "tank"],
  bags: ["bag", "backpack", "handbag", "tote", "purse", "satchel", "duffel",
    "wallet", "luggage"],
  kitchen: ["pan", "pot", "knife", "kettle", "skillet", "wok", "saucepan",
    "cookware", "cooking"],
  audio: ["headphones", "earbuds", "speaker", "headset", "soundbar",
    "earphones", "wireless", "bluetooth", "audio"],
};
const MODIFIERS = ["red", "blue", "black", "white", "green", "grey", "brown",
  "classic", "light", "heavy", "premium", "cheap", "small", "large", "new",
  "vintage", "sport", "leather", "cotton", "steel"];

// A deterministic generator (mulberry32) and a normal deviate from it.
let seed = 20261204;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function gauss() {
  return Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
}
function randVec(scale) {
  return Array.from({ length: DIM }, () => gauss() * scale);
}
function normalize(v) {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
const round = (v) => v.map((x) => Math.round(x * 1e4) / 1e4);

const words = {};
for (const [topic, list] of Object.entries(TOPICS)) {
  const t = randVec(1);
  for (const w of list) {
    const own = randVec(0.45);
    words[w] = round(normalize(t.map((x, i) => x + own[i])));
  }
}
for (const w of MODIFIERS) words[w] = round(randVec(0.25));

const topics = Object.keys(TOPICS);
const docs = [];
for (let id = 1; id <= ROWS; id++) {
  const category = topics[Math.floor(rand() * topics.length)];
  const nouns = TOPICS[category];
  const title = [
    MODIFIERS[Math.floor(rand() * MODIFIERS.length)],
    MODIFIERS[Math.floor(rand() * MODIFIERS.length)],
    nouns[Math.floor(rand() * nouns.length)],
  ];
  if (rand() < 0.5) title.push(nouns[Math.floor(rand() * nouns.length)]);
  const sum = new Array(DIM).fill(0);
  for (const w of title) words[w].forEach((x, i) => (sum[i] += x));
  docs.push({ id, title: title.join(" "), category, vec: round(normalize(sum)) });
}
writeFileSync(process.argv[2], JSON.stringify({ dim: DIM, words, docs }));
console.log(`mkdemo: ${docs.length} titles, ${Object.keys(words).length} words, ${DIM} dimensions`);
