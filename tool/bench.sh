#!/bin/bash
# bench.sh — the standard benchmark suite, end to end.
#
# Installs the peers (tool/bench-setup.sh), builds colvec-bench and
# hnswlib-bench into <work>/bin, then on Fashion-MNIST runs every engine one
# thread at a time, each in its own processes (a load process, then a query
# process that reopens the database), sweeping ef (and colvec's
# oversampling). Writes <out>/results.tsv, <out>/results.md and one
# recall-vs-QPS plot per dataset, <out>/<dataset>.png.
#
# usage: tool/bench.sh [--quick] [--colvec PATH] [--engines "LIST"]
#                      [--work DIR] [--out DIR] [--synthetic]
#   --quick       10,000 base vectors and 200 queries (a couple of minutes)
#   --colvec      colvec.so to measure (default <repo>/colvec.so, or
#                 <repo>/.libs/colvec.so; skipped when neither exists)
#   --engines     subset of "colvec sqlite-vec vectorlite hnswlib"
#   --synthetic   also run the seeded clustered Gaussian set (128-d)
#   --work DIR    databases, ground truth, peers (default <repo>/bench-data)
#   --out DIR     results folder (default <work>/results-quick|full)
# Each timed configuration runs its queries RUNS times (quick 1, full 3) and
# keeps the fastest pass: the machine is shared, so the fastest is the least
# disturbed. Brute-force sqlite-vec gets fewer queries and one pass.
# Environment: COLVEC_CONFIGS overrides the colvec table-option sets, one per
# line, each "label|options|oversampling list" (see the default below).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
QUICK=0
SYNTH=0
COLVEC_SO=""
ENGINES="colvec sqlite-vec vectorlite hnswlib"
WORK=$ROOT/bench-data
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --synthetic) SYNTH=1 ;;
    --colvec) COLVEC_SO=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --work) WORK=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ "$QUICK" = 1 ]; then
  MODE=quick; EF=10,16,32,64,128,256; RUNS=1
  FMNIST_SIZE=(--n 10000 --queries 200); SVEC_QUERIES=200
  SYNTH_SIZE=(--n 10000 --queries 200)
else
  MODE=full; EF=10,16,32,64,128,256,512; RUNS=3
  FMNIST_SIZE=(--queries 1000); SVEC_QUERIES=200
  SYNTH_SIZE=(--n 100000 --queries 1000)
fi
OUT=${OUT:-$WORK/results-$MODE}
mkdir -p "$OUT"
TSV=$OUT/results.tsv
MD=$OUT/results.md
: >"$TSV"
: >"$MD"

