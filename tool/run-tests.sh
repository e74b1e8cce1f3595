#!/usr/bin/env bash
# run-tests.sh — the whole test suite from a fresh clone: installs what is
# missing, builds with -Werror and runs every suite on every SQLite of the
# matrix (tool/ci/sqlite-matrix.sh: the system SQLite with `make check`, then
# 3.38.2, 3.53.2 and 3.54.1 with the suites that use SQLite), then the same
# again under ASan+UBSan in build-asan/ unless COLVEC_NO_ASAN=1, and the
# libFuzzer targets briefly (`make fuzz-smoke`) unless COLVEC_NO_FUZZ=1,
# the Windows build under wine (`make check-windows`) unless
# COLVEC_NO_WINDOWS=1, checks the sources' format (`make format-check`)
# and that calls go one way (`make callgraph-check`),
# and the release tarball (tool/ci/dist-check.sh), then builds for the CPUs
# in COLVEC_CROSS with tool/ci/cross-check.sh (default "aarch64 i386", both
# under qemu-user, the Check and Tcl suites: about 20 minutes together;
# COLVEC_CROSS="" runs none, COLVEC_CROSS_TCL=0 the Check suites only),
# and the WebAssembly build under node
# (`make check-wasm`) unless COLVEC_NO_WASM=1 (it installs emscripten and
# compiles SQLite to wasm once, a few minutes) with the browser package
# and demo page in headless Chromium (`make check-browser`), and every binary and
# package of a release (`make release`: the wheels, the npm tarballs,
# the aarch64 and Windows binaries, each loaded and queried where it runs)
# unless COLVEC_NO_RELEASE=1 (or the aarch64 or Windows legs are off).
# COLVEC_SQLITE_LEGS chooses the legs of the release build (default
# "system oldest previous newest"), COLVEC_ASAN_SQLITE_LEGS those of the
# ASan build (default "system oldest newest": 3.53.2 and 3.54.1 take the
# same paths through colvec, whose version tests are at 3.41, 3.44 and
# 3.45, and the release build runs both). When the Debian mirror cannot
# provide the cross packages (tool/install-deps.sh exits 3), the cross legs
# and the release leg are counted as skipped, with a SKIPPED line, and the
# rest runs.
# The fuzz smoke, Windows, WebAssembly and browser legs use one core at a
# time: they run alongside the cross legs, or alongside the ASan legs when
# there are no cross legs (COLVEC_SERIAL=1: one after the other).
# Each leg's time is printed after it and again in a table at the end
# ("== time per leg"). Ends with one line "N passed, N failed,
# N skipped", counted from every leg's test-suite log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
extra=()
[ "${COLVEC_NO_FUZZ:-0}" = 1 ] || extra=(clang libfuzzer-14-dev)
[ "${COLVEC_NO_WINDOWS:-0}" = 1 ] || extra+=(mingw-w64 wine64)
cross=${COLVEC_CROSS-aarch64 i386}
[ -z "$cross" ] || extra=("--cross=$cross" "${extra[@]}")
[ "${COLVEC_NO_WASM:-0}" = 1 ] || extra=(--wasm "${extra[@]}")
tool/install-deps.sh "${extra[@]}"
deps_rc=$?
jobs=$(nproc 2>/dev/null || echo 2)

pass=0; fail=0; skip=0
if [ "$deps_rc" = 3 ] && [ -n "$cross" ]; then
  # The mirror could not provide the cross packages (its foreign-
  # architecture indexes lag behind): every other leg runs, and the cross
  # legs (and the release, which needs the aarch64 build) are counted as
  # skipped, loudly, rather than stopping the whole run.
  echo "== SKIPPED: cross legs ($cross): their Debian packages could not be installed (see install-deps above)"
  for arch in $cross; do skip=$((skip + 1)); done
  if [ "${COLVEC_NO_RELEASE:-0}" != 1 ] && [ "${COLVEC_NO_WINDOWS:-0}" != 1 ] &&
    [[ " $cross " == *" aarch64 "* ]]; then
    echo "== SKIPPED: release packages (they need the aarch64 cross build)"
    skip=$((skip + 1))
  fi
  cross=""
elif [ "$deps_rc" != 0 ]; then
  exit 1
fi
# Adds the counts of one automake test-suite.log summary to the totals.
count() {
  local log=$1
  local p f s e
  p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
  f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
  s=$(sed -n 's/^# SKIP: *//p' "$log" | head -1)
  e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
  pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0} + ${e:-0})); skip=$((skip + ${s:-0}))
}

# Adds the result of one run whose exit status is $1 and whose automake
# summary is log $2: the log's counts when it exists, else one skip (exit
# status 77) or one failure.
tally() {
  if [ -f "$2" ]; then
    count "$2"
  elif [ "$1" -eq 77 ]; then
    skip=$((skip + 1))
  else
    fail=$((fail + 1))
  fi
}

