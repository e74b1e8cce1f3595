#!/bin/bash
# posix_strict.sh — the C sources of the extension compile in a strict
# POSIX.1-2008 environment (-std=c99 -U_GNU_SOURCE
# -D_POSIX_C_SOURCE=200809L, -Werror): nothing Linux-only or GNU-only
# (MAP_POPULATE, MADV_POPULATE_READ, madvise, O_CLOEXEC, sysconf names,
# pthread extensions) is used without a fallback, so the POSIX path keeps
# building on macOS and the BSDs, which cannot be tested here. Syntax and
# declarations only (-fsyntax-only), a few seconds.
#
# Exit status: 0 when every file compiles, 1 with the compiler's messages
# otherwise, 99 when the sources or the compiler are not found.

src=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cc=${CC:-cc}
[ -f "$src/ext/colvec_os.c" ] || { echo "ERROR: $src/ext/colvec_os.c not found"; exit 99; }
command -v "$cc" >/dev/null 2>&1 || { echo "ERROR: no C compiler ($cc)"; exit 99; }
cflags=$(pkg-config --cflags sqlite3 2>/dev/null)
status=0 n=0
for f in "$src"/ext/*.c; do
  # shellcheck disable=SC2086
  if ! "$cc" -std=c99 -Wall -Wextra -Werror -U_GNU_SOURCE \
       -D_POSIX_C_SOURCE=200809L -I"$src/include" -I"$src/ext" $cflags \
       -fsyntax-only "$f"; then
    echo "FAIL: $f does not compile with -D_POSIX_C_SOURCE=200809L"
    status=1
  fi
  n=$((n + 1))
done
[ $status -ne 0 ] || echo "posix_strict: $n files compile in strict POSIX.1-2008 mode"
exit $status