# colvec configurations: label|table options|oversampling sweep ("" = none).
COLVEC_CONFIGS=${COLVEC_CONFIGS:-"default||
bit|quantize=bit|1,2,3,5
int8|quantize=int8|1,2,3"}

# 1. Peers and tools.
"$ROOT/tool/bench-setup.sh" "$WORK"
# shellcheck disable=SC1091
. "$WORK/peers.env"
BIN=$WORK/bin
mkdir -p "$BIN"
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE -c "$ROOT/tool/bench_data.c" \
  -o "$BIN/bench_data.o"
# shellcheck disable=SC2046  # pkg-config output is meant to be split
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE "$ROOT/tool/colvec-bench.c" \
  "$BIN/bench_data.o" $(pkg-config --cflags --libs sqlite3) -lz -lm \
  -o "$BIN/colvec-bench"
# -march=native: hnswlib picks its SIMD kernels at compile time, as in
# ann-benchmarks' build; the prebuilt vectorlite also uses AVX.
g++ -O2 -march=native -std=c++17 "$ROOT/tool/hnswlib-bench.cpp" \
  "$BIN/bench_data.o" -lz -lpthread -o "$BIN/hnswlib-bench"

if [ -z "$COLVEC_SO" ]; then
  for c in "$ROOT/colvec.so" "$ROOT/.libs/colvec.so"; do
    [ -f "$c" ] && { COLVEC_SO=$c; break; }
  done
fi

# Measure a snapshot: a `make` elsewhere that rewrites colvec.so while it is
# mapped would kill the run with SIGBUS.
if [ -n "$COLVEC_SO" ]; then
  cp "$COLVEC_SO" "$BIN/colvec.so"
  COLVEC_SO=$BIN/colvec.so
fi

FAILED=0
# run LABEL CMD... : runs one benchmark step, noting a failure and going on.
run() {
  local label=$1; shift
  echo "== $label" >&2
  if ! "$@" >/dev/null; then
    echo "bench.sh: FAILED: $label" >&2
    FAILED=$((FAILED+1))
  fi
}

# sql_engine NAME EXT DATASET-ARGS... EXTRA-ARGS: load, then query.
sql_engine() {
  local name=$1 ext=$2; shift 2
  run "$name load $*" "$BIN/colvec-bench" --engine "$name" --ext "$ext" \
    --work-dir "$WORK" --phase load "$@"
  run "$name query $*" "$BIN/colvec-bench" --engine "$name" --ext "$ext" \
    --work-dir "$WORK" --phase query --tsv "$TSV" --md "$MD" --ef "$EF" \
    --runs "$RUNS" "$@"
}

# dataset ARGS...: every engine on one dataset.
dataset() {
  local e label opts os
  for e in $ENGINES; do
    case "$e" in
      colvec)
        if [ -z "$COLVEC_SO" ]; then
          echo "bench.sh: no colvec.so (make first, or --colvec PATH)" >&2
          continue
        fi
        while IFS='|' read -r label opts os; do
          [ -n "$label" ] || continue
          if [ -n "$os" ]; then
            sql_engine colvec "$COLVEC_SO" "$@" --label "$label" \
              --options "$opts" --oversampling "$os"
          else
            sql_engine colvec "$COLVEC_SO" "$@" --label "$label" \
              --options "$opts"
          fi
        done <<<"$COLVEC_CONFIGS"
        ;;
      sqlite-vec)
        # Brute force: fewer queries keep the run short (same ground truth
        # file name scheme, its own query count).
        sql_engine sqlite-vec "$SQLITE_VEC_SO" "$@" --queries "$SVEC_QUERIES" \
          --runs 1
        ;;
      vectorlite)
        sql_engine vectorlite "$VECTORLITE_SO" "$@"
        ;;
      hnswlib)
        run "hnswlib $*" "$BIN/hnswlib-bench" --work-dir "$WORK" \
          --tsv "$TSV" --md "$MD" --ef "$EF" --runs "$RUNS" "$@"
        ;;
    esac
  done
}

# plot NAME: recall@k vs QPS of dataset NAME from the TSV, one line per
# engine/config/oversampling, to $OUT/NAME.png.
plot() {
  local name=$1 dir=$OUT/plot-$1 series=""
  rm -rf "$dir"
  mkdir -p "$dir"
  awk -F'\t' -v ds="$name" -v dir="$dir" '
    NR>1 && $3==ds {
      key = $1 " " $2; if ($9 > 0) key = key " os=" $9
      f = key; gsub(/[^A-Za-z0-9=.-]/, "_", f)
      print $19, $16 >> (dir "/" f ".dat")
      if (!(f in seen)) { seen[f] = 1; print f "\t" key > (dir "/index") }
    }' "$TSV"
  [ -s "$dir/index" ] || return 0
  while IFS=$'\t' read -r f key; do
    series="$series${series:+, }'$dir/$f.dat' using 1:2"
    series="$series with linespoints title '$key'"
  done <"$dir/index"
  gnuplot <<EOF
set terminal pngcairo size 1000,700 noenhanced
set output '$OUT/$name.png'
set title 'recall@10 vs QPS, one thread: $name ($MODE)'
set xlabel 'recall@10 (exact ground truth)'
set ylabel 'queries per second'
set logscale y
set key below
set grid
set offsets 0.002, 0.002, 0, 0
set pointsize 1.5
plot $series
EOF
  echo "bench.sh: wrote $OUT/$name.png" >&2
}

dataset --dataset fashion-mnist "${FMNIST_SIZE[@]}"
plot fashion-mnist
if [ "$SYNTH" = 1 ]; then
  dataset --dataset synthetic --dim 128 --clusters 64 --seed 1 \
    "${SYNTH_SIZE[@]}"
  plot synthetic-128d
fi

echo >&2
cat "$MD"
echo "bench.sh: results in $OUT ($FAILED failed step(s))" >&2
[ "$FAILED" = 0 ]
