// limit.test.mjs — KNN through `ORDER BY distance LIMIT n`, which needs
// SQLite >= 3.41 (older SQLite never passes LIMIT to a virtual table), so it
// runs on the SQLite bundled with better-sqlite3 instead of Debian's.
//
// Run by test/client/node_limit.sh: `node --test limit.test.mjs` with NODE_PATH
// naming a folder that holds better-sqlite3 and COLVEC_EXT the extension.
// Every result is compared with a brute force in Float64 computed here, and
// every LIMIT query with the same query written with `k = n`.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// ESM imports ignore NODE_PATH; a CommonJS require honours it.
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const EXT = process.env.COLVEC_EXT;
const DIM = 4;
const NROW = 200;
const CATEGORIES = ['a', 'b', 'c', 'd'];
const TOL = 1e-5; // float32 kernels against a Float64 reference

// mulberry32: small seeded PRNG, so failures reproduce.
function makeRng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A random vector in [-1, 1)^DIM, rounded to float32 as stored.
function randVec(rng) {
  const v = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) v[i] = 2 * rng() - 1;
  return v;
}

// Float32Array -> BLOB (little-endian on every platform Node runs on here).
function blob(v) {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

// Euclidean distance in double precision.
function l2(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    s += d * d;
  }
  return Math.sqrt(s);
}

// The n nearest of `rows` (Map rowid -> {vec, category, year}) passing
// `keep`, as [{rowid, distance}], ties broken by rowid.
function bruteKnn(rows, q, n, keep = () => true) {
  const all = [];
  for (const [rowid, r] of rows) {
    if (keep(r)) all.push({ rowid, distance: l2(q, r.vec) });
  }
  all.sort((x, y) => x.distance - y.distance || x.rowid - y.rowid);
  return all.slice(0, n);
}

// Asserts that got (rows from SQL) equals the reference: same rowids in the
// same order, distances within TOL.
function assertSameKnn(got, want, what) {
  assert.deepEqual(got.map((r) => r.rowid), want.map((r) => r.rowid),
    `${what}: rowids`);
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i].distance - want[i].distance);
    assert.ok(d <= TOL * Math.max(1, want[i].distance),
      `${what}: distance of rowid ${want[i].rowid}: got ${got[i].distance}, ` +
      `want ${want[i].distance}`);
  }
}

// Opens a fresh database in its own folder with the colvec extension and
// the docs table. Returns {db, dir}; the caller closes db and removes dir.
function openDb() {
  const dir = fs.mkdtempSync(path.join(
    process.env.COLVEC_TESTDIR || os.tmpdir(), 'colvec-node-'));
  const db = new Database(path.join(dir, 'limit.db'));
  db.loadExtension(EXT);
  db.exec(`CREATE VIRTUAL TABLE docs USING colvec(
             embedding float[${DIM}], category text, year integer)`);
  return { db, dir };
}