# Leg times, one line each ("  123 s  name"), printed at the end.
times=()
# Starts timing leg $1.
leg_begin() { leg_name=$1; leg_t0=$(date +%s); }
# Records the time since leg_begin and prints it.
leg_end() {
  local s=$(($(date +%s) - leg_t0))
  echo "   ($leg_name: $s s)"
  times+=("$(printf '%6d s  %s' "$s" "$leg_name")")
}

# Runs leg $1 (its name in the timing table): command $4.. with its
# output in file $2. On success prints the lines of that file that match
# the extended regex $3 and counts a pass; else prints its end and counts
# a failure.
step() {
  local name=$1 out=$2 show=$3
  shift 3
  leg_begin "$name"
  if "$@" >"$out" 2>&1; then
    grep -E "$show" "$out"
    pass=$((pass + 1))
  else
    tail -30 "$out"
    fail=$((fail + 1))
  fi
  leg_end
}

# Runs leg $1 (its name in the timing table): command $3.., whose
# automake-style summary is log $2, removed first; counts it with tally.
suite_leg() {
  local name=$1 log=$2
  shift 2
  leg_begin "$name"
  rm -f "$log"
  CI=${CI:-} "$@"
  tally $? "$log"
  leg_end
}

# Builds in folder $1 with configure flags $3.. and runs the SQLite legs
# $2 there; leg names in the timing summary start with $1.
run_suite() {
  local dir=$1 legs=$2 leg log; shift 2
  mkdir -p "$dir"
  leg_begin "$dir: configure + make"
  (cd "$dir" && "$top/configure" --enable-werror "$@" >configure.out 2>&1) \
    || { cat "$dir/configure.out"; fail=$((fail + 1)); return; }
  make -C "$dir" -j"$jobs" >"$dir/make.out" 2>&1 \
    || { tail -50 "$dir/make.out"; fail=$((fail + 1)); return; }
  leg_end
  for leg in $legs; do
    log=$dir/test-suite-$leg.log
    [ "$leg" = system ] && log=$dir/test-suite.log
    rm -f "$log"
    leg_begin "$dir: SQLite $leg"
    tool/ci/sqlite-matrix.sh -C "$dir" -j "$jobs" "$leg"
    tally $? "$log"
    leg_end
  done
}

# The suites build out of tree; an in-tree configure would block that.
if [ -f config.status ]; then
  echo "note: removing the in-tree build (make distclean) to build out of tree"
  make distclean >/dev/null 2>&1 || true
fi
t_start=$(date +%s)
autoreconf -fi >/dev/null 2>&1 || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }
echo "== release build"
run_suite build "${COLVEC_SQLITE_LEGS:-system oldest previous newest}"
if [ -f build/Makefile ]; then
  # The C sources must match .clang-format (`make format` rewrites them).
  echo "== format check"
  leg_begin "format check"
  if make -C build format-check >build/format-check.out 2>&1; then
    pass=$((pass + 1))
  else
    grep -m 20 'warning:' build/format-check.out
    echo "FAIL: format-check (run: make format)"
    fail=$((fail + 1))
  fi
  leg_end
  # Calls go one way: no file of ext/ calls into a file that calls it
  # (tool/ci/callgraph.tcl lists any circle).
  echo "== call graph"
  step "call graph" build/callgraph.out '^callgraph:' \
    make -C build callgraph-check
fi
if [ -f build/Makefile ]; then
  # The release tarball: complete, and builds and tests from a clean unpack
  # (tool/ci/dist-check.sh; a few minutes).
  echo "== dist check"
  step "dist check" build/dist-check.out '^(ok|made)' tool/ci/dist-check.sh build
fi

