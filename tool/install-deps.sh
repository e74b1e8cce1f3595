#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages colvec needs to build and
# test, when they are missing. Runs apt-get as root (or through sudo).
# Usage: tool/install-deps.sh [--cross[=CPUS]] [--wasm] [PACKAGE ...]
# Exit status: 0 when everything is installed, 3 when all but the cross
# packages are (the mirror could not provide those), 1 otherwise.
#   --cross  also what `make check-aarch64` and `make check-i386` need
#            (tool/ci/cross-check.sh): the aarch64 and i686 cross compilers,
#            qemu-user, and the :arm64 and :i386 multiarch libraries (the
#            architectures are added to dpkg first); --cross=aarch64 or
#            --cross=i386 for one CPU only
#   --wasm   also what `make check-wasm` and `make check-browser` need
#            (tool/ci/check-wasm.sh, tool/ci/check-browser.sh): emscripten (about
#            900 MB installed, with clang-14, lld-14, binaryen and
#            node-acorn) and chromium
set -euo pipefail
cross=()
arches=()
wasm=()
while [ $# -gt 0 ]; do
  case $1 in
    --cross|--cross=*)
      cpus="aarch64 i386"
      [ "$1" = --cross ] || cpus=${1#--cross=}
      cross=(qemu-user)
      for c in $cpus; do
        case $c in
          aarch64) cross+=(gcc-aarch64-linux-gnu); arches+=(arm64) ;;
          i386) cross+=(gcc-i686-linux-gnu); arches+=(i386) ;;
          *) echo "install-deps: unknown CPU $c (aarch64, i386)" >&2; exit 2 ;;
        esac
      done
      for a in "${arches[@]}"; do
        cross+=("libsqlite3-dev:$a" "check:$a" "libtcl8.6:$a" "tcl8.6-dev:$a")
      done
      shift ;;
    --wasm) wasm=(emscripten chromium); shift ;;
    *) break ;;
  esac
done
pkgs=(build-essential autoconf automake libtool pkg-config libsqlite3-dev
      sqlite3 tcl libsqlite3-tcl check locales clang-format clang strace python3 \
      cflow \
      e2fsprogs musl-tools python3-venv python3-wheel \
      libdqlite0 go-dqlite \
      "${cross[@]}" "${wasm[@]}" "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
# The cross packages, installed after the others: the foreign-architecture
# indexes of a mirror can lag behind the amd64 ones (a package updated in
# bookworm-security on amd64 but not yet on i386 cannot be installed for
# both), and that must not keep the rest from being installed.
missing_cross=()
if ((${#cross[@]})); then
  rest=()
  for p in "${missing[@]}"; do
    if [[ " ${cross[*]} " == *" $p "* ]]; then
      missing_cross+=("$p")
    else
      rest+=("$p")
    fi
  done
  missing=("${rest[@]+"${rest[@]}"}")
fi
# npm fetches the SQLite sources of tool/ci/sqlite-matrix.sh (and better-sqlite3
# for test/client/node_limit.sh); a node that did not come from Debian (e.g.
# NodeSource's nodejs, which carries npm) is kept.
if ! command -v npm >/dev/null 2>&1; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  missing+=(npm)
fi
# Installs packages $@ with apt-get, $tries tries (default 3; an apt-get
# update between them, after $pause seconds, default 30); returns 1 when
# the last one failed.
apt_install() {
  local try n=${tries:-3}
  for ((try = 1; try <= n; try++)); do
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
      --no-install-recommends "$@" >/dev/null && return 0
    [ "$try" -lt "$n" ] || return 1
    echo "install-deps: apt-get install failed (try $try of $n)" >&2
    sleep "${pause:-30}"
    $sudo apt-get update -qq || true
  done
}
if ((${#missing[@]} + ${#missing_cross[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]} ${missing_cross[*]}" >&2
  if ((${#arches[@]})); then
    for a in "${arches[@]}"; do
      dpkg --print-foreign-architectures | grep -qx "$a" ||
        $sudo dpkg --add-architecture "$a"
    done
  fi
  # A mirror caught mid-sync fails an index ("File has unexpected size
  # ... Mirror sync in progress?"), which apt-get update reports as an
  # error: try again a few times, then install with what was fetched (the
  # install fails if that is not enough, and is tried again too).
  # When only the foreign-architecture indexes fail (binary-i386,
  # binary-arm64: they lag behind for hours), waiting does not help and
  # the native packages can be installed: go on at once (the cross
  # packages may then fail, and their legs are skipped).
  upd=$(mktemp)
  for try in 1 2 3 4 5; do
    $sudo apt-get update -qq 2>"$upd" && break
    cat "$upd" >&2
    if grep -q 'Failed to fetch' "$upd" &&
      ! grep 'Failed to fetch' "$upd" | grep -qv 'binary-\(i386\|arm64\)/'; then
      echo "install-deps: only foreign-architecture indexes failed; going on" >&2
      break
    fi
    echo "install-deps: apt-get update failed (try $try of 5)" >&2
    sleep $((try * 15))
  done
  rm -f "$upd"
  if ((${#missing[@]})); then
    apt_install "${missing[@]}" || exit 1
  fi
  # Two quick tries: what keeps the cross packages out is a foreign index
  # that lags behind (unmet versions, for hours), which waiting a minute
  # does not mend; their legs are then skipped, not failed.
  if ((${#missing_cross[@]})) && ! tries=2 pause=5 apt_install "${missing_cross[@]}"; then
    cross_failed=1
  fi
fi
# A comma-decimal locale for the locale tests (check_vector, values4.test).
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "generating locale de_DE.UTF-8" >&2
  $sudo sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen ||
    echo 'de_DE.UTF-8 UTF-8' | $sudo tee -a /etc/locale.gen >/dev/null
  $sudo locale-gen >/dev/null
fi
if [ "${cross_failed:-0}" = 1 ]; then
  echo "install-deps: the cross packages (${missing_cross[*]}) could not be" \
    "installed from the mirror; everything else is installed" >&2
  exit 3
fi
