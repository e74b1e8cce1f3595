#!/usr/bin/env bash
# browser.sh — `make browser`: SQLite with colvec compiled in, for web
# pages, built with emscripten into BUILDDIR/browser/:
#   colvec-web.mjs, colvec-web.wasm  the module (ES6, emscripten's IDBFS
#                                    linked in for persistence)
#   colvec.mjs                       the API: open(name) -> exec/save/close
#                                    (tool/browser/colvec.mjs)
#   demo/                            the demo page (tool/browser/demo) with
#                                    its data (tool/browser/mkdemo.mjs) and
#                                    the three files above
#   colvec-wasm-VERSION.tgz          the npm package of the first three
# Objects are shared with tool/ci/check-wasm.sh (BUILDDIR/wasm/obj).
#
# Usage: tool/browser.sh [-C BUILDDIR]
# Environment: EMCC (default emcc), CI (true: a missing tool fails).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=$top/build
if [ "${1:-}" = -C ]; then builddir=$(cd "$2" && pwd) || exit 1; fi
out=$builddir/browser
emcc=${EMCC:-emcc}
prog=browser
hint="tool/install-deps.sh --wasm"
. "$here/lib.sh"

command -v "$emcc" >/dev/null 2>&1 || missing "$emcc not found (Debian package emscripten)"
command -v node >/dev/null 2>&1 || missing "node not found"
[ -d /usr/share/nodejs/acorn ] && export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
version=$("$top/tool/version.sh" "$top") || exit 1
wasm_objects "$builddir" || exit 1

mkdir -p "$out/obj" || exit 1
"$emcc" -std=c99 -O2 -Wall -Wextra -Werror -DSQLITE_THREADSAFE=0 \
  -I"$builddir" -I"$wasm_sqlite" -c "$here/browser/colvec_web.c" -o "$out/obj/colvec_web.o" ||
  { say "compiling colvec_web.c failed"; exit 1; }
"$emcc" -O2 -sALLOW_MEMORY_GROWTH=1 -sMODULARIZE=1 -sEXPORT_ES6=1 \
  -sEXPORT_NAME=createColvecModule -sENVIRONMENT=web,worker \
  -sEXPORTED_FUNCTIONS=_webOpen,_webExec,_webClose \
  -sEXPORTED_RUNTIME_METHODS=cwrap,FS -lidbfs.js \
  "$out/obj/colvec_web.o" "$wasm_colvec_obj" "$wasm_sqlite_obj" -lm \
  -o "$out/colvec-web.mjs" || { say "linking colvec-web.mjs failed"; exit 1; }
cp "$here/browser/colvec.mjs" "$out/"

rm -rf "$out/demo" && mkdir -p "$out/demo" || exit 1
cp "$here/browser/demo/index.html" "$here/browser/demo/demo.mjs" \
  "$out/colvec.mjs" "$out/colvec-web.mjs" "$out/colvec-web.wasm" "$out/demo/"
node "$here/browser/mkdemo.mjs" "$out/demo/data.json" || exit 1

pkg=$out/pkg
rm -rf "$pkg" && mkdir -p "$pkg" || exit 1
cp "$out/colvec.mjs" "$out/colvec-web.mjs" "$out/colvec-web.wasm" "$pkg/"
cat >"$pkg/package.json" <<JSON
{
  "name": "colvec-wasm",
  "version": "$version",
  "description": "SQLite with the colvec vector-search extension compiled to WebAssembly, for web pages",
  "type": "module",
  "main": "colvec.mjs",
  "exports": { ".": "./colvec.mjs" },
  "files": ["colvec.mjs", "colvec-web.mjs", "colvec-web.wasm"]
}
JSON
(cd "$pkg" && npm pack --loglevel=error --pack-destination "$out" >/dev/null) ||
  { say "npm pack failed"; exit 1; }
echo "browser: $out/colvec-wasm-$version.tgz and $out/demo/"
