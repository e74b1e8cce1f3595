#!/usr/bin/env bash
# check-browser.sh — `make check-browser`: builds the browser package and
# demo page (tool/browser.sh), serves it on 127.0.0.1 and drives it in
# headless Chromium (Debian's chromium, through playwright-core from the npm
# registry, installed once into BUILDDIR/browser/test): tool/browser/check.mjs.
#
# Usage: tool/ci/check-browser.sh [-C BUILDDIR]
# Writes BUILDDIR/test-suite-browser.log (automake's summary lines). Exit
# status 0 passed, 1 failed, 77 when emscripten, node or Chromium is
# missing or Chromium cannot start (1 under CI=true:
# tool/install-deps.sh --wasm installs them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=$top/build
if [ "${1:-}" = -C ]; then builddir=$(cd "$2" && pwd) || exit 1; fi
prog=check-browser
hint="tool/install-deps.sh --wasm"
. "$here/../lib.sh"
log=$builddir/test-suite-browser.log
out=$builddir/browser

chrome=""
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null 2>&1; then chrome=$(command -v "$c"); break; fi
done
[ -n "$chrome" ] || missing "chromium not found (Debian package chromium)"
"$here/../browser.sh" -C "$builddir" || exit $?

t=$out/test
mkdir -p "$t" || exit 1
if [ ! -d "$t/node_modules/playwright-core" ]; then
  (cd "$t" && LD_PRELOAD= npm install --no-audit --no-fund playwright-core@1 \
    >npm-install.log 2>&1) || missing "npm install playwright-core failed (see $t/npm-install.log)"
fi
cp "$here/../browser/check.mjs" "$t/"
port_file=$t/port
node "$here/../browser/serve.mjs" "$out/demo" 900 >"$port_file" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
port=$(head -1 "$port_file")
[ -n "$port" ] || { say "the test server did not start"; exit 1; }
rm -rf "$t/profile"
(cd "$t" && timeout 600 node check.mjs "http://127.0.0.1:$port/index.html" \
  "$t/profile" "$chrome") >"$t/check.log" 2>&1
rc=$?
cat "$t/check.log"
if grep -q "browserType.launchPersistentContext" "$t/check.log"; then
  missing "Chromium could not start"
fi
if [ $rc -eq 0 ]; then suite_log "$log" 1 0; else suite_log "$log" 0 1; fi
exit $rc