// Builds a fresh database with NROW seeded rows (every 7th vector given as
// JSON text). With bSegment, compacts them into a segment ('optimize').
// Then inserts 20 more rows, deletes 10 of the first ones and moves 5
// vectors by UPDATE, so a query sees the delta and deletions (and with
// bSegment a segment and its tombstones). Returns {db, rows, dir}, rows a
// Map rowid -> {vec, category, year} of the live rows.
function buildDb(seed, bSegment) {
  const { db, dir } = openDb();
  try {
    return { db, rows: fillDb(db, seed, bSegment), dir };
  } catch (e) {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

// The work of buildDb on an open db; returns the rows Map.
function fillDb(db, seed, bSegment) {
  const rng = makeRng(seed);
  const rows = new Map();
  const ins = db.prepare(
    'INSERT INTO docs(rowid, embedding, category, year) VALUES (?, ?, ?, ?)');
  const add = (rowid) => {
    const vec = randVec(rng);
    const category = CATEGORIES[Math.floor(rng() * CATEGORIES.length)];
    const year = 2015 + Math.floor(rng() * 10);
    const value = rowid % 7 === 0 ? JSON.stringify(Array.from(vec)) : blob(vec);
    ins.run(rowid, value, category, year);
    rows.set(rowid, { vec, category, year });
  };
  db.transaction(() => { for (let i = 1; i <= NROW; i++) add(i); })();
  if (bSegment) db.exec("INSERT INTO docs(docs) VALUES ('optimize')");
  db.transaction(() => {
    for (let i = NROW + 1; i <= NROW + 20; i++) add(i);
    const del = db.prepare('DELETE FROM docs WHERE rowid = ?');
    for (let i = 3; i <= 30; i += 3) {
      del.run(i);
      rows.delete(i);
    }
    const upd = db.prepare('UPDATE docs SET embedding = ? WHERE rowid = ?');
    for (const i of [50, 51, 52, 53, 54]) {
      const vec = randVec(rng);
      upd.run(blob(vec), i);
      rows.get(i).vec = vec;
    }
  })();
  return rows;
}

// Why the segment phase cannot run ('optimize' not available yet), or null.
function segmentSkipReason() {
  const { db, dir } = openDb();
  try {
    db.exec("INSERT INTO docs(docs) VALUES ('optimize')");
    return null;
  } catch (e) {
    return `'optimize' unavailable: ${e.message}`;
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const KNN_K = (extra = '') =>
  `SELECT rowid, distance FROM docs WHERE embedding MATCH ? AND k = ?${extra}`;
const KNN_LIMIT = (extra = '', tail = '') =>
  `SELECT rowid, distance FROM docs WHERE embedding MATCH ?${extra}
     ORDER BY distance LIMIT ?${tail}`;

test('environment', (t) => {
  assert.ok(EXT, 'COLVEC_EXT must name the extension');
  const db = new Database(':memory:');
  const v = db.prepare('SELECT sqlite_version() AS v').get().v;
  db.close();
  t.diagnostic(`bundled sqlite_version() = ${v}`);
  const [maj, min] = v.split('.').map(Number);
  assert.ok(maj > 3 || (maj === 3 && min >= 41), `SQLite ${v} < 3.41`);
});

for (const bSegment of [false, true]) {
  const phase = bSegment ? 'segment + delta + tombstones' : 'delta only';
  const skip = bSegment && EXT ? segmentSkipReason() : null;
  describe(`LIMIT KNN (${phase})`, { skip: skip || false }, () => {
    let db, rows, dir, queries;
    before(() => {
      ({ db, rows, dir } = buildDb(bSegment ? 4242 : 1717, bSegment));
      const rng = makeRng(99);
      queries = [randVec(rng), randVec(rng), randVec(rng), randVec(rng)];
      queries.push(rows.get(40).vec); // a stored vector: distance 0
    });
    after(() => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('ORDER BY distance LIMIT n equals k = n and the brute force', () => {
      const stK = db.prepare(KNN_K());
      const stL = db.prepare(KNN_LIMIT());
      for (const [iq, q] of queries.entries()) {
        for (const n of [1, 5, 50, 500]) {
          const byK = stK.all(blob(q), n);
          const byL = stL.all(blob(q), n);
          const what = `query ${iq}, n = ${n}`;
          assert.deepEqual(byL, byK, `${what}: LIMIT vs k`);
          assertSameKnn(byL, bruteKnn(rows, q, n), what);
        }
        // LIMIT as a literal, not a parameter
        const lit = db.prepare(KNN_LIMIT().replace('LIMIT ?', 'LIMIT 7'))
          .all(blob(q));
        assertSameKnn(lit, bruteKnn(rows, q, 7), `query ${iq}, LIMIT 7`);
      }
      // 500 > row count: every live row comes back
      assert.equal(stL.all(blob(queries[0]), 500).length, rows.size);
    });

    test('LIMIT 5 OFFSET 3 equals rows 4..8 of k = 8', () => {
      const stK = db.prepare(KNN_K());
      const stL = db.prepare(KNN_LIMIT('', ' OFFSET ?'));
      for (const [iq, q] of queries.entries()) {
        const k8 = stK.all(blob(q), 8);
        const got = stL.all(blob(q), 5, 3);
        assert.deepEqual(got, k8.slice(3, 8), `query ${iq}`);
        assertSameKnn(got, bruteKnn(rows, q, 8).slice(3), `query ${iq}`);
      }
    });

    test('MATCH ? LIMIT 5 without ORDER BY returns the 5 nearest', () => {
      const st = db.prepare(
        'SELECT rowid, distance FROM docs WHERE embedding MATCH ? LIMIT 5');
      for (const [iq, q] of queries.entries()) {
        const got = st.all(blob(q));
        const sorted = [...got].sort((x, y) =>
          x.distance - y.distance || x.rowid - y.rowid);
        assertSameKnn(sorted, bruteKnn(rows, q, 5), `query ${iq}`);
      }
    });

    test("pushed filter: category = 'a' LIMIT 5", () => {
      const extra = " AND category = 'a'";
      const stK = db.prepare(KNN_K(extra));
      const stL = db.prepare(KNN_LIMIT(extra));
      const stCat = db.prepare('SELECT category FROM docs WHERE rowid = ?');
      for (const [iq, q] of queries.entries()) {
        const got = stL.all(blob(q), 5);
        assert.equal(got.length, 5, `query ${iq}: row count`);
        for (const r of got) {
          assert.equal(stCat.get(r.rowid).category, 'a', `rowid ${r.rowid}`);
        }
        assert.deepEqual(got, stK.all(blob(q), 5), `query ${iq}: LIMIT vs k`);
        assertSameKnn(got, bruteKnn(rows, q, 5, (r) => r.category === 'a'),
          `query ${iq}`);
      }
    });

    test('LIMIT 0 returns no rows; LIMIT > 100000 is a colvec error', () => {
      const q = blob(queries[0]);
      assert.deepEqual(db.prepare(KNN_LIMIT()).all(q, 0), []);
      assert.deepEqual(
        db.prepare(KNN_LIMIT().replace('LIMIT ?', 'LIMIT 0')).all(q), []);
      for (const sql of [KNN_LIMIT().replace('LIMIT ?', 'LIMIT 100001'),
        KNN_LIMIT().replace('LIMIT ?', 'LIMIT 5000000')]) {
        assert.throws(() => db.prepare(sql).all(q),
          (e) => /^colvec:/.test(e.message), sql);
      }
      assert.throws(() => db.prepare(KNN_LIMIT()).all(q, 100001),
        (e) => /^colvec:/.test(e.message));
      // LIMIT + OFFSET past the maximum
      assert.throws(() => db.prepare(KNN_LIMIT('', ' OFFSET ?')).all(q, 100000, 1),
        (e) => /^colvec:/.test(e.message));
    });

    test('unpushable filter (year + 0 = 2020): correct rows or an error naming k', (t) => {
      const sql = KNN_LIMIT(' AND year + 0 = 2020');
      for (const [iq, q] of queries.entries()) {
        let got, err;
        try {
          got = db.prepare(sql).all(blob(q), 5);
        } catch (e) {
          err = e;
        }
        if (err) {
          assert.match(err.message, /^colvec:/);
          assert.match(err.message, /\bk\b/, 'error must mention k');
          if (iq === 0) {
            t.diagnostic(`behaviour: error "${err.message}"`);
          }
        } else {
          assertSameKnn(got, bruteKnn(rows, q, 5, (r) => r.year === 2020),
            `query ${iq}`);
          if (iq === 0) {
            t.diagnostic('behaviour: correct rows');
          }
        }
      }
    });

    test('EXPLAIN QUERY PLAN shows a knn plan with LIMIT', (t) => {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${KNN_LIMIT()}`)
        .all(blob(queries[0]), 10).map((r) => r.detail).join('\n');
      t.diagnostic(plan);
      assert.match(plan, /knn/);
      assert.match(plan, /LIMIT/);
      const plan2 = db.prepare(`EXPLAIN QUERY PLAN ${KNN_LIMIT('', ' OFFSET ?')}`)
        .all(blob(queries[0]), 10, 2).map((r) => r.detail).join('\n');
      assert.match(plan2, /knn.*LIMIT.*OFFSET/);
      // ORDER BY distance is consumed: no temp b-tree sort
      assert.doesNotMatch(plan, /TEMP B-TREE/);
    });
  });
}
