-- demo.sql — a tour of colvec in the sqlite3 shell. Run by tool/demo.sh:
--   sqlite3 <temporary database> -cmd '.load build/colvec' < tool/demo.sql
.bail off
.headers on
.mode box
.nullvalue NULL

.print
.print '== colvec is loaded'
-- The module and its SQL functions are loaded.
SELECT colvec_version() AS version;

.print
.print '== CREATE VIRTUAL TABLE items USING colvec(...)'
-- One vector column (8 dimensions, cosine distance) and two attribute
-- columns. New rows go to the delta (a shadow table, searched exactly);
-- compaction writes them into immutable segment files.
CREATE VIRTUAL TABLE items USING colvec(
  embedding float[8] distance_metric=cosine,
  category text,
  year integer
);

.print
.print '== INSERT 20 rows (vectors as JSON text)'
-- Vectors as JSON text (a little-endian float32 BLOB works as well).
-- The 8 dimensions loosely mean: sweet, sour, crunchy, wheels, engine,
-- fur, legs, wings.
INSERT INTO items(rowid, embedding, category, year) VALUES
  ( 1, '[0.9, 0.1, 0.8, 0,   0,   0,   0,   0  ]', 'fruit',   2019),
  ( 2, '[0.7, 0.6, 0.2, 0,   0,   0,   0,   0  ]', 'fruit',   2020),
  ( 3, '[0.8, 0.2, 0.1, 0,   0,   0,   0,   0  ]', 'fruit',   2021),
  ( 4, '[0.2, 0.9, 0.3, 0,   0,   0,   0,   0  ]', 'fruit',   2022),
  ( 5, '[0.6, 0.3, 0.9, 0,   0,   0,   0,   0  ]', 'fruit',   2023),
  ( 6, '[0.9, 0.5, 0.0, 0,   0,   0,   0,   0  ]', 'fruit',   2024),
  ( 7, '[0,   0,   0,   0.9, 0.9, 0,   0,   0  ]', 'vehicle', 2018),
  ( 8, '[0,   0,   0,   0.8, 0.1, 0,   0,   0  ]', 'vehicle', 2019),
  ( 9, '[0,   0,   0,   0.9, 0.7, 0,   0,   0.1]', 'vehicle', 2020),
  (10, '[0,   0,   0,   0.1, 0.9, 0,   0,   0.9]', 'vehicle', 2021),
  (11, '[0,   0,   0,   0.7, 0.8, 0,   0,   0  ]', 'vehicle', 2022),
  (12, '[0,   0,   0,   0.9, 0.2, 0,   0.1, 0  ]', 'vehicle', 2024),
  (13, '[0,   0,   0,   0,   0,   0.9, 0.8, 0  ]', 'animal',  2018),
  (14, '[0,   0,   0,   0,   0,   0.8, 0.9, 0  ]', 'animal',  2020),
  (15, '[0,   0,   0,   0,   0,   0.1, 0.4, 0.9]', 'animal',  2021),
  (16, '[0,   0,   0,   0,   0,   0.2, 0.3, 0.8]', 'animal',  2022),
  (17, '[0,   0,   0,   0,   0,   0.9, 0.4, 0  ]', 'animal',  2023),
  (18, '[0.1, 0,   0,   0,   0,   0.7, 0.8, 0  ]', 'animal',  2024),
  (19, '[0.5, 0.1, 0,   0,   0,   0.3, 0.4, 0.3]', NULL,      2024),
  (20, '[0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]', 'misc',    NULL);

.print
.print '== KNN: the 5 rows nearest to a "sweet and crunchy" query.'
-- KNN: the 5 rows nearest to a "sweet and crunchy" query.
SELECT rowid, category, year, round(distance, 4) AS distance
  FROM items
 WHERE embedding MATCH '[1, 0, 1, 0, 0, 0, 0, 0]' AND k = 5;

