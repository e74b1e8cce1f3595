#!/bin/sh
# mkamalg.sh — writes the colvec amalgamation: colvec.c (every source of
# the extension in one file) and colvec.h (the public header), for apps
# that compile colvec into themselves (README, "Embedding in an app").
#
# Usage: tool/mkamalg.sh [-l] [-o OUTDIR] [SOURCE.c ...]
#   -l         emit #line directives pointing back at ext/ (for debuggers)
#   -o OUTDIR  where colvec.c and colvec.h go (default: the current folder)
#   SOURCE.c   the sources in the order wanted, relative to the top of the
#              tree (`make amalgamation` passes the Makefile's lists);
#              default: every ext/*.c, ext/colvec.c last
#
# What the generator does to the sources:
# - inlines every `#include "x.h"` found in ext/ or include/ at its first
#   use and drops the later ones (the headers have include guards, so the
#   order of the .c files is free); other includes stay as they are;
# - makes every file-scope function and object that is not part of the
#   public interface (include/colvec.h) static: a declaration or
#   definition that starts a line at file scope without `static` gets the
#   prefix COLVEC_PRIVATE (`static`, marked unused on GCC and clang, as
#   the test-only hooks are never called); `extern` becomes COLVEC_PRIVATE;
# - replaces SQLITE_EXTENSION_INIT1/INIT3 with one static sqlite3_api;
# - puts, before any include, the feature macros the sources need
#   (_GNU_SOURCE, _FILE_OFFSET_BITS=64) and NDEBUG unless COLVEC_DEBUG is
#   set, as SQLite's own amalgamation does, and on 32-bit x86 with GCC the
#   SSE2 float math configure selects for the build (COLVEC_X87_MATH: x87).
# The per-ISA kernels need no flags: every function there carries its own
# __attribute__((target(...))), under #if guards for the ISA and compiler.
# Only awk and sh are used.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=.
lines=0
while [ $# -gt 0 ]; do
  case $1 in
    -l) lines=1; shift ;;
    -o) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d'; exit 0 ;;
    --) shift; break ;;
    -*) echo "mkamalg.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  set --
  for f in "$top"/ext/*.c; do
    [ "$(basename "$f")" = colvec.c ] || set -- "$@" "ext/$(basename "$f")"
  done
  set -- "$@" ext/colvec.c
fi
for f in "$@"; do
  [ -f "$top/$f" ] || { echo "mkamalg.sh: $top/$f not found" >&2; exit 1; }
done
version=$(sed -n 's/^#define COLVEC_VERSION "\(.*\)"/\1/p' "$top/include/colvec.h")
[ -n "$version" ] || { echo "mkamalg.sh: no COLVEC_VERSION in include/colvec.h" >&2; exit 1; }
mkdir -p "$out"

# colvec.h: the public header as it is, under a banner.
{
  echo "/* colvec.h — public interface of colvec $version (amalgamation;"
  echo "** generated from include/colvec.h by tool/mkamalg.sh: do not edit). */"
  cat "$top/include/colvec.h"
} >"$out/colvec.h.tmp"

awk -v top="$top" -v lines="$lines" -v version="$version" '
# Reads the public header once: the names declared there stay public.
function readPublic(path,   line, a, n, i) {
  while ((getline line < path) > 0) {
    n = split(line, a, /[^A-Za-z0-9_]+/)
    for (i = 1; i <= n; i++) if (a[i] ~ /^sqlite3_colvec_/) pub[a[i]] = 1
  }
  close(path)
}

# Removes comments, strings and character literals from line s (keeping
# the comment state in inCmt across lines); what is left is code.
function code(s,   r, c, i, n, q) {
  r = ""
  n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (inCmt) {
      if (c == "*" && substr(s, i + 1, 1) == "/") { inCmt = 0; i++ }
      continue
    }
    if (c == "/" && substr(s, i + 1, 1) == "*") { inCmt = 1; i++; continue }
    if (c == "/" && substr(s, i + 1, 1) == "/") break
    if (c == "\"" || c == "\047") {
      q = c
      for (i++; i <= n; i++) {
        c = substr(s, i, 1)
        if (c == "\\") { i++; continue }
        if (c == q) break
      }
      r = r " "
      continue
    }
    r = r c
  }
  return r
}

