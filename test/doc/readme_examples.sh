#!/bin/bash
# readme_examples.sh — every fenced code block of README.md is either run
# here, run by another test, or marked as not runnable with a reason. The
# line before each block (blank lines aside) must be one of
#   <!-- example: sql -->         statements run here in the sqlite3 shell
#   <!-- example: sql 3.41 -->    the same, on SQLite 3.41 or later only
#   <!-- example: transcript -->  `sqlite>` lines run here in the shell, the
#                                 other lines (but `$ ...`) the expected output
#   <!-- example: test/NAME -->   run by test/NAME, which must read README.md
#   <!-- python-example -->, <!-- node-example -->
#                                 run by test/client/pkg_python.sh, test/client/pkg_node.sh
#   <!-- not run: REASON -->
# The sql and transcript blocks run in README order on one database, with
# colvec loaded (`.load ./build/colvec` in a transcript is pointed at the
# build) and `-bail`: an error fails the test. The parameters the SQL
# reference uses are bound first: :q, :v (768-dimensional vectors as JSON
# text), :blob (one as float32 bytes) and :last (-1).
# Environment: COLVEC_EXT (the extension), COLVEC_TESTDIR (scratch folder),
# COLVEC_HOST_SHELL=0 (the host shell cannot load this build: skip).
here=$(cd "$(dirname "$0")" && pwd)
readme=$here/../../README.md
ext=${COLVEC_EXT:-$here/../../build/colvec.so}
work=${COLVEC_TESTDIR:-/tmp}/readme_examples
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: no sqlite3 shell"; exit 77; }
[ "${COLVEC_HOST_SHELL:-1}" = 0 ] && { echo "SKIP: the host shell cannot load this build"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

# Splits README into block files N.txt and an index of "N LINE MARKER".
awk -v out="$work" '
  /^ *```/ {
    if (inb) { inb = 0; close(f); next }
    inb = 1; n++; f = out "/" n ".txt"; printf "" >f
    ind = $0; sub(/```.*/, "", ind)
    m = prev; gsub(/^ *<!-- *| *-->$/, "", m)
    if (prev !~ /^ *<!--.*-->$/) m = "-"
    print n, NR, m >(out "/index")
    next
  }
  inb { if (substr($0, 1, length(ind)) == ind) $0 = substr($0, length(ind) + 1)
        print >f; next }
  /[^ ]/ { prev = $0 }
' "$readme"
[ -s index ] || { echo "FAIL: no code blocks found in README.md"; exit 1; }

ver=$(sqlite3 :memory: 'SELECT sqlite_version()')
# True when the shell's SQLite is version $1 or later.
at_least() { [ "$(printf '%s\n%s\n' "$1" "$ver" | sort -V | head -1)" = "$1" ]; }

# The shell's prelude: colvec and the parameters.
vec="(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 767) SELECT '[' || group_concat(round(sin(i * 0.37), 4)) || ']' FROM s)"
qv="(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 767) SELECT '[' || group_concat(round(cos(i * 0.21), 4)) || ']' FROM s)"
{
  echo ".load ${ext%.so}"
  echo ".parameter init"
  echo ".parameter set :v \"$vec\""
  echo ".parameter set :q \"$qv\""
  echo ".parameter set :blob \"(SELECT vec_f32($vec))\""
  echo ".parameter set :last -1"
} >prelude.sql

pass=0 fail=0 skipped=0 other=0 notrun=0
# Records a failure of block $1 (README line $2): message $3.
failed() { echo "FAIL: README.md line $2 (block $1): $3"; fail=$((fail + 1)); }

while read -r n line marker; do
  case $marker in
    "example: sql"|"example: sql 3.41")
      if [ "$marker" = "example: sql 3.41" ] && ! at_least 3.41.0; then
        echo "skip: README.md line $line needs SQLite 3.41 (this is $ver)"
        skipped=$((skipped + 1)); continue
      fi
      if cat prelude.sql "$n.txt" | sqlite3 -bail app.db >"$n.out" 2>&1; then
        pass=$((pass + 1))
      else
        failed "$n" "$line" "the SQL failed:"; sed 's/^/  /' "$n.out"
      fi ;;
    "example: transcript")
      grep -E '^(sqlite>|   \.\.\.>)( |$)' "$n.txt" |
        sed -E 's/^(sqlite>|   \.\.\.>) ?//' |
        sed "s|^\.load \./build/colvec\$|.load ${ext%.so}|" >"$n.sql"
      grep -vE '^(sqlite>|   \.\.\.>)( |$)|^\$ ' "$n.txt" >"$n.want"
      { grep -q '^\.load' "$n.sql" || echo ".load ${ext%.so}"; cat "$n.sql"; } |
        sqlite3 app.db 2>&1 | sed 's/ *$//' >"$n.out"
      if diff -u "$n.want" "$n.out" >"$n.diff"; then
        pass=$((pass + 1))
      else
        failed "$n" "$line" "the transcript printed something else:"; cat "$n.diff"
      fi ;;
    "example: test/"*)
      t=${marker#example: }
      if [ -f "$here/../../$t" ] && grep -q 'README' "$here/../../$t"; then
        other=$((other + 1))
      else
        failed "$n" "$line" "$t does not exist or does not read README.md"
      fi ;;
    python-example|node-example)
      t=test/client/pkg_${marker%-example}.sh
      [ "$t" = test/client/pkg_python.sh ] || [ "$t" = test/client/pkg_node.sh ] || t=none
      if grep -q "<!-- $marker -->" "$here/../../$t" 2>/dev/null; then
        other=$((other + 1))
      else
        failed "$n" "$line" "$t does not run the $marker block"
      fi ;;
    "not run: "?*) notrun=$((notrun + 1)) ;;
    *) failed "$n" "$line" "no marker before the block (<!-- example: ... --> or <!-- not run: reason -->)" ;;
  esac
done <index

echo "README.md: $(wc -l <index) blocks: $pass run here, $other run by other tests, $notrun not runnable (reasons given), $skipped skipped on SQLite $ver"
[ "$fail" -eq 0 ] || exit 1
echo "PASS: README's examples"
