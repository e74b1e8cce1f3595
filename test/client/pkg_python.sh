#!/bin/bash
# pkg_python.sh — the Python wheel as a user installs it: tool/pkg/mkwheel.sh
# packs the built extension, a fresh venv of Debian's python3 installs it
# with `pip install --no-index`, and a script loads it through
# colvec.load(conn) and runs a KNN, the way README's Python example does.
# Then the error of a Python whose sqlite3 module cannot load extensions
# (simulated: a connection object without enable_load_extension).
#
# Environment: COLVEC_EXT (the extension, default ../build/colvec.so next to
# this folder), COLVEC_TESTDIR (scratch folder, default /tmp).
# Exit status: 0 passed, 1 failed, 77 (automake SKIP) without python3-venv
# or python3-wheel (a failure under CI=true, where tool/install-deps.sh
# installs them).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
work=${COLVEC_TESTDIR:-/tmp}/pkg_python
py=/usr/bin/python3
preload=${LD_PRELOAD:-}
unset LD_PRELOAD

prog=pkg_python hint="tool/install-deps.sh"
. "$top/tool/lib.sh" # missing: a skip, or a failure under CI=true
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$py" ] || missing "no $py"
"$py" -c 'import venv, ensurepip' 2>/dev/null || missing "python3-venv is not installed"
"$py" -m wheel version >/dev/null 2>&1 || missing "python3-wheel is not installed"
[ -f "$ext" ] || { echo "ERROR: extension $ext not found (set COLVEC_EXT)"; exit 99; }

rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"
whl=$("$top/tool/pkg/mkwheel.sh" "$ext" "$work/dist") || fail "mkwheel.sh failed"
echo "built $(basename "$whl")"
"$py" -m venv "$work/venv" || fail "python3 -m venv failed"
"$work/venv/bin/pip" install --no-index --quiet "$whl" || fail "pip install --no-index $whl failed"
echo "ok pip install --no-index $(basename "$whl")"

cd "$work" || exit 1
# The README's Python example, as written there (between the markers).
sed -n '/<!-- python-example -->/,/<!-- \/python-example -->/p' "$top/README.md" |
  sed -n '/^```python$/,/^```$/p' | sed '1d;$d' >readme_example.py
[ -s readme_example.py ] || fail "README.md has no python-example block"
LD_PRELOAD=$preload "$work/venv/bin/python" readme_example.py >readme_example.out 2>&1 ||
  { cat readme_example.out; fail "README's Python example failed"; }
grep -q '^\[(1, ' readme_example.out ||
  { cat readme_example.out; fail "README's Python example printed no nearest row 1"; }
# Run twice: the example commits and must work on a second run too.
LD_PRELOAD=$preload "$work/venv/bin/python" readme_example.py >readme_example2.out 2>&1 ||
  { cat readme_example2.out; fail "README's Python example failed on a second run"; }
echo "ok README's Python example (twice)"

cat >check.py <<'PY'
import sqlite3, sys, colvec, os
# The package's files: the binary inside the venv, not the build folder.
p = colvec.loadable_path()
assert p.startswith(sys.prefix), p
assert colvec.__version__.count(".") == 2, colvec.__version__
db = sqlite3.connect(":memory:")
colvec.load(db)
assert db.execute("SELECT colvec_version()").fetchone()[0] == colvec.__version__
# Extension loading is switched off again after load().
try:
    db.execute("SELECT load_extension('x')")
    raise SystemExit("load_extension still enabled after colvec.load")
except sqlite3.OperationalError as e:
    assert "not authorized" in str(e), e
db.execute("CREATE VIRTUAL TABLE t USING colvec(e float[4], tag text)")
rows = [(i, "[%d,%d,%d,%d]" % (i, i % 3, i % 5, 1), "a" if i % 2 else "b")
        for i in range(1, 201)]
db.executemany("INSERT INTO t(rowid, e, tag) VALUES (?, ?, ?)", rows)
got = db.execute("SELECT rowid FROM t WHERE e MATCH '[10,1,0,1]' AND k = 3"
                 " AND tag = 'b'").fetchall()
assert got[0] == (10,), got
# A binding without extension loading gets the cause, not an AttributeError.
class NoExt:
    pass
try:
    colvec.load(NoExt())
    raise SystemExit("load() accepted a connection that cannot load extensions")
except RuntimeError as e:
    assert "cannot load extensions" in str(e), e
print("ok")
PY
LD_PRELOAD=$preload "$work/venv/bin/python" check.py || fail "check.py failed"
echo "ok colvec.load(conn), KNN with a filter, the no-extension error"
echo "PASS: pkg_python"
