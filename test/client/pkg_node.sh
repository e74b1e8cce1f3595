#!/bin/bash
# pkg_node.sh — the npm packages as a user installs them:
# tool/pkg/mknpm.sh packs colvec-VERSION.tgz and colvec-linux-x64-VERSION.tgz
# from the built extension, `npm install` puts both into a fresh project,
# and node runs README's Node example as written (through colvec.load(db)
# with better-sqlite3) and checks getLoadablePath(), the ES module entry
# point and the error on a platform with no prebuilt binary.
#
# better-sqlite3@12 compiles its native addon when installed (minutes), so it
# is installed once into a cache shared with test/client/node_limit.sh
# (tool/lib.sh, node_better_sqlite3) and found through NODE_PATH; the
# colvec packages are installed fresh into the project each run.
#
# Environment: COLVEC_EXT (the extension, default ../build/colvec.so next to
# this folder), COLVEC_TESTDIR (scratch folder, default /tmp).
# Exit status: 0 passed, 1 failed, 77 (automake SKIP) without node/npm or
# when an install fails (a failure under CI=true).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
base=${COLVEC_TESTDIR:-/tmp}
work=$base/pkg_node
preload=${LD_PRELOAD:-}
unset LD_PRELOAD

prog=pkg_node hint="tool/install-deps.sh"
. "$top/tool/lib.sh" # missing: a skip, or a failure under CI=true
fail() { echo "FAIL: $*"; exit 1; }

command -v node >/dev/null 2>&1 || missing "node not found"
command -v npm >/dev/null 2>&1 || missing "npm not found"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) plat=linux-x64 ;;
  Linux-aarch64) plat=linux-arm64 ;;
  *) echo "SKIP: no npm platform package for $(uname -s) $(uname -m)"; exit 77 ;;
esac

# better-sqlite3, shared with node_limit.sh (tool/lib.sh).
node_better_sqlite3
case $? in
  0) ;;
  1) missing "npm install better-sqlite3@12 failed" ;;
  *) missing "better-sqlite3 installed but does not load" ;;
esac

rm -rf "$work"
mkdir -p "$work/project" || fail "cannot create $work"
mapfile -t tgz < <("$top/tool/pkg/mknpm.sh" "$work/dist" "$plat=$ext") ||
  fail "mknpm.sh failed"
[ "${#tgz[@]}" -eq 2 ] || fail "mknpm.sh wrote ${#tgz[@]} tarballs, not 2"
echo "built $(basename "${tgz[0]}") $(basename "${tgz[1]}")"
cd "$work/project" || exit 1
echo '{ "name": "colvec-user", "version": "1.0.0", "private": true }' >package.json
npm install --no-audit --no-fund "${tgz[@]}" >npm-install.log 2>&1 ||
  { tail -20 npm-install.log; fail "npm install of the tarballs failed"; }
[ -f "node_modules/colvec-$plat/colvec.so" ] || fail "colvec-$plat has no colvec.so"
echo "ok npm install ${tgz[*]##*/}"

export NODE_PATH="$node_modules"
sed -n '/<!-- node-example -->/,/<!-- \/node-example -->/p' "$top/README.md" |
  sed -n '/^```js$/,/^```$/p' | sed '1d;$d' >readme_example.js
[ -s readme_example.js ] || fail "README.md has no node-example block"
LD_PRELOAD=$preload node readme_example.js >readme_example.out 2>&1 ||
  { cat readme_example.out; fail "README's Node example failed"; }
grep -q "rowid: 1, tag: 'a'" readme_example.out ||
  { cat readme_example.out; fail "README's Node example did not find row 1"; }
echo "ok README's Node example"

cat >check.mjs <<'JS'
import assert from "node:assert/strict";
import path from "node:path";
import { createRequire } from "node:module";
import { getLoadablePath, load, platforms } from "colvec";
// better-sqlite3 comes through NODE_PATH, which only require() reads.
const Database = createRequire(import.meta.url)("better-sqlite3");
// The packaged binary, installed in this project.
const p = getLoadablePath();
assert.ok(p.startsWith(path.resolve("node_modules")), p);
const db = new Database(":memory:");
load(db);
db.exec("CREATE VIRTUAL TABLE t USING colvec(e float[2], c integer)");
const ins = db.prepare("INSERT INTO t(rowid, e, c) VALUES (?, ?, ?)");
for (let i = 1; i <= 100; i++) ins.run(i, `[${i}, ${i % 7}]`, i % 2);
const got = db.prepare("SELECT rowid FROM t WHERE e MATCH '[40.2, 5]' AND k = 2 AND c = 1").all();
assert.deepEqual(got.map((r) => r.rowid), [41, 39]);
assert.throws(() => load({}), /loadExtension/);
assert.deepEqual(platforms, ["linux-x64", "linux-arm64", "win32-x64"]);
console.log("ok");
JS
LD_PRELOAD=$preload node check.mjs || fail "check.mjs failed"
# A platform without a prebuilt binary: the error names those that have one.
cat >noplat.cjs <<'JS'
Object.defineProperty(process, "platform", { value: "darwin" });
const colvec = require("colvec");
try {
  colvec.getLoadablePath();
  console.log("no error");
} catch (e) {
  console.log(e.message);
}
JS
out=$(node noplat.cjs)
case $out in
  *"no prebuilt binary for darwin-"*"linux-x64, linux-arm64, win32-x64"*) ;;
  *) fail "on darwin getLoadablePath() said: $out" ;;
esac
echo "ok getLoadablePath(), ESM import, KNN, the no-binary error"
echo "PASS: pkg_node"
