#!/usr/bin/env bash
# mkwheel.sh — writes the Python wheel colvec-VERSION-py3-none-PLATFORM.whl
# holding a built extension and the small `colvec` module
# (tool/pkg/python/colvec: loadable_path(), load(conn)). Offline: it uses
# only Debian's python3-wheel (`python3 -m wheel pack`).
#
# Usage: tool/pkg/mkwheel.sh LIBRARY OUTDIR
#   LIBRARY  the built extension: colvec.so (Linux, x86-64 or aarch64) or
#            colvec.dll (Windows x64)
#   OUTDIR   where the wheel goes (created)
# Prints the wheel's path.
#
# The platform tag says what the binary needs, read from the binary itself:
# its CPU from the ELF header, and for Linux the newest glibc symbol version
# it imports (manylinux_2_N_ARCH: pip installs it only where glibc >= 2.N).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
lib=$1
out=$2
py=${COLVEC_WHEEL_PYTHON:-/usr/bin/python3}
die() { echo "mkwheel: $*" >&2; exit 1; }
[ -f "$lib" ] || die "no library $lib"
"$py" -m wheel version >/dev/null 2>&1 ||
  die "$py has no wheel module (Debian: apt-get install python3-wheel)"
version=$("$top/tool/version.sh" "$top")

case $lib in
  *.dll)
    file_name=colvec.dll
    plat=win_amd64 ;;
  *)
    file_name=colvec.so
    machine=$(readelf -h "$lib" | sed -n 's/^ *Machine: *//p')
    case $machine in
      *X86-64*) arch=x86_64 ;;
      *AArch64*) arch=aarch64 ;;
      *) die "no wheel platform for an ELF machine '$machine'" ;;
    esac
    glibc=$(readelf -V -W "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' |
      sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n | tail -1)
    [ -n "$glibc" ] || die "$lib imports no glibc symbol version"
    plat="manylinux_${glibc%%.*}_${glibc#*.}_$arch"
    plat=${plat//./_} ;;
esac

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/colvec" "$stage/colvec-$version.dist-info"
sed "s/@VERSION@/$version/" "$here/python/colvec/__init__.py" >"$stage/colvec/__init__.py"
cp "$lib" "$stage/colvec/$file_name"
cat >"$stage/colvec-$version.dist-info/METADATA" <<META
Metadata-Version: 2.1
Name: colvec
Version: $version
Summary: Fast K-nearest-neighbour search inside SQLite: the colvec loadable extension
Requires-Python: >=3.7
Description-Content-Type: text/markdown

colvec is a SQLite extension for vector search. \`colvec.load(conn)\` loads it
into a \`sqlite3\` connection; \`colvec.loadable_path()\` gives the path for
other bindings.
META
cat >"$stage/colvec-$version.dist-info/WHEEL" <<META
Wheel-Version: 1.0
Generator: colvec tool/pkg/mkwheel.sh
Root-Is-Purelib: false
Tag: py3-none-$plat
META
mkdir -p "$out"
"$py" -m wheel pack "$stage" -d "$out" >/dev/null
whl="$out/colvec-$version-py3-none-$plat.whl"
[ -f "$whl" ] || die "wheel pack made no $whl"
echo "$whl"