# The legs that keep one core busy at most (the fuzz smoke runs one target
# at a time for a fixed number of seconds, wine and node run one program at
# a time) run alongside the cross legs, which keep both cores busy only
# while their suites do, or, without cross legs, alongside the ASan build
# and its suites: each writes its own folder of build/ (fuzz, windows,
# wasm, browser, cross-ARCH) and build-asan/ is apart. Their output is
# printed when both lanes are done; COLVEC_SERIAL=1 runs them one after
# the other instead.
# Runs the single-core legs; in a subshell, writes its counts and times.
single_core_legs() {
  if [ "${COLVEC_NO_FUZZ:-0}" != 1 ] && [ -f build/Makefile ]; then
    # Short fuzzing runs (the regression inputs, then each libFuzzer target
    # for COLVEC_FUZZ_SECONDS seconds); `make fuzz-smoke` alone runs them
    # longer. The seed is fixed (COLVEC_FUZZ_SEED) so that the result
    # depends on the code, not on the draw; `make fuzz-smoke` draws a new
    # one each run.
    secs=${COLVEC_FUZZ_SECONDS:-20}
    fseed=${COLVEC_FUZZ_SEED:-1}
    echo "== fuzz smoke ($secs s per target, seed $fseed)"
    step "fuzz smoke" build/fuzz-smoke.out '^(PASS|FAIL|fuzz-smoke)' \
      make -C build fuzz-smoke FUZZ_SECONDS="$secs" FUZZ_SEED="$fseed"
  fi
  if [ "${COLVEC_NO_WINDOWS:-0}" != 1 ] && [ -f build/Makefile ]; then
    # The Windows build (mingw-w64) of the Check suites and sql_session,
    # run under wine (`make check-windows`, tool/ci/check-windows.sh).
    echo "== Windows (mingw-w64 + wine)"
    suite_leg "Windows (wine)" build/test-suite-windows.log \
      tool/ci/check-windows.sh -C build
  fi
  if [ "${COLVEC_NO_WASM:-0}" != 1 ] && [ -f build/Makefile ]; then
    # SQLite and colvec compiled to WebAssembly (emscripten), sql_session
    # and the amalgamation app run under node (`make check-wasm`).
    echo "== WebAssembly (emscripten + node)"
    suite_leg "WebAssembly (node)" build/test-suite-wasm.log \
      tool/ci/check-wasm.sh -C build
    # The browser package and demo page, driven in headless Chromium
    # (`make check-browser`).
    echo "== browser (emscripten + headless Chromium)"
    suite_leg "browser (Chromium)" build/test-suite-browser.log \
      tool/ci/check-browser.sh -C build
  fi
}

# Runs the cross legs.
cross_legs() {
  for arch in $cross; do
    # The suites built for another CPU (i386 and aarch64, run under qemu):
    # tool/ci/cross-check.sh, log in build/cross-ARCH/test-suite.log.
    echo "== $arch (tool/ci/cross-check.sh)"
    suite_leg "$arch (cross)" "build/cross-$arch/test-suite.log" \
      tool/ci/cross-check.sh -C build -j "$jobs" "$arch"
  done
}

# Prints the single-core lane's output and adds its counts and times.
lane_collect() {
  wait "$lane_pid"
  cat "$lane.out"
  # shellcheck disable=SC2031
  if read -r p f s <"$lane.counts"; then
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    while IFS= read -r t; do [ -n "$t" ] && times+=("$t (alongside)"); done <"$lane.times"
  else
    echo "FAIL: the single-core legs left no counts (see $lane.out)"
    fail=$((fail + 1))
  fi
  lane_pid=""
}

lane_pid=""
if [ "${COLVEC_SERIAL:-0}" = 1 ] || ! [ -d build ]; then
  single_core_legs
  cross_legs
else
  lane=build/single-core-legs
  rm -f "$lane.out" "$lane.counts" "$lane.times"
  # shellcheck disable=SC2030,SC2031 # the lane counts apart; added below
  (
    pass=0 fail=0 skip=0 times=()
    single_core_legs >"$lane.out" 2>&1
    echo "$pass $fail $skip" >"$lane.counts"
    printf '%s\n' "${times[@]}" >"$lane.times"
  ) &
  lane_pid=$!
  if [ -n "$cross" ]; then
    echo "(fuzz smoke, Windows, WebAssembly and browser run alongside; their output follows the cross legs)"
    cross_legs
    lane_collect
  else
    # No cross legs (none asked for, or their packages are missing): the
    # lane runs alongside the ASan legs instead of leaving one core idle
    # for its seven minutes.
    echo "(fuzz smoke, Windows, WebAssembly and browser run alongside; their output follows the ASan legs)"
  fi
fi
if [ "${COLVEC_NO_RELEASE:-0}" != 1 ] && [ "${COLVEC_NO_WINDOWS:-0}" != 1 ] &&
  [[ " $cross " == *" aarch64 "* ]] && [ -f build/Makefile ]; then
  # Every binary and package of a release (`make release`,
  # tool/release.sh), each binary loaded and queried natively, under
  # qemu-aarch64 and under wine (after the Windows leg: they share its
  # wine prefix).
  echo "== release packages (make release)"
  step "release packages" build/release.out 'checks|needs glibc' \
    tool/release.sh -C build
fi
if [ "${COLVEC_NO_ASAN:-0}" != 1 ]; then
  echo "== ASan + UBSan debug build"
  run_suite build-asan "${COLVEC_ASAN_SQLITE_LEGS:-${COLVEC_SQLITE_LEGS:-system oldest newest}}" \
    --enable-debug --enable-sanitizers
fi
[ -z "$lane_pid" ] || lane_collect
echo "== time per leg"
printf '%s\n' "${times[@]}"
echo "$(printf '%6d' $(($(date +%s) - t_start))) s  in all"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
