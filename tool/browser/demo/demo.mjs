// The demo page: 3,000 product titles with vectors shipped in data.json
// are loaded once into a colvec table (kept in IndexedDB across reloads);
// a typed query becomes a vector from the shipped word vectors, and a KNN
// with an optional category filter answers it. With ?selftest the page
// checks itself and writes the results as JSON into #selftest.
import { open } from "./colvec.mjs";

const $ = (id) => document.getElementById(id);

// The vector of text `q`: the normalised sum of its known words' vectors
// (null when no word is known).
function embed(data, q) {
  const sum = new Array(data.dim).fill(0);
  let n = 0;
  for (const w of q.toLowerCase().split(/[^a-z]+/)) {
    const v = data.words[w];
    if (!v) continue;
    v.forEach((x, i) => (sum[i] += x));
    n++;
  }
  if (!n) return null;
  const norm = Math.hypot(...sum);
  return sum.map((x) => x / norm);
}

// The k nearest rows to vector v (category filter when given).
function search(db, v, category, k = 10) {
  const sql =
    "SELECT rowid AS id, title, category, distance FROM products " +
    "WHERE embedding MATCH ? AND k = ?" + (category ? " AND category = ?" : "");
  const params = [JSON.stringify(v), k];
  if (category) params.push(category);
  return db.exec(sql, params);
}

// Exact cosine top k over the shipped vectors, in JavaScript.
function bruteForce(data, v, k) {
  const dist = (a) => 1 - a.reduce((s, x, i) => s + x * v[i], 0);
  return data.docs
    .map((d) => [dist(d.vec), d.id])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .slice(0, k)
    .map((x) => x[1]);
}

async function main() {
  const data = await (await fetch("data.json")).json();
  const db = await open("demo.db");
  const have = db.exec(
    "SELECT count(*) AS n FROM sqlite_master WHERE name = 'products'"
  )[0].n;
  if (!have) {
    db.exec(
      "CREATE VIRTUAL TABLE products USING colvec(" +
        `embedding float[${data.dim}] distance_metric=cosine, category text, title text)`
    );
    db.exec("BEGIN");
    for (const d of data.docs) {
      db.exec(
        "INSERT INTO products(rowid, embedding, category, title) VALUES (?, ?, ?, ?)",
        [d.id, JSON.stringify(d.vec), d.category, d.title]
      );
    }
    db.exec("COMMIT");
  }
  db.exec("CREATE TABLE IF NOT EXISTS visits(at TEXT)");
  db.exec("INSERT INTO visits VALUES (datetime('now'))");
  await db.save();
  const visits = db.exec("SELECT count(*) AS n FROM visits")[0].n;
  const rows = db.exec("SELECT count(*) AS n FROM products")[0].n;
  const version = db.exec("SELECT colvec_version() AS v")[0].v;
  $("status").textContent =
    `colvec ${version}: ${rows} products, ` +
    (db.persistent
      ? `kept in this browser's IndexedDB (visit ${visits})`
      : "in memory only: this browser has no IndexedDB here");
  for (const c of [...new Set(data.docs.map((d) => d.category))].sort()) {
    $("cat").append(new Option(c, c));
  }
  $("f").onsubmit = (e) => {
    e.preventDefault();
    const v = embed(data, $("q").value);
    $("results").replaceChildren();
    if (!v) {
      $("results").append(Object.assign(document.createElement("li"),
        { textContent: "No known word in the query." }));
      return;
    }
    for (const r of search(db, v, $("cat").value)) {
      const li = document.createElement("li");
      li.innerHTML = `${r.title} <span class="d">${r.category}, ${r.distance.toFixed(3)}</span>`;
      $("results").append(li);
    }
  };
  if (new URLSearchParams(location.search).has("selftest")) {
    selftest(db, data, { rows, visits, version });
  }
}

// Checks the page's answers and writes them to #selftest as JSON.
function selftest(db, data, info) {
  const out = { ...info, persistent: db.persistent, topics: {}, ok: true };
  const expect = {
    "running shoes": "footwear", "winter coat": "outerwear",
    "wireless headphones": "audio", "cooking pan": "kitchen",
    "backpack tote": "bags", "hoodie sweater": "tops",
  };
  for (const [q, topic] of Object.entries(expect)) {
    const got = search(db, embed(data, q), "", 5).map((r) => r.category);
    out.topics[q] = got;
    if (!got.length || got.some((c) => c !== topic)) out.ok = false;
  }
  const filtered = search(db, embed(data, "red leather"), "bags", 10);
  out.filtered = filtered.map((r) => r.category);
  if (filtered.length !== 10 || filtered.some((r) => r.category !== "bags")) out.ok = false;
  let hit = 0, total = 0;
  for (let i = 0; i < 20; i++) {
    const v = data.docs[(i * 149) % data.docs.length].vec;
    const want = new Set(bruteForce(data, v, 10));
    for (const r of search(db, v, "", 10)) if (want.has(r.id)) hit++;
    total += 10;
  }
  out.recall = hit / total;
  if (out.recall < 0.95) out.ok = false;
  $("selftest").textContent = JSON.stringify(out);
  $("selftest").hidden = false;
  document.title = "selftest done";
}

main().catch((e) => {
  $("status").textContent = `Error: ${e.message}`;
  $("selftest").textContent = JSON.stringify({ ok: false, error: e.message });
  document.title = "selftest done";
});
