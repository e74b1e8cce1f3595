#!/bin/sh
# smoke.sh — runs libFuzzer targets briefly (called by test/fuzz/fuzz.mk).
#
#   SRCDIR=<src> OUT=<build>/fuzz FUZZ_SECONDS=60 [FUZZ_SEED=1] \
#     sh smoke.sh fuzz_segment ...
#
# For each target: replays every input under test/fuzz/regress/<target>/
# once, then (FUZZ_SECONDS > 0) fuzzes for FUZZ_SECONDS seconds in one
# process, starting from $OUT/corpus/<target> (kept between runs), the seed
# corpus $OUT/seed/<target> and the regression inputs. A crash, leak,
# sanitizer report or timeout fails the target; the input is saved as
# $OUT/artifacts/<target>-crash-... (copy it to test/fuzz/regress/<target>/
# once understood). Prints one line per target and a total; exits 1 when
# any target failed. A failure also prints the frames of colvec's code from
# the report and, up to 4 KB, the input in base64.
set -u
: "${SRCDIR:?}" "${OUT:?}"
secs=${FUZZ_SECONDS:-60}
seed=${FUZZ_SEED:-0} # libFuzzer -seed: 0 = a new random seed
fail=0
start=$(date +%s)
mkdir -p "$OUT/artifacts"
for t in "$@"; do
  bin="$OUT/$t"
  reg="$SRCDIR/test/fuzz/regress/$t"
  log="$OUT/$t.log"
  case $t in
    fuzz_segment) maxlen=262144 ;;
    *) maxlen=4096 ;;
  esac
  opts="-timeout=30 -rss_limit_mb=2048 -max_len=$maxlen -print_final_stats=1"
  : >"$log"
  # 1. every regression input, once
  nreg=0
  if [ -d "$reg" ]; then
    files=$(find "$reg" -type f ! -name '*.md' | sort)
    if [ -n "$files" ]; then
      nreg=$(echo "$files" | wc -l)
      # shellcheck disable=SC2086
      if ! "$bin" $opts $files >>"$log" 2>&1; then
        echo "FAIL: $t: a regression input under test/fuzz/regress/$t crashes"
        grep -E 'Running:|ERROR|invariant|SUMMARY' "$log" | tail -8
        fail=1
        continue
      fi
    fi
  fi
  # 2. a bounded fuzzing run
  if [ "$secs" -gt 0 ]; then
    mkdir -p "$OUT/corpus/$t"
    dirs="$OUT/corpus/$t $OUT/seed/$t"
    [ -d "$reg" ] && dirs="$dirs $reg"
    # shellcheck disable=SC2086
    if ! "$bin" $opts -seed="$seed" -max_total_time="$secs" \
        -artifact_prefix="$OUT/artifacts/$t-" $dirs >>"$log" 2>&1; then
      echo "FAIL: $t: see $log and $OUT/artifacts/"
      grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$log" | tail -8
      # where it happened (frames in colvec's own code), and the input
      # itself when small, so a failure on a machine that is gone (CI)
      # can be reproduced: base64 -d >input, then run the target on it
      grep -E '^ *#[0-9]+ .* in (colvec|fz|hnsw|seg|quant)' "$log" | head -6
      art=$(sed -n 's/.*Test unit written to *//p' "$log" | tail -1)
      if [ -n "$art" ] && [ -f "$art" ] && [ "$(wc -c <"$art")" -le 4096 ]
      then
        echo "input (base64): $(base64 <"$art" | tr -d '\n')"
      fi
      fail=1
      continue
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    corp=$(find "$OUT/corpus/$t" -type f | wc -l)
    echo "PASS: $t: $nreg regression inputs replayed; ${execs:-0} executions" \
         "in ${secs} s (${rate:-0}/s), corpus $corp inputs, 0 failures"
  else
    echo "PASS: $t: $nreg regression inputs replayed"
  fi
done
echo "fuzz-smoke: $(( $(date +%s) - start )) s, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
