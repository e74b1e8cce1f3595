#!/bin/bash
# storage_sql.sh — every statement on a shadow table lives in
# ext/colvec_storage.c: no other source file of the extension names a
# shadow table (T_config, T_delta, T_manifest, T_tomb, T_trash, T_segdata, or their
# suffixes as strings). Source-only check, no build needed. A line holding
# the word as a user-facing value rather than a table says so with the
# comment /* a label */ and is not counted.
#
# Exit status: 0 when the rule holds, 1 with the offending lines otherwise,
# 99 (hard error) when the sources are not found or the pattern no longer
# finds the names in colvec_storage.c itself (a pattern gone stale).

src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
ext=$src/ext
[ -f "$ext/colvec_storage.c" ] || { echo "ERROR: $ext/colvec_storage.c not found"; exit 99; }

names='config|delta|manifest|tomb|trash|segdata'
# "<name>_<suffix>" or "T_<suffix>" in code, comments or messages, and the
# bare suffixes as C strings; identifiers that merely end in _config
# (colvec_config.c, sqlite3_vtab_config) are not table names.
pattern="(_($names)\\b|\"($names)\")"
strip='colvec_config\.c|sqlite3_vtab_config'

scan() {
  sed -E "s/$strip//g" "$1" | grep -nE "$pattern" | grep -vF '/* a label */'
}

n=$(scan "$ext/colvec_storage.c" | wc -l)
if [ "$n" -lt 5 ]; then
  echo "ERROR: the pattern finds $n shadow-table names in colvec_storage.c"
  exit 99
fi
echo "colvec_storage.c: $n lines name a shadow table"

bad=0
for f in "$ext"/*.c "$ext"/*.h; do
  case $(basename "$f") in colvec_storage.c) continue ;; esac
  hits=$(scan "$f")
  if [ -n "$hits" ]; then
    echo "FAIL: $(basename "$f") names a shadow table:"
    echo "$hits" | sed 's/^/  /'
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "ok: no other file of ext/ names a shadow table"
exit $bad