.print
.print '== Filtered KNN: category IN (...) AND year >= 2021'
-- Filtered KNN: the filters are applied during the search, so k rows
-- still come back when enough rows pass them.
SELECT rowid, category, year, round(distance, 4) AS distance
  FROM items
 WHERE embedding MATCH '[0, 0, 0, 0, 0, 0, 0, 1]' AND k = 3
   AND category IN ('animal', 'vehicle') AND year >= 2021;

.print
.print '== KNN parameters are hidden columns'
-- The search parameters are hidden columns, readable like any column.
SELECT rowid, round(distance, 4) AS distance, k, oversampling, rescore
  FROM items
 WHERE embedding MATCH '[0, 0, 0, 1, 1, 0, 0, 0]' AND k = 3
   AND oversampling = 4 AND rescore = 1;

.print
.print '== EXPLAIN QUERY PLAN of a filtered KNN'
-- The plan colvec chose (idxNum = columns read, idxStr = the arguments).
EXPLAIN QUERY PLAN
SELECT rowid FROM items
 WHERE embedding MATCH '[1, 0, 0, 0, 0, 0, 0, 0]' AND k = 3 AND year > 2020;

.print
.print '== An ordinary scan with pushed-down filters, and an aggregate.'
-- An ordinary scan with pushed-down filters, and an aggregate.
SELECT rowid, category, year FROM items
 WHERE year BETWEEN 2020 AND 2021 AND category IS NOT NULL;
SELECT category, count(*) AS n, min(year) AS first, max(year) AS last
  FROM items GROUP BY category ORDER BY category;

.print
.print '== Vectors read back as float32 BLOBs; colvec_to_json() prints them.'
-- Vectors read back as float32 BLOBs; colvec_to_json() prints them.
SELECT rowid, colvec_to_json(embedding) AS embedding FROM items WHERE rowid = 20;

.print
.print '== Distances as scalar functions.'
-- Distances as scalar functions.
SELECT colvec_distance_cosine('[1, 0]', '[1, 1]') AS cosine,
       colvec_distance_l2('[0, 0]', '[3, 4]') AS l2;

.print
.print '== UPDATE and DELETE, inside a transaction that is rolled back.'
-- UPDATE and DELETE, inside a transaction that is rolled back.
BEGIN;
UPDATE items SET category = 'dessert' WHERE rowid = 6;
DELETE FROM items WHERE category = 'vehicle';
SELECT count(*) AS rows_in_transaction FROM items;
ROLLBACK;
SELECT count(*) AS rows_after_rollback FROM items;

.print
.print "== 'optimize' and 'integrity-check'"
-- 'optimize' writes every row into one segment file (column-wise, with
-- int8 codes; segments of 2048 rows or more also get an HNSW graph, smaller
-- ones are searched exactly). 'integrity-check' verifies the delta, the
-- segment files and their checksums. Both are commands, fts5-style.
INSERT INTO items(items) VALUES ('optimize');
INSERT INTO items(items) VALUES ('integrity-check');
SELECT colvec_check('items') AS check_result;
SELECT segid, nrow FROM items_manifest;

.print
.print '== The same KNN query, now answered from the segment.'
-- The same KNN query, now answered from the segment.
SELECT rowid, category, round(distance, 4) AS distance
  FROM items
 WHERE embedding MATCH '[1, 0, 1, 0, 0, 0, 0, 0]' AND k = 3;

.print
.print '== Bad input: errors name the column and change nothing'
-- Bad input is refused with a message that names the column, and
-- changes nothing.
INSERT INTO items(embedding, category) VALUES ('[1, 2, 3]', 'short');
INSERT INTO items(embedding, year) VALUES ('[1, 0, 0, 0, 0, 0, 0, 0]', 'soon');
SELECT rowid FROM items WHERE embedding MATCH '[1, 0, 0, 0, 0, 0, 0, 0]';
SELECT count(*) AS rows_still FROM items;
