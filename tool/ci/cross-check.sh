#!/usr/bin/env bash
# cross-check.sh — builds colvec for another CPU and runs its test suites
# there: aarch64 under qemu-user, i386 natively on an x86-64 host.
#
# Usage: tool/ci/cross-check.sh [-C BUILDDIR] [-j N] ARCH
#   ARCH     aarch64  cross-compiled with gcc-aarch64-linux-gnu against
#                     Debian's multiarch :arm64 libraries (libsqlite3-dev,
#                     check, libtcl8.6), run with qemu-aarch64
#            i386     compiled with gcc-i686-linux-gnu against the :i386
#                     libraries, run natively (32-bit address space), or
#                     under qemu-i386 when the kernel cannot run i386
#                     programs (no IA32 emulation)
#   BUILDDIR the native build folder (default build/); the cross build goes
#            to BUILDDIR/cross-ARCH and its log to
#            BUILDDIR/cross-ARCH/test-suite.log
#
# Which suites: every Check suite (CHECK_SUITES in Makefile.am), then the
# Tcl suites (TCL_TESTS) with a tclsh built here for the target from the
# target's libtcl8.6 and the sqlite3 Tcl package compiled from the SQLite
# sources tool/ci/sqlite-matrix.sh caches (Debian's tclsh and libsqlite3-tcl
# are not multiarch: their :arm64 or :i386 versions would replace the host's).
# COLVEC_CROSS_TCL=0 runs the Check suites only; COLVEC_CROSS_TCL_TESTS
# names the Tcl suites to run (default: all but shell1, schema1, matrix1 and
# values4, which load the module into the host's sqlite3 shell or Python;
# the shell cases of embed1 and backup1 are left out too, through
# COLVEC_HOST_SHELL=0);
# COLVEC_CROSS_CHECK=0 runs no Check suite; COLVEC_CROSS_CHECK_SUITES names
# the Check suites to run (default: all, e.g. "test/fault/check_oom").
# pthread_create() hangs under qemu-user 7.2 on some hosts, so under
# qemu-user the preloaded tool/ci/qemu-fork.c makes it fail with EAGAIN:
# colvec's HNSW builds run every worker's share on the calling thread, and
# check_interrupt interrupts from a SIGALRM handler instead of a thread.
#
# Why cross compilers and not gcc -m32: on Debian 12 gcc-multilib and
# gcc-aarch64-linux-gnu cannot be installed together; gcc-i686-linux-gnu and
# gcc-aarch64-linux-gnu can.
#
# aarch64 page size: qemu-aarch64 runs the suites with a 64 KB guest page
# size (-p 65536; COLVEC_CROSS_PAGESIZE changes it), so sysconf reports
# 64 KB to colvec as on kernels built with 64 KB pages.
#
# Environment: CI=true makes a missing tool or package a failure (exit 1);
# otherwise the run is skipped (exit 77). tool/install-deps.sh --cross
# installs what is needed.
#
# Exit status: 0 when every suite passed, 77 when skipped, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
builddir=$top/build
jobs=2
while getopts "C:j:" o; do
  case $o in
    C) builddir=$(cd "$OPTARG" && pwd) || exit 1 ;;
    j) jobs=$OPTARG ;;
    *) echo "usage: $0 [-C BUILDDIR] [-j N] aarch64|i386" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
arch=${1:-}

# say, missing (skip, or fail under CI=true)
prog=cross-check hint="tool/install-deps.sh --cross"
. "$here/../lib.sh"

case $arch in
  aarch64)
    host=aarch64-linux-gnu
    multi=aarch64-linux-gnu
    pagesize=${COLVEC_CROSS_PAGESIZE:-65536}
    runner="qemu-aarch64 -L /usr/aarch64-linux-gnu -p $pagesize"
    runner="$runner -E LD_LIBRARY_PATH=/usr/lib/$multi:/lib/$multi"
    command -v qemu-aarch64 >/dev/null 2>&1 || missing "qemu-aarch64 not found (Debian: qemu-user)"
    ;;
  i386)
    host=i686-linux-gnu
    multi=i386-linux-gnu
    runner=""
    # A kernel without 32-bit emulation (IA32_EMULATION off, as in some
    # virtual machines) refuses i386 programs: run them under qemu-i386.
    probe=$(mktemp -d) || exit 1
    echo 'int main(void) { return 0; }' >"$probe/p.c"
    if $host-gcc -o "$probe/p" "$probe/p.c" 2>/dev/null && ! "$probe/p" 2>/dev/null; then
      command -v qemu-i386 >/dev/null 2>&1 || missing "this kernel cannot run i386 programs and qemu-i386 is not installed (Debian: qemu-user)"
      runner="qemu-i386 -L /usr/i686-linux-gnu -E LD_LIBRARY_PATH=/usr/lib/$multi:/lib/$multi"
      say "this kernel cannot run i386 programs: running them under qemu-i386"
    fi
    rm -rf "$probe"
    ;;
  *) echo "usage: $0 [-C BUILDDIR] [-j N] aarch64|i386" >&2; exit 2 ;;
