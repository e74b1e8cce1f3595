#!/usr/bin/env bash
# cross-tclsh.sh — builds, for another CPU, what the Tcl suites run on: a
# tclsh (Tcl_Main over the target's libtcl8.6) and the sqlite3 Tcl package
# (tclsqlite3.c from the SQLite sources tool/ci/sqlite-matrix.sh caches,
# linked with the target's libsqlite3). Used by tool/ci/cross-check.sh, because
# Debian's tclsh8.6 and libsqlite3-tcl cannot be installed for a second
# architecture next to the host's.
#
# Usage: tool/ci/cross-tclsh.sh CC MULTIARCH OUTDIR
#   CC         the target's C compiler (aarch64-linux-gnu-gcc, ...)
#   MULTIARCH  the target's multiarch triplet (aarch64-linux-gnu, ...)
#   OUTDIR     receives OUTDIR/tclsh and OUTDIR/lib/sqlite3/ (for TCLLIBPATH)
#
# Exit status: 0 on success, 1 on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cc=$1
multi=$2
out=$3

# The SQLite sources: the oldest leg of the matrix is an autoconf tarball,
# which carries the Tcl binding (tea/generic/tclsqlite3.c).
leg=$("$here/sqlite-matrix.sh" --prepare oldest)
src=$leg/src/tea/generic/tclsqlite3.c
[ -f "$src" ] || { echo "cross-tclsh: $src not found" >&2; exit 1; }
version=$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' /usr/include/sqlite3.h)

mkdir -p "$out/lib/sqlite3"
cat >"$out/tclsh.c" <<'EOF'
/* tclsh for the Tcl suites on another CPU: Tcl's own interactive shell. */
#include <tcl.h>

/* Runs Tcl_Main with the standard initialisation (init.tcl, auto_path). */
int main(int argc, char **argv) {
  Tcl_Main(argc, argv, Tcl_Init);
  return 0;
}
EOF
"$cc" -O2 -I/usr/include/tcl8.6 -o "$out/tclsh" "$out/tclsh.c" \
  -L"/usr/lib/$multi" -ltcl8.6
# The binding of the SQLite release whose sources are cached, on the
# target's libsqlite3 (the version Debian ships for every architecture).
"$cc" -O2 -fPIC -shared -DUSE_SYSTEM_SQLITE=1 -DPACKAGE_VERSION="\"$version\"" \
  -I/usr/include/tcl8.6 -o "$out/lib/sqlite3/libtclsqlite3.so" "$src" \
  -L"/usr/lib/$multi" -lsqlite3 -ltcl8.6
cat >"$out/lib/sqlite3/pkgIndex.tcl" <<EOF
package ifneeded sqlite3 $version [list load [file join \$dir libtclsqlite3.so] Sqlite3]
EOF
echo "cross-tclsh: built $out/tclsh and sqlite3 $version" >&2
