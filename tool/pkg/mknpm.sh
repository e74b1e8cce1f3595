#!/usr/bin/env bash
# mknpm.sh — writes colvec's npm packages as tarballs (`npm pack`, offline):
# colvec-VERSION.tgz (JavaScript: getLoadablePath(), load(db); it names the
# platform packages as optionalDependencies, so npm installs the one that
# fits the machine) and one colvec-PLATFORM-VERSION.tgz per binary given.
#
# Usage: tool/pkg/mknpm.sh OUTDIR [PLATFORM=LIBRARY ...]
#   PLATFORM  linux-x64, linux-arm64 or windows-x64
#   LIBRARY   that platform's built extension (colvec.so or colvec.dll)
# Prints the path of each tarball written.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
shift
die() { echo "mknpm: $*" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || die "npm not found (tool/install-deps.sh installs it)"
version=$("$top/tool/version.sh" "$top")
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# Packs folder $1 into $out and prints the tarball's path.
pack() {
  (cd "$1" && LD_PRELOAD= npm pack --loglevel=error --pack-destination "$out" >/dev/null) ||
    die "npm pack failed in $1"
  local name
  name=$(sed -n 's/^ *"name": "\(.*\)",$/\1/p' "$1/package.json")
  [ -f "$out/$name-$version.tgz" ] || die "npm pack made no $name-$version.tgz"
  echo "$out/$name-$version.tgz"
}

mkdir -p "$stage/colvec"
cp "$here/npm/colvec/index.js" "$here/npm/colvec/index.mjs" \
  "$here/npm/colvec/README.md" "$stage/colvec/"
sed "s/@VERSION@/$version/g" "$here/npm/colvec/package.json.in" >"$stage/colvec/package.json"
pack "$stage/colvec"

for spec in "$@"; do
  plat=${spec%%=*}
  lib=${spec#*=}
  [ -f "$lib" ] || die "no library $lib for $plat"
  case $plat in
    linux-x64) os=linux; cpu=x64; file=colvec.so ;;
    linux-arm64) os=linux; cpu=arm64; file=colvec.so ;;
    windows-x64) os=win32; cpu=x64; file=colvec.dll ;;
    *) die "unknown platform $plat (linux-x64, linux-arm64, windows-x64)" ;;
  esac
  d="$stage/$plat"
  mkdir -p "$d"
  cp "$lib" "$d/$file"
  sed -e "s/@VERSION@/$version/g" -e "s/@PLATFORM@/$plat/g" -e "s/@OS@/$os/g" \
    -e "s/@CPU@/$cpu/g" -e "s/@FILE@/$file/g" \
    "$here/npm/platform/package.json.in" >"$d/package.json"
  pack "$d"
done