esac
cc=$host-gcc
command -v "$cc" >/dev/null 2>&1 || missing "$cc not found (Debian: gcc-$host)"
for f in libsqlite3.so libcheck.a; do
  [ -e "/usr/lib/$multi/$f" ] || missing "/usr/lib/$multi/$f not found (Debian: libsqlite3-dev:${arch/aarch64/arm64} check:${arch/aarch64/arm64})"
done

out=$builddir/cross-$arch
mkdir -p "$out" || exit 1
cd "$out" || exit 1
export PKG_CONFIG_LIBDIR=/usr/lib/$multi/pkgconfig:/usr/share/pkgconfig
export PKG_CONFIG_PATH=
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
  say "configuring for $host in $out"
  TCLSH=no "$top/configure" --host="$host" --build="$(uname -m)-linux-gnu" \
    CC="$cc" CXX=false --enable-werror >configure.out 2>&1 \
    || { tail -30 configure.out; say "configure failed"; exit 1; }
fi
make -j"$jobs" >make.out 2>&1 || { tail -40 make.out; say "build failed"; exit 1; }
# Under qemu-user the suites' fork() goes through tool/ci/qemu-fork.c (the
# child of glibc's fork() can hang there), preloaded in the guest. The
# guest's environment reaches the host programs the suites run (sh,
# sqlite3), so LD_PRELOAD names $LIB/qemu-fork.so: the guest's loader finds
# the shim under lib/MULTIARCH, the host's an empty library under its own.
# The runner is a host script, qemu-run, so that no "$" goes through make.
if [ -n "$runner" ]; then
  hostmulti=$(${HOST_CC:-cc} -print-multiarch 2>/dev/null)
  [ -n "$hostmulti" ] || hostmulti=$(uname -m)-linux-gnu
  mkdir -p "preload/lib/$multi" "preload/lib/$hostmulti" || exit 1
  "$cc" -O2 -shared -fPIC -o "preload/lib/$multi/qemu-fork.so" \
    "$top/tool/ci/qemu-fork.c" || { say "could not build qemu-fork.so"; exit 1; }
  echo 'int colvecQemuForkHost;' >preload/host.c
  ${HOST_CC:-cc} -shared -fPIC -o "preload/lib/$hostmulti/qemu-fork.so" \
    preload/host.c || { say "could not build the host qemu-fork.so"; exit 1; }
  printf '#!/bin/sh\nexec %s -E '"'"'LD_PRELOAD=%s/preload/$LIB/qemu-fork.so'"'"' "$@"\n' \
    "$runner" "$out" >qemu-run
  chmod +x qemu-run
  runner=$out/qemu-run
fi
suites=$(make -s print-check-suites)
if [ -n "${COLVEC_CROSS_CHECK_SUITES:-}" ]; then
  suites=$COLVEC_CROSS_CHECK_SUITES
fi
[ "${COLVEC_CROSS_CHECK:-1}" = 0 ] && suites=""

# The Tcl suites need a target tclsh and a target sqlite3 Tcl package.
tcl_tests=""
if [ "${COLVEC_CROSS_TCL:-1}" != 0 ]; then
  if [ -e "/usr/lib/$multi/libtcl8.6.so" ] && [ -f /usr/include/tcl8.6/tcl.h ]; then
    if "$here/cross-tclsh.sh" "$cc" "$multi" "$out/tcl" >tcl.out 2>&1; then
      tcl_tests=$(make -s print-tcl-tests)
    else
      tail -20 tcl.out
      say "could not build the target tclsh / sqlite3 Tcl package"
      ci_strict && exit 1
    fi
  else
    missing "libtcl8.6:${arch/aarch64/arm64} and tcl8.6-dev:${arch/aarch64/arm64} are needed for the Tcl suites (COLVEC_CROSS_TCL=0: Check suites only)"
  fi