# Non-zero when code line c (at file scope, at the start of a statement)
# declares or defines something that must become static.
function mustHide(c,   w) {
  if (c !~ /^[A-Za-z_]/) return 0
  w = c
  sub(/[^A-Za-z0-9_].*/, "", w)
  if (w == "static" || w == "typedef" || (w in staticMacro)) return 0
  # the Windows export attribute of the public entry point, on its own line
  if (w == "__declspec") return 0
  if (c ~ /(^|[^A-Za-z0-9_])static([^A-Za-z0-9_]|$)/) return 0
  if (w == "extern" && c ~ /^extern *"/) return 0
  if ((w == "struct" || w == "union" || w == "enum") && c !~ /\(/) return 0
  for (w in pub) if (index(c, w)) return 0
  return 1
}

# Copies file rel (relative to the top of the tree) to the output,
# inlining the local headers it includes.
function emit(rel,   path, line, c, inc, depth, start, pp, m, lineNo, t, dir) {
  path = top "/" rel
  if (seen[rel]++) return
  dir = rel
  sub(/[^\/]*$/, "", dir)
  print "/************** begin " rel " **************/"
  if (lines) printf "#line 1 \"%s\"\n", rel
  depth = 0; start = 1; pp = 0; inCmt = 0; lineNo = 0
  while ((getline line < path) > 0) {
    lineNo++
    if (pp) {                     # continuation of a preprocessor line
      if (defName != "" && line ~ /^[ \t]*static[ \t]/) staticMacro[defName] = 1
      defName = ""
      pp = (line ~ /\\$/)
      print line
      continue
    }
    if (!inCmt && line ~ /^[ \t]*#[ \t]*include[ \t]*"/) {
      inc = line
      sub(/^[^"]*"/, "", inc)
      sub(/".*/, "", inc)
      t = ""
      if ((getline m < (top "/" dir inc)) >= 0 && dir inc != "") t = dir inc
      else if ((getline m < (top "/include/" inc)) >= 0) t = "include/" inc
      else if ((getline m < (top "/ext/" inc)) >= 0) t = "ext/" inc
      if (t != "") {
        close(top "/" t)
        if (!seen[t]) {
          emit(t)
          if (lines) printf "#line %d \"%s\"\n", lineNo + 1, rel
        }
        continue
      }
      print line                  # sqlite3ext.h: outside the tree
      continue
    }
    if (!inCmt && line ~ /^[ \t]*#/) {
      pp = (line ~ /\\$/)
      defName = ""
      if (line ~ /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_0-9]+[ \t]/) {
        # a macro whose body starts with static: a storage class
        m = line
        sub(/^[ \t]*#[ \t]*define[ \t]+/, "", m)
        defName = m
        sub(/[^A-Za-z_0-9].*/, "", defName)
        sub(/^[A-Za-z_0-9]+[ \t]+/, "", m)
        if (m ~ /^static[ \t]/) staticMacro[defName] = 1
        if (!pp) defName = ""
      }
      print line
      continue
    }
    if (!inCmt && line ~ /^SQLITE_EXTENSION_INIT[13][ \t]*$/) continue
    wasCmt = inCmt
    c = code(line)
    if (!wasCmt && depth == 0 && start && mustHide(c)) {
      if (c ~ /^extern[ \t]/) sub(/^extern/, "COLVEC_PRIVATE", line)
      else line = "COLVEC_PRIVATE " line
      hidden++
    }
    print line
    gsub(/[ \t]+$/, "", c)
    if (c ~ /[^ \t]/) {
      m = c
      depth += gsub(/\{/, "{", m)
      depth -= gsub(/\}/, "}", m)
      start = (depth == 0 && c ~ /[;}]$/)
    }
  }
  close(path)
  print "/************** end " rel " **************/"
}

BEGIN {
  readPublic(top "/include/colvec.h")
  print "/*"
  print "** colvec.c — the colvec SQLite extension " version " in one file (the"
  print "** amalgamation), generated by tool/mkamalg.sh from ext/ and include/:"
  print "** do not edit; change the sources and run `make amalgamation`."
  print "**"
  print "** Loadable extension:  cc -O2 -fPIC -shared colvec.c -o colvec.so"
  print "** Inside an app:       cc -O2 -DSQLITE_CORE -c colvec.c  (and call"
  print "**   sqlite3_auto_extension((void (*)(void))sqlite3_colvec_init))"
  print "** Only sqlite3.h and sqlite3ext.h are needed besides this file."
  print "** sqlite3_colvec_init is its only external symbol."
  print "*/"
  print "#ifndef _GNU_SOURCE"
  print "#define _GNU_SOURCE 1 /* fdatasync, MAP_POPULATE, madvise, O_DIRECTORY */"
  print "#endif"
  print "#ifndef _FILE_OFFSET_BITS"
  print "#define _FILE_OFFSET_BITS 64 /* 64-bit off_t on 32-bit hosts */"
  print "#endif"
  print "#if !defined(COLVEC_DEBUG) && !defined(NDEBUG)"
  print "#define NDEBUG 1 /* asserts only in debug builds, as in sqlite3.c */"
  print "#endif"
  print "/* 32-bit x86 with GCC: float math on SSE2, not the x87 unit, so that"
  print "** distances round as on every other CPU and the same statements write"
  print "** the same segment bytes; -DCOLVEC_X87_MATH keeps x87 (pre-SSE2 CPUs). */"
  print "#if defined(__i386__) && defined(__GNUC__) && !defined(__clang__) && \\"
  print "    !defined(__SSE2_MATH__) && !defined(COLVEC_X87_MATH)"
  print "#pragma GCC target(\"sse2\", \"fpmath=sse\")"
  print "#endif"
  print "#define COLVEC_AMALGAMATION 1"
  print "/* Storage class of everything but the entry point. */"
  print "#if defined(__GNUC__) || defined(__clang__)"
  print "#define COLVEC_PRIVATE static __attribute__((unused))"
  print "#else"
  print "#define COLVEC_PRIVATE static"
  print "#endif"
  print "#include \"sqlite3ext.h\""
  print "#ifndef SQLITE_CORE"
  print "static const sqlite3_api_routines *sqlite3_api = 0; /* loadable: SQLite API */"
  print "#endif"
  seen["ext/sqlite3ext.h"] = 1
  for (i = 1; i < ARGC; i++) emit(ARGV[i])
  printf "/* %d declarations made static */\n", hidden
  exit 0
}
' "$@" >"$out/colvec.c.tmp"
mv "$out/colvec.c.tmp" "$out/colvec.c"
mv "$out/colvec.h.tmp" "$out/colvec.h"
