#!/bin/bash
# symbols.sh — colvec is a good guest in a process: the module built by
# libtool (colvec.so) and the one built from the amalgamation
# (test/amalg/colvec.so) export exactly one symbol, sqlite3_colvec_init;
# every other function and object is static or hidden. (The object
# compiled from colvec.c with -DSQLITE_CORE is checked by amalg_app.sh.)
# Environment: COLVEC_EXT (the built colvec.so, next to which the build
# folder's test/amalg/colvec.so is). Exit status: 0 passed, 1 failed.
set -uo pipefail
build=$(dirname "${COLVEC_EXT:?COLVEC_EXT must name the built colvec.so}")
export LD_PRELOAD=
fail=0
for so in "$COLVEC_EXT" "$build/test/amalg/colvec.so"; do
  if [ ! -s "$so" ]; then
    echo "FAIL: $so is missing"; fail=1; continue
  fi
  # dynamic symbol table: what a process can see
  dyn=$(nm -D --defined-only "$so" | awk 'NF == 3 {print $3}' | sort | tr '\n' ' ')
  # symbol table: global (not local) definitions, hidden ones included
  glob=$(nm -g --defined-only "$so" | awk 'NF == 3 && $2 != "w" && $2 != "v" {print $3}' |
    grep -v '^_\(init\|fini\|edata\|end\|_bss_start\)$' | sort | tr '\n' ' ')
  for got in "$dyn" "$glob"; do
    if [ "$got" != "sqlite3_colvec_init " ]; then
      echo "FAIL: $(basename "$so") defines as global: $got"; fail=1
    fi
  done
  [ $fail -eq 0 ] && echo "ok $(basename "$so"): exports only sqlite3_colvec_init"
done
exit $fail