fi

# Check forks a child per test; under qemu-user everything runs 20 to 40
# times slower than natively: the suites' timeouts grow, and their long
# loops take 1/COLVEC_TEST_SCALE of their iterations (test/lib/testscale.h,
# test/sql/tester.tcl; every test case still runs). A native i386 run keeps
# the full counts.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-20}
if [ -n "$runner" ]; then
  export COLVEC_TEST_SCALE=${COLVEC_TEST_SCALE:-10}
  say "emulated: COLVEC_TEST_SCALE=$COLVEC_TEST_SCALE"
fi
# COLVEC_CROSS_TCL_TESTS names the Tcl suites to run. By default: all but
# the ones that load the module into a host program (the sqlite3 shell,
# Python's sqlite3), which cannot load a module built for another CPU.
host_tcl="test/sql/shell1.test test/sql/schema1.test test/sql/matrix1.test test/sql/values4.test"
if [ -n "$tcl_tests" ] && [ -n "${COLVEC_CROSS_TCL_TESTS:-}" ]; then
  tcl_tests=$COLVEC_CROSS_TCL_TESTS
elif [ -n "$tcl_tests" ]; then
  tcl_tests=$(for t in $tcl_tests; do
    case " $host_tcl " in *" $t "*) ;; *) echo "$t" ;; esac
  done)
  say "not run (they load the module into a host program): $host_tcl"
fi
# The Tcl suites start child tclsh processes ([info nameofexecutable]).
# Under qemu-user a guest cannot exec a guest program (no binfmt_misc
# needed or assumed), so tclsh runs through a host script that starts it
# under qemu and passes its own path as argv[0] (-0): the children exec
# that script, which the host runs.
tclsh=$out/tcl/tclsh
if [ -n "$tcl_tests" ] && [ -n "$runner" ]; then
  tclsh=$out/tcl/tclsh-run
  printf '#!/bin/sh\nexec %s -0 "$0" %s "$@"\n' "$runner" "$out/tcl/tclsh" >"$tclsh"
  chmod +x "$tclsh"
fi
say "running on $arch: $(echo $suites | wc -w) Check suites, $(echo $tcl_tests | wc -w) Tcl suites"
# A 32-bit guest under qemu-user on a 64-bit host gets the host's 64-bit
# directory cookies: on ext4 a readdir() built without large-file support
# fails with EOVERFLOW, as Debian's i386 Tcl does in `file delete -force`
# (colvec itself is built with it). The Tcl suites' scratch folder then
# goes to /dev/shm (tmpfs numbers its entries from 2).
testenv="TCLLIBPATH='$out/tcl/lib'; export TCLLIBPATH;"
# The host's sqlite3 shell cannot load a module built for another CPU: the
# suites' shell cases (embed1-10.1, backup1-5.1) say so and are not run.
testenv="$testenv COLVEC_HOST_SHELL=0; export COLVEC_HOST_SHELL;"
# Suites that run tool/colvec-inspect (knn2, seg1, readers2) find it
# through COLVEC_INSPECT: under qemu, a host script that runs it there.
if [ -n "$runner" ]; then
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$runner" "$out/tool/colvec-inspect" \
    >"$out/inspect-run"
  chmod +x "$out/inspect-run"
  testenv="$testenv COLVEC_INSPECT='$out/inspect-run'; export COLVEC_INSPECT;"
fi
if [ "$arch" = i386 ] && [ -n "$runner" ] && [ -n "$tcl_tests" ] &&
  [ -d /dev/shm ] && [ -w /dev/shm ]; then
  scratch=$(mktemp -d /dev/shm/colvec-cross.XXXXXX) || exit 1
  trap 'rm -rf "$scratch"' EXIT
  testenv="$testenv COLVEC_TESTDIR='$scratch'; export COLVEC_TESTDIR;"
fi
rm -f test-suite.log
make -j"$jobs" check TESTS="$suites $tcl_tests" LOG_COMPILER="$runner" \
  TEST_LOG_COMPILER="$tclsh" \
  TESTS_ENVIRONMENT="$testenv" \
  >check.out 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' check.out
sed -n '/^# TOTAL/,/^# ERROR/p' test-suite.log
exit $rc
