// values.test.mjs — numeric text written to integer/real columns and text
// filter values on numeric columns, on the SQLite bundled with
// better-sqlite3 (3.53 and later take the value's database mutex in
// sqlite3_value_numeric_type, which crashed colvec when it converted a
// sqlite3_value_dup copy), plus empty IN lists over segments.
//
// Run by test/client/node_values.sh: `node --test values.test.mjs` with NODE_PATH
// naming a folder that holds better-sqlite3 and COLVEC_EXT the extension.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// ESM imports ignore NODE_PATH; a CommonJS require honours it.
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

let dir, db;

before(() => {
  dir = fs.mkdtempSync(path.join(
    process.env.COLVEC_TESTDIR || os.tmpdir(), 'colvec-node-values-'));
  db = new Database(path.join(dir, 'values.db'));
  db.loadExtension(process.env.COLVEC_EXT);
  db.exec(`
    CREATE VIRTUAL TABLE t USING colvec(e float[2], year integer, price real,
                                        tag text);
    CREATE TABLE p(year INTEGER, price REAL, tag TEXT);
    CREATE TABLE empty(x);
  `);
});

after(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('SQLite version under test', () => {
  const v = db.prepare('SELECT sqlite_version() AS v').get().v;
  console.log(`# SQLite ${v}`);
  assert.ok(v >= '3.41');
});

test('numeric text into integer and real columns', () => {
  const rows = [
    [1, '2020', '9.5', 'a'], [2, '  12  ', '1e3', 'b'], [3, '1e3', ' 7 ', 'c'],
    [4, '1.5e1', '.25', 'd'], [5, '-7', '-0.5', '5'],
  ];
  const ins = db.prepare(
    "INSERT INTO t(rowid, e, year, price, tag) VALUES (?, '[1,2]', ?, ?, ?)");
  const insP = db.prepare(
    'INSERT INTO p(rowid, year, price, tag) VALUES (?, ?, ?, ?)');
  for (const r of rows) { ins.run(...r); insP.run(...r); }
  const q = 'SELECT rowid, year, typeof(year) AS ty, price, typeof(price) AS tp FROM %s ORDER BY rowid';
  assert.deepEqual(db.prepare(q.replace('%s', 't')).all(),
                   db.prepare(q.replace('%s', 'p')).all());
  assert.throws(() => ins.run(9, '0x10', '1', 'x'),
                /colvec: year expects integer, got text '0x10'/);
  assert.throws(() => ins.run(9, '1', 'abc', 'x'),
                /colvec: price expects real, got text 'abc'/);
});

test('text filters on numeric columns over segments and the delta', () => {
  for (const phase of ['delta', 'segment']) {
    if (phase === 'segment') db.exec("INSERT INTO t(t) VALUES ('optimize')");
    for (const where of [
      "year = '2020'", "year IN ('12', ' 1000 ', 'x')", "price = '9.5'",
      "price > ' 1 '", "rowid = '3'", "rowid IN ('1', '4')", "tag = 5",
      "tag IN (5, 'a')", "year IN (SELECT x FROM empty)",
      "rowid IN (SELECT x FROM empty)", "tag IN (SELECT x FROM empty)",
    ]) {
      const sql = `SELECT rowid FROM %s WHERE ${where} ORDER BY rowid`;
      assert.deepEqual(db.prepare(sql.replace('%s', 't')).pluck().all(),
                       db.prepare(sql.replace('%s', 'p')).pluck().all(),
                       `${phase}: ${where}`);
    }
    const knn = db.prepare(
      "SELECT rowid FROM t WHERE e MATCH '[1,2]' AND k = 3 AND year = '1000'"
    ).pluck().all();
    assert.deepEqual(knn, [3], `${phase}: KNN with a text filter`);
    const none = db.prepare(
      "SELECT count(*) FROM t WHERE e MATCH '[1,2]' AND k = 3 AND year IN (SELECT x FROM empty)"
    ).pluck().get();
    assert.equal(none, 0, `${phase}: KNN with an empty IN list`);
  }
  assert.equal(db.prepare("SELECT colvec_check('t')").pluck().get(), 'ok');
});
