#!/bin/bash
# bench.sh — the standard benchmark suite, end to end (doc/BENCHMARKS.md).
#
# Installs the peers (tool/bench/bench-setup.sh), builds colvec-bench,
# hnswlib-bench and colvec-loadbench into $BENCH_BIN (default <work>/bin),
# snapshots colvec.so there, then runs the sections asked for, one engine
# and one thread at a time, each engine in its own processes (a load
# process, then a query process that reopens the database). Writes
# <out>/results.tsv and results.md (every query configuration), bench.log
# (each step's stderr, with its "first-query" timing line), and per
# section: summary.md and one recall-vs-QPS plot per data set
# (fashion-mnist.png, synthetic-1536d.png: one line per engine, its
# default marked) for --fmnist and --s1536; compare.tsv/.md for
# --compare; h2h.tsv, h2h-matched.md, access.tsv/.md, prefault.tsv,
# loadbench.tsv, filters.txt, int8.txt for the others.
#
# usage: tool/bench/bench.sh [--quick] [--all | --fmnist --h2h --s1536
#                      --s1536-variants --access --prefault --loadbench
#                      --million --million768 --million128 --int8
#                      --storage]
#                      [--compare OLD.so [--rounds N]]
#                      [--reuse] [--colvec PATH] [--engines "LIST"]
#                      [--work DIR] [--out DIR]
#   (no section)  --fmnist only
#   --fmnist      Fashion-MNIST 60k x 784, l2, 1,000 queries: colvec int8
#                 (default), none and bit; hnswlib, vectorlite (ef sweeps);
#                 sqlite-vec (brute force, 200 queries)
#   --h2h         after --fmnist: colvec default vs hnswlib interleaved ef
#                 by ef, 5 passes each (the matched-recall ratio)
#   --s1536       synthetic 200k x 1536 (64 clusters, seed 1, 200 queries):
#                 each engine of --engines over one ef sweep (hnswlib
#                 builds with 2 threads, vectorlite with one: ~2x longer;
#                 sqlite-vec is a brute-force scan under 1 QPS)
#   --s1536-variants  the same rows: colvec's exact scan and quantize=bit
#   --access      quantize=bit, oversampling 3, k = 20/100/500 on 1536-d
#                 (50k rows): access=mmap vs access=file, interleaved,
#                 twice; the ratios in <out>/access.md
#   --prefault    1536-d default tables (50k rows) with prefault=none,
#                 willneed, populate: cold (page cache evicted) vs hot
#                 open-to-first-answer, then QPS
#   --loadbench   bulk load 1M x 128 storage only vs a plain SQLite table;
#                 then 200k x 128 with the default int8 + HNSW options
#   --million     1M x 128: default table vs exact scan, ef sweep, then
#                 filtered KNN recall/latency (<out>/filters.txt)
#   --million768  1M x 768 (M768_N rows; quick: 50k): colvec, hnswlib and
#                 vectorlite (of --engines) loaded under /usr/bin/time
#                 (<out>/million768.tsv: wall, CPU-seconds, peak RSS),
#                 then ef sweeps (query RSS in results.tsv); not in --all
#   --million128  the same for 1M x 128 (M128_N rows; quick: 100k), 1,000
#                 queries (<out>/million128.tsv); not in --all
#   --int8        int8[128] and bit[256] columns (50k rows): indexed vs
#                 exact (<out>/int8.txt)
#   --storage     storage=sidecar vs storage=embedded at defaults
#                 (Fashion-MNIST; STORAGE_SETS="fmnist s1536" adds
#                 200k x 1536): load time, disk used, warm QPS, first answer
#                 of a fresh copy of the database (the embedded one copied
#                 alone, its cache rebuilt; the sidecar one with its folder)
#                 and QPS with no cache (the embedded copy on a read-only
#                 mount, segments read from the database; needs unshare -m);
#                 <out>/storage.md
#   --all         every section (not --compare)
#   --compare OLD.so  colvec build OLD.so against the one measured, at
#                 their defaults, on the same default tables (Fashion-MNIST;
#                 also 200k x 1536 when --s1536 is given): --rounds rounds
#                 (default 7) of old then new, each the fastest of RUNS
#                 passes; per-round QPS, recall and new/old ratio, then
#                 their median and range, in <out>/compare.md
#   --quick       small sizes (a few minutes), one timed pass
#   --reuse       keep databases already loaded (their <db>.load exists)
#   --colvec      colvec.so to measure (default <repo>/build/colvec.so,
#                 <repo>/colvec.so or <repo>/.libs/colvec.so)
#   --engines     subset of "colvec sqlite-vec vectorlite hnswlib"
#                 (--fmnist, --s1536)
#   --work DIR    databases, ground truth, peers (default <repo>/bench-data)
#   --out DIR     results folder (default <work>/results-quick|full)
# Each timed configuration runs its queries RUNS times (quick 1, full 3) and
# keeps the fastest pass: the machine is shared, so the fastest is the least
# disturbed. Environment: COLVEC_CONFIGS overrides the Fashion-MNIST colvec
# table-option sets, one per line, "label|options|oversampling list" (the
# one labelled "default" is the plotted colvec line); COMPARE_SETS
# overrides the data sets of --compare ("fmnist", "s1536").
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CMDLINE="tool/bench/bench.sh $*"
QUICK=0
REUSE=()
SECTIONS=""
COLVEC_SO=""
ENGINES="colvec sqlite-vec vectorlite hnswlib"
COMPARE_SO=""
ROUNDS=7
WORK=$ROOT/bench-data
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --reuse) REUSE=(--reuse) ;;
    --all) SECTIONS="fmnist h2h s1536 s1536_variants access prefault loadbench million int8" ;;
    --fmnist|--h2h|--s1536|--access|--prefault|--loadbench|--million|--million768|--million128|--int8|--storage)
      SECTIONS="$SECTIONS ${1#--}" ;;
    --s1536-variants) SECTIONS="$SECTIONS s1536_variants" ;;
    --synthetic) SECTIONS="$SECTIONS s1536" ;;  # older name
    --colvec) COLVEC_SO=$2; shift ;;
    --compare) COMPARE_SO=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --work) WORK=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/!p;}' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
# --compare alone compares on Fashion-MNIST; with --s1536 on both sets.
if [ -n "$COMPARE_SO" ]; then
  case " $SECTIONS " in
    *" s1536 "*) COMPARE_SETS=${COMPARE_SETS:-"fmnist s1536"} ;;
    *) COMPARE_SETS=${COMPARE_SETS:-fmnist} ;;
  esac
  SECTIONS="$SECTIONS compare"
fi
SECTIONS=${SECTIONS:-fmnist}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
EF=10,16,24,32,48,64,96,128,256
S1536_EF=10,16,32,48,64,96,128
if [ "$QUICK" = 1 ]; then
  MODE=quick; RUNS=1
  FMNIST_SIZE=(--n 10000 --queries 200); SVEC_QUERIES=200
  FMNIST_TITLE="Fashion-MNIST (quick: 10,000 x 784, 200 queries)"
  S1536_TITLE="Synthetic (quick: 20,000 x 1536), 200 queries"
  S1536_N=20000; ACCESS_N=10000; PREFAULT_N=10000
  LOAD_N=100000; LOAD_HNSW_N=20000; MILLION_N=100000; INT8_N=10000
  M768_N=50000; M128_N=100000
else
  MODE=full; RUNS=3
  FMNIST_SIZE=(--queries 1000); SVEC_QUERIES=200
  FMNIST_TITLE="Fashion-MNIST: 60,000 x 784, l2, 1,000 queries, k = 10"
  S1536_TITLE="Synthetic: 200,000 x 1536 (64 clusters), l2, 200 queries, k = 10"
  S1536_N=200000; ACCESS_N=50000; PREFAULT_N=50000
  LOAD_N=1000000; LOAD_HNSW_N=200000; MILLION_N=1000000; INT8_N=50000
  M768_N=${M768_N:-1000000}; M128_N=${M128_N:-1000000}
fi
OUT=${OUT:-$WORK/results-$MODE}
mkdir -p "$OUT"
TSV=$OUT/results.tsv
MD=$OUT/results.md
LOG=$OUT/bench.log
: >"$TSV"
: >"$MD"
: >"$LOG"

# colvec configurations: label|table options|oversampling sweep ("" = none).
COLVEC_CONFIGS=${COLVEC_CONFIGS:-"default||1,2,3
none|quantize=none|
bit|quantize=bit|1,2,3,5"}

# 1. Peers and tools.
"$ROOT/tool/bench/bench-setup.sh" "$WORK"
# shellcheck disable=SC1091
. "$WORK/peers.env"
BIN=${BENCH_BIN:-$WORK/bin}
mkdir -p "$BIN"
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE -c "$ROOT/tool/bench/bench_data.c" \
  -o "$BIN/bench_data.o"
# shellcheck disable=SC2046  # pkg-config output is meant to be split
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE "$ROOT/tool/bench/colvec-bench.c" \
  "$BIN/bench_data.o" $(pkg-config --cflags --libs sqlite3) -lz -lm \
  -o "$BIN/colvec-bench"
# shellcheck disable=SC2046
gcc -O2 -std=c99 -D_GNU_SOURCE "$ROOT/tool/bench/colvec-loadbench.c" \
  $(pkg-config --cflags --libs sqlite3) -o "$BIN/colvec-loadbench"
# -march=native: hnswlib picks its SIMD kernels at compile time, as in
# ann-benchmarks' build; the prebuilt vectorlite also uses AVX.
g++ -O2 -march=native -std=c++17 "$ROOT/tool/bench/hnswlib-bench.cpp" \
  "$BIN/bench_data.o" -lz -lpthread -o "$BIN/hnswlib-bench"

if [ -z "$COLVEC_SO" ]; then
  for c in "$ROOT/build/colvec.so" "$ROOT/colvec.so" "$ROOT/.libs/colvec.so"
  do
    [ -f "$c" ] && { COLVEC_SO=$c; break; }
  done
fi
# A fresh clone: build the extension first (release build in build/).
if [ -z "$COLVEC_SO" ]; then
  echo "bench.sh: building colvec in $ROOT/build" >&2
  "$ROOT/tool/install-deps.sh"
  (cd "$ROOT" && autoreconf -fi >/dev/null 2>&1 && mkdir -p build &&
     cd build && { [ -f Makefile ] || ../configure >/dev/null; } &&
     make -j"$(nproc)" >/dev/null) || { echo "bench.sh: build failed" >&2; exit 1; }
  COLVEC_SO=$ROOT/build/colvec.so
fi

# Measure a snapshot: a `make` elsewhere that rewrites colvec.so while it is
# mapped would kill the run with SIGBUS. Copy, then rename, so a process
# still mapping an older snapshot keeps its inode. The file name must stay
# colvec.so (SQLite derives the entry point from it).
if [ -n "$COLVEC_SO" ]; then
  cp "$COLVEC_SO" "$BIN/colvec.so.tmp"
  mv -f "$BIN/colvec.so.tmp" "$BIN/colvec.so"
  COLVEC_SO=$BIN/colvec.so
fi
# The build --compare measures against: a snapshot too, in its own folder.
if [ -n "$COMPARE_SO" ]; then
  mkdir -p "$BIN/old"
  cp "$COMPARE_SO" "$BIN/old/colvec.so.tmp"
  mv -f "$BIN/old/colvec.so.tmp" "$BIN/old/colvec.so"
  COMPARE_SO=$BIN/old/colvec.so
fi
# The colvec table of the plot and summary lines (the other configurations
# are in results.tsv/md only).
COLVEC_MAIN=default
: >"$OUT/summary.md"

# need_colvec: true when there is a colvec.so to measure.
need_colvec() {
  [ -n "$COLVEC_SO" ] && return 0
  echo "bench.sh: no colvec.so (make first, or --colvec PATH)" >&2
  return 1
}

FAILED=0
# run LABEL CMD... : runs one benchmark step (its stderr to $LOG), noting a
# failure and going on.
run() {
  local label=$1; shift
  echo "== $label" | tee -a "$LOG" >&2
  if ! "$@" >/dev/null 2>>"$LOG"; then
    echo "bench.sh: FAILED: $label (see $LOG)" >&2
    FAILED=$((FAILED+1))
  fi
}

# cvb ARGS...: colvec-bench on colvec, with the shared arguments.
cvb() {
  "$BIN/colvec-bench" --engine colvec --ext "$COLVEC_SO" --work-dir "$WORK" \
    "$@"
}

# sql_engine NAME EXT DATASET-ARGS... EXTRA-ARGS: load, then query.
sql_engine() {
  local name=$1 ext=$2; shift 2
  run "$name load $*" "$BIN/colvec-bench" --engine "$name" --ext "$ext" \
    --work-dir "$WORK" --phase load "${REUSE[@]}" "$@"
  run "$name query $*" "$BIN/colvec-bench" --engine "$name" --ext "$ext" \
    --work-dir "$WORK" --phase query --tsv "$TSV" --md "$MD" --ef "$EF" \
    --runs "$RUNS" "$@"
}

# section_fmnist: every engine on Fashion-MNIST.
section_fmnist() {
  local e label opts os ds=(--dataset fashion-mnist "${FMNIST_SIZE[@]}")
  for e in $ENGINES; do
    case "$e" in
      colvec)
        need_colvec || continue
        while IFS='|' read -r label opts os; do
          [ -n "$label" ] || continue
          if [ -n "$os" ]; then
            sql_engine colvec "$COLVEC_SO" "${ds[@]}" --label "$label" \
              --options "$opts" --oversampling "$os"
          else
            sql_engine colvec "$COLVEC_SO" "${ds[@]}" --label "$label" \
              --options "$opts"
          fi
          # The configuration's defaults: no ef, no oversampling given.
          run "colvec $label defaults" cvb "${ds[@]}" --label "$label" \
            --options "$opts" --phase query --tsv "$TSV" --md "$MD" \
            --runs "$RUNS"
        done <<<"$COLVEC_CONFIGS"
        ;;
      sqlite-vec)
        # Brute force: fewer queries keep the run short.
        sql_engine sqlite-vec "$SQLITE_VEC_SO" "${ds[@]}" \
          --queries "$SVEC_QUERIES" --runs 1
        ;;
      vectorlite)
        sql_engine vectorlite "$VECTORLITE_SO" "${ds[@]}"
        ;;
      hnswlib)
        run "hnswlib ${ds[*]}" "$BIN/hnswlib-bench" --work-dir "$WORK" \
          --tsv "$TSV" --md "$MD" --ef "$EF" --runs "$RUNS" \
          --reuse "${#REUSE[@]}" "${ds[@]}"
        ;;
    esac
  done
  plot fashion-mnist "Fashion-MNIST"
  summary fashion-mnist "$FMNIST_TITLE"
}

# section_h2h: colvec (default int8, oversampling 1) and native hnswlib on
# Fashion-MNIST, interleaved ef by ef with 5 passes each, so both see the
# same background load: the matched-recall QPS ratio comes from here.
# Needs the databases/index of --fmnist (run it first, or with it).
section_h2h() {
  local ef ds=(--dataset fashion-mnist "${FMNIST_SIZE[@]}")
  local h2h=(--tsv "$OUT/h2h.tsv" --md "$OUT/h2h.md" --runs 5)
  need_colvec || return 0
  : >"$OUT/h2h.tsv"
  : >"$OUT/h2h.md"
  for ef in ${EF//,/ }; do
    run "h2h colvec ef=$ef" cvb "${ds[@]}" --label default --phase query \
      --ef "$ef" --oversampling 1 "${h2h[@]}"
    run "h2h hnswlib ef=$ef" "$BIN/hnswlib-bench" --work-dir "$WORK" \
      --reuse 1 --ef "$ef" "${h2h[@]}" "${ds[@]}"
  done
  run "h2h colvec defaults" cvb "${ds[@]}" --label default --phase query \
    "${h2h[@]}"
  TSV=$OUT/h2h.tsv matched fashion-mnist
  mv "$OUT/fashion-mnist-matched.md" "$OUT/h2h-matched.md"
}

# section_s1536: synthetic 200k x 1536 (64 clusters, seed 1, 200 queries):
# every engine of --engines over the same ef sweep (colvec at its default
# table options and oversampling, plus its defaults point; hnswlib builds
# with 2 threads like colvec; vectorlite builds with one, about twice as
# long; sqlite-vec is a brute-force scan, one pass), then the plot and the
# summary.
section_s1536() {
  local e ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
              --queries 200 --n "$S1536_N")
  local sweep=(--tsv "$TSV" --md "$MD" --runs "$RUNS" --ef "$S1536_EF")
  for e in $ENGINES; do
    case "$e" in
      colvec)
        need_colvec || continue
        run "s1536 colvec load" cvb "${ds[@]}" --label s1536-default \
          --options "" --phase load "${REUSE[@]}"
        run "s1536 colvec sweep" cvb "${ds[@]}" --label s1536-default \
          --phase query "${sweep[@]}"
        run "s1536 colvec defaults" cvb "${ds[@]}" --label s1536-default \
          --phase query --tsv "$TSV" --md "$MD" --runs "$RUNS"
        ;;
      hnswlib)
        run "s1536 hnswlib" "$BIN/hnswlib-bench" --work-dir "$WORK" \
          "${ds[@]}" --threads 2 --reuse "${#REUSE[@]}" "${sweep[@]}"
        ;;
      vectorlite)
        sql_engine vectorlite "$VECTORLITE_SO" "${ds[@]}" --ef "$S1536_EF"
        ;;
      sqlite-vec)
        sql_engine sqlite-vec "$SQLITE_VEC_SO" "${ds[@]}" --runs 1
        ;;
    esac
  done
  COLVEC_MAIN=s1536-default plot synthetic-1536d "Synthetic 1536-d"
  COLVEC_MAIN=s1536-default summary synthetic-1536d "$S1536_TITLE"
}

# section_s1536_variants: on the same 200k x 1536 rows, colvec's own exact
# scan (index=none quantize=none) and quantize=bit with an oversampling
# sweep, beside the default table of --s1536 (loaded here if missing).
section_s1536_variants() {
  local ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
            --queries 200 --n "$S1536_N")
  need_colvec || return 0
  run "s1536 default load" cvb "${ds[@]}" --label s1536-default \
    --options "" --phase load --reuse
  run "s1536 exact load" cvb "${ds[@]}" --label s1536-exact \
    --options "index=none quantize=none" --phase load "${REUSE[@]}"
  run "s1536 bit load" cvb "${ds[@]}" --label s1536-bit \
    --options "quantize=bit" --phase load "${REUSE[@]}"
  run "s1536 default query" cvb "${ds[@]}" --label s1536-default \
    --phase query --tsv "$TSV" --md "$MD" --runs "$RUNS"
  run "s1536 exact query" cvb "${ds[@]}" --label s1536-exact \
    --phase query --tsv "$TSV" --md "$MD" --runs "$RUNS"
  run "s1536 bit query" cvb "${ds[@]}" --label s1536-bit --phase query \
    --tsv "$TSV" --md "$MD" --runs "$RUNS" --oversampling 0,5,10
}

# section_access: Manticore's mmap-vs-read experiment, k = 20/100/500.
# The two tables are queried alternately (mmap then file, k by k, twice,
# 5 passes each) so both see the same background load; access.md gets
# the mmap/file QPS ratio of each pair.
section_access() {
  local a k rep ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
                    --queries 200 --n "$ACCESS_N")
  need_colvec || return 0
  for a in mmap file; do
    run "access=$a load" cvb "${ds[@]}" --label "bit-$a" \
      --options "quantize=bit, access=$a" --phase load "${REUSE[@]}"
  done
  : >"$OUT/access.tsv"
  for rep in 1 2; do
    for k in 20 100 500; do
      for a in mmap file; do
        run "access=$a k=$k (pair $rep)" cvb "${ds[@]}" --label "bit-$a" \
          --phase query --tsv "$OUT/access.tsv" --md "$MD" --runs 5 \
          --k "$k" --oversampling 3
      done
    done
  done
  cat "$OUT/access.tsv" >>"$TSV"
  # rows alternate mmap, file: pair them up (columns 7 k, 16 qps, 19 recall)
  awk -F'\t' 'BEGIN { print "| k | QPS mmap | QPS file | mmap/file | recall |";
                      print "|--:|--:|--:|--:|--:|" }
               $2 ~ /-mmap$/ { k = $7; m = $16; r = $19 }
               $2 ~ /-file$/ && $7 == k { printf "| %s | %.1f | %.1f | **%.2fx** | %s |\n", k, m, $16, m / $16, r }' \
    "$OUT/access.tsv" >"$OUT/access.md"
  cat "$OUT/access.md" >&2
}

# section_prefault: Qdrant's cold-start experiment: open to first answer
# with the page cache evicted (cold) and not (hot), then QPS.
section_prefault() {
  local p ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
              --queries 200 --n "$PREFAULT_N")
  need_colvec || return 0
  for p in none willneed populate; do
    run "prefault=$p load" cvb "${ds[@]}" --label "pf-$p" \
      --options ", prefault=$p" --phase load "${REUSE[@]}"
    run "prefault=$p cold" cvb "${ds[@]}" --label "pf-$p" --phase query \
      --evict --tsv "$TSV" --md "$MD" --runs "$RUNS"
    run "prefault=$p hot" cvb "${ds[@]}" --label "pf-$p" --phase query \
      --tsv "$TSV" --md "$MD" --runs "$RUNS"
  done
  # Two more cold and hot first answers of each (first-query lines only).
  for r in 2 3; do
    for p in none willneed populate; do
      run "prefault=$p cold $r" cvb "${ds[@]}" --label "pf-$p" \
        --phase query --evict --warmup 0 --runs 1
      run "prefault=$p hot $r" cvb "${ds[@]}" --label "pf-$p" \
        --phase query --warmup 0 --runs 1
    done
  done
  # The biggest table, when --s1536 built it: 200k x 1536, prefault=none.
  for r in 1 2 3; do
    run "s1536-default cold $r" cvb --dataset synthetic --dim 1536 \
      --clusters 64 --seed 1 --queries 200 --n "$S1536_N" \
      --label s1536-default --phase query --evict --warmup 0 --runs 1
    run "s1536-default hot $r" cvb --dataset synthetic --dim 1536 \
      --clusters 64 --seed 1 --queries 200 --n "$S1536_N" \
      --label s1536-default --phase query --warmup 0 --runs 1
  done
  grep -a '^first-query' "$LOG" | grep -E 'pf-|s1536-default' \
    >"$OUT/prefault.tsv" || true
}

# section_loadbench: bulk-load rate, colvec vs a plain SQLite BLOB table.
section_loadbench() {
  need_colvec || return 0
  echo "== loadbench storage only, $LOAD_N x 128" | tee -a "$LOG" >&2
  "$BIN/colvec-loadbench" --ext "$COLVEC_SO" --dir "$WORK" --n "$LOAD_N" \
    --dim 128 | tee -a "$OUT/loadbench.tsv"
  echo "== loadbench default options, $LOAD_HNSW_N x 128" | tee -a "$LOG" >&2
  "$BIN/colvec-loadbench" --ext "$COLVEC_SO" --dir "$WORK" \
    --n "$LOAD_HNSW_N" --dim 128 --options "" | tee -a "$OUT/loadbench.tsv"
}

# section_million: 1M x 128 (quick: 100k) default table vs its own exact
# scan, an ef sweep, then filtered KNN (tool/bench/filter-bench.tcl, rowid
# bounds at 2-30 % of the rows) into <out>/filters.txt.
section_million() {
  local ds=(--dataset synthetic --dim 128 --clusters 64 --seed 1
            --queries 200 --n "$MILLION_N")
  local key="synth3-n$MILLION_N-q200-d128-c64-s1-l2"
  need_colvec || return 0
  run "million default load" cvb "${ds[@]}" --label m1-default --options "" \
    --phase load "${REUSE[@]}"
  run "million exact load" cvb "${ds[@]}" --label m1-exact \
    --options "index=none quantize=none" --phase load "${REUSE[@]}"
  run "million default query" cvb "${ds[@]}" --label m1-default \
    --phase query --tsv "$TSV" --md "$MD" --runs "$RUNS" --ef 0,16,32,64,128
  run "million exact query" cvb "${ds[@]}" --label m1-exact --phase query \
    --tsv "$TSV" --md "$MD" --runs 1 --warmup 2
  echo "== million filters" | tee -a "$LOG" >&2
  tclsh "$ROOT/tool/bench/filter-bench.tcl" "$COLVEC_SO" \
    "$WORK/colvec-m1-default-$key.db" "$WORK/colvec-m1-exact-$key.db" \
    "$((MILLION_N / 50)) $((MILLION_N * 6 / 100)) $((MILLION_N / 10)) $((MILLION_N * 3 / 10))" \
    | tee "$OUT/filters.txt" >&2 || FAILED=$((FAILED+1))
}

# million_peers TAG N DIM QUERIES: N synthetic rows of DIM dimensions
# (colvec's table labelled mDIM-default),
# each engine of --engines that keeps an index (colvec, hnswlib,
# vectorlite; sqlite-vec's brute force is left out): the load timed by
# /usr/bin/time (wall and CPU-seconds, peak RSS) into <out>/TAG.tsv, then
# an ef sweep (0: colvec's default) whose peak RSS is the query process's
# alone.
million_peers() {
  local tag=$1 n=$2 dim=$3 nq=$4 e
  local ds=(--dataset synthetic --dim "$dim" --clusters 64 --seed 1
            --queries "$nq" --n "$n")
  local sweep=(--tsv "$TSV" --md "$MD" --runs "$RUNS")
  local tsv=$OUT/$tag.tsv
  [ -f "$tsv" ] || printf 'engine\twall_s\tuser_s\tsys_s\tpeak_rss_kib\n' >"$tsv"
  for e in $ENGINES; do
    case "$e" in
      colvec)
        need_colvec || continue
        timed "$tsv" "$tag" colvec "$BIN/colvec-bench" --engine colvec \
          --ext "$COLVEC_SO" --work-dir "$WORK" "${ds[@]}" \
          --label "m$dim-default" --options "" --phase load "${REUSE[@]}"
        run "$tag colvec sweep" cvb "${ds[@]}" --label "m$dim-default" \
          --phase query "${sweep[@]}" --ef 0,32,48,64,96,128
        ;;
      hnswlib)
        timed "$tsv" "$tag" hnswlib "$BIN/hnswlib-bench" \
          --work-dir "$WORK" "${ds[@]}" --threads 1 --reuse "${#REUSE[@]}" \
          "${sweep[@]}" --ef 16,32,48,64,96,128
        ;;
      vectorlite)
        timed "$tsv" "$tag" vectorlite "$BIN/colvec-bench" \
          --engine vectorlite --ext "$VECTORLITE_SO" --work-dir "$WORK" \
          --phase load "${REUSE[@]}" "${ds[@]}"
        run "$tag vectorlite query" "$BIN/colvec-bench" --engine vectorlite \
          --ext "$VECTORLITE_SO" --work-dir "$WORK" --phase query \
          "${sweep[@]}" --ef 16,32,48,64,96,128 "${ds[@]}"
        ;;
    esac
  done
  cat "$tsv" >&2
}

# section_million768: 1M x 768 (quick: 50k), 200 queries (million_peers).
section_million768() { million_peers million768 "$M768_N" 768 200; }

# section_million128: 1M x 128 (quick: 100k), 1,000 queries
# (million_peers).
section_million128() { million_peers million128 "$M128_N" 128 1000; }

# timed TSV TAG NAME PROGRAM ARGS...: runs PROGRAM as `run` does (stderr
# to the log), under /usr/bin/time, and appends NAME, wall and CPU seconds
# and peak RSS to TSV (the hnswlib line counts its queries too: one process
# builds and queries). TAG names the section in messages.
timed() {
  local tsv=$1 tag=$2 name=$3 t; shift 3
  t=$(mktemp)
  echo "== $tag $name load" | tee -a "$LOG" >&2
  if /usr/bin/time -f "%e\t%U\t%S\t%M" -o "$t" "$@" >/dev/null 2>>"$LOG"; then
    printf '%s\t%s\n' "$name" "$(tail -1 "$t")" >>"$tsv"
  else
    echo "bench.sh: FAILED: $tag $name load (see $LOG)" >&2
    FAILED=$((FAILED+1))
  fi
  rm -f "$t"
}

# section_int8: indexed vs exact KNN on int8[128] and bit[256] columns
# (tool/bench/int8-bench.tcl) into <out>/int8.txt.
section_int8() {
  need_colvec || return 0
  echo "== int8 and bit columns" | tee -a "$LOG" >&2
  { tclsh "$ROOT/tool/bench/int8-bench.tcl" "$COLVEC_SO" --n "$INT8_N" \
      --db "$WORK/int8-bench.db" &&
    tclsh "$ROOT/tool/bench/int8-bench.tcl" "$COLVEC_SO" --n "$INT8_N" \
      --type bit --dim 256 --db "$WORK/int8-bench.db"; } \
    | tee "$OUT/int8.txt" >&2 || FAILED=$((FAILED+1))
}

# matched NAME: for dataset NAME, the best QPS of each engine/config at
# recall@10 >= 0.90, 0.95, 0.98, 0.99, 0.995 (the Pareto frontier read at
# those recalls), as a Markdown table to $OUT/NAME-matched.md.
matched() {
  awk -F'\t' -v ds="$1" '
    BEGIN { nT = split("0.90 0.95 0.98 0.99 0.995", aT, " ") }
    NR>1 && $3==ds && $7==10 {
      key = $1 " " $2
      if (!(key in seen)) { seen[key] = 1; aKey[++nKey] = key }
      for (t = 1; t <= nT; t++)
        if ($19 + 0 >= aT[t] + 0 && $16 + 0 > best[key, t] + 0) {
          best[key, t] = $16
          how[key, t] = "ef " $8 (($9 > 0) ? " os " $9 : "")
        }
    }
    END {
      printf "| engine config |"
      for (t = 1; t <= nT; t++) printf " QPS at recall >= %s |", aT[t]
      printf "\n|---|"
      for (t = 1; t <= nT; t++) printf "--:|"
      printf "\n"
      for (i = 1; i <= nKey; i++) {
        printf "| %s |", aKey[i]
        for (t = 1; t <= nT; t++) {
          if ((aKey[i], t) in best)
            printf " %.0f (%s) |", best[aKey[i], t], how[aKey[i], t]
          else printf " – |"
        }
        printf "\n"
      }
    }' "$TSV" >"$OUT/$1-matched.md"
  cat "$OUT/$1-matched.md" >&2
}

# frontier NAME: for dataset NAME, one block of points per engine (the
# colvec table labelled $COLVEC_MAIN, every peer), each the upper envelope
# of its sweep: a point is kept when no point of the same engine has both
# a higher-or-equal recall and a higher QPS. Writes
# $OUT/plot-NAME/<engine>.dat ("recall qps ef os p50_ms", by recall) and
# $OUT/plot-NAME/<engine>.default ("recall qps p50_ms label") with the engine's
# default point: colvec's defaults row (no ef, no oversampling given),
# hnswlib's and vectorlite's ef 10 (both libraries' default ef), the one
# exact point of sqlite-vec.
frontier() {
  local name=$1 dir=$OUT/plot-$1
  rm -rf "$dir"
  mkdir -p "$dir"
  awk -F'\t' -v ds="$name" -v main="$COLVEC_MAIN" -v dir="$dir" '
    NR > 1 && $3 == ds && $7 == 10 {
      e = $1
      if (e == "colvec" && $2 != main) next
      if (e == "colvec" && $8 == 0 && $9 == 0)
        print $19, $16, $17, "colvec defaults" > (dir "/" e ".default")
      else if ((e == "hnswlib" || e == "vectorlite") && $8 == 10)
        print $19, $16, $17, e " ef 10 (its default)" > (dir "/" e ".default")
      else if (e == "sqlite-vec")
        print $19, $16, $17, "sqlite-vec (exact)" > (dir "/" e ".default")
      n[e]++; r[e, n[e]] = $19 + 0; q[e, n[e]] = $16 + 0
      ef[e, n[e]] = $8; os[e, n[e]] = $9; p50[e, n[e]] = $17
    }
    END {
      for (e in n) {
        for (i = 1; i <= n[e]; i++) {
          keep = 1
          for (j = 1; j <= n[e] && keep; j++)
            if (j != i && r[e, j] >= r[e, i] && q[e, j] > q[e, i]) keep = 0
          if (keep) print r[e, i], q[e, i], ef[e, i], os[e, i], p50[e, i] | \
            ("sort -g -k1,1 -k2,2 > \"" dir "/" e ".dat\"")
        }
      }
    }' "$TSV"
}

# plot NAME TITLE: recall@10 (x) vs QPS (log y) of dataset NAME, one line
# per engine (its frontier), each engine's default point marked and
# labelled, to $OUT/NAME.png.
plot() {
  local name=$1 title=$2 dir=$OUT/plot-$1 series="" labels="" e i=0 c
  local colors=("#1f77b4" "#d62728" "#2ca02c" "#9467bd")
  frontier "$name"
  for e in colvec hnswlib vectorlite sqlite-vec; do
    [ -s "$dir/$e.dat" ] || continue
    c=${colors[$i]}
    i=$((i + 1))
    series="$series${series:+, }'$dir/$e.dat' using 1:2 with linespoints"
    series="$series lc rgb '$c' pt 7 ps 0.8 lw 2 title '$e'"
    if [ -s "$dir/$e.default" ]; then
      series="$series, '$dir/$e.default' using 1:2 with points"
      series="$series lc rgb '$c' pt 6 ps 3 lw 2 notitle"
      # labels above their point, vectorlite's below (it often shares
      # hnswlib's point), right-aligned near recall 1
      labels="$labels$(awk -v c="$c" -v dy="$([ "$e" = vectorlite ] && echo -1.2 || echo 1.2)" '{ l = $4; for (i = 5; i <= NF; i++)
        l = l " " $i; side = ($1 >= 0.99) ? "right offset -1.5, " dy : "left offset 1.5, " dy
        printf "set label \"%s\" at %s, %s %s tc rgb \"%s\"\n", l, $1, $2, side, c }' \
        "$dir/$e.default")"$'\n'
    fi
  done
  [ -n "$series" ] || return 0
  gnuplot <<GNUPLOT
set terminal pngcairo size 900,600 noenhanced font ',11'
set output '$OUT/$name.png'
set title '$title: recall@10 vs queries per second, one query thread'
set xlabel 'recall@10'
set ylabel 'queries per second (log scale)'
set logscale y
set key bottom left
set grid
set xrange [*:1.002]
$labels
plot $series
GNUPLOT
  echo "bench.sh: wrote $OUT/$name.png" >&2
}

# summary NAME TITLE: appends to $OUT/summary.md the section of dataset
# NAME: per engine (the frontier of plot), the QPS of the fastest measured
# point with recall@10 >= 0.95 and >= 0.99 (no interpolation: the best
# point that meets the recall, with its ef/oversampling), the engine's
# default point, and the command that produced the figures.
summary() {
  local name=$1 title=$2 dir=$OUT/plot-$1 e
  frontier "$name"
  {
    echo "### $title"
    echo
    echo "| engine | QPS at recall@10 >= 0.95 | QPS at recall@10 >= 0.99 | default: recall@10 / QPS |"
    echo "|---|--:|--:|--:|"
    for e in colvec hnswlib vectorlite sqlite-vec; do
      [ -s "$dir/$e.dat" ] || continue
      awk -v e="$e" -v dflt="$dir/$e.default" '
        function at(t,   i, b, h) {
          b = -1
          for (i = 1; i <= n; i++)
            if (r[i] >= t && q[i] > b) { b = q[i]; h = i }
          if (b < 0) return "not reached"
          if (e == "sqlite-vec")
            return sprintf("%.1f (p50 %.1f ms; exact)", b, p50[h])
          if (ef[h] == 0)
            return sprintf("%.0f (p50 %.3f ms; defaults, recall %.3f)", b,
                           p50[h], r[h])
          return sprintf("%.0f (p50 %.3f ms; ef %d%s, recall %.3f)", b,
                         p50[h], ef[h],
                         os[h] > 0 ? ", oversampling " os[h] : "", r[h])
        }
        { n++; r[n] = $1; q[n] = $2; ef[n] = $3; os[n] = $4; p50[n] = $5 }
        END {
          d = "–"
          if ((getline line < dflt) > 0) {
            split(line, a, " ")
            d = sprintf(a[2] < 10 ? "%.4f / %.1f" : "%.4f / %.0f", a[1], a[2])
            d = d sprintf(" (p50 %.3f ms)", a[3])
            if (e == "hnswlib" || e == "vectorlite") d = d " (ef 10)"
            if (e == "colvec") d = d " (no ef, no oversampling)"
          }
          printf "| %s | %s | %s | %s |\n", e, at(0.95), at(0.99), d
        }' "$dir/$e.dat"
    done
    echo
    echo "Reproduce: \`$CMDLINE\`"
    echo
  } >>"$OUT/summary.md"
}

# section_compare: the colvec build of --compare (old) against the one
# measured (new) at their defaults on the same tables (Fashion-MNIST's
# default table and, when --s1536 loaded it or COMPARE_SETS asks, the
# 200k x 1536 one; missing tables are loaded by the new build), in
# $ROUNDS rounds, old then new in each round, each run the fastest of
# $RUNS passes. Writes <out>/compare.tsv (every run), compare.md (per
# round: old/new QPS, recall, ratio; then median and range of the ratios).
section_compare() {
  local set ds label round which so
  [ -n "$COMPARE_SO" ] || { echo "bench.sh: --compare needs OLD.so" >&2; return 1; }
  need_colvec || return 0
  : >"$OUT/compare.tsv"
  for set in $COMPARE_SETS; do
    case "$set" in
      fmnist) ds=(--dataset fashion-mnist "${FMNIST_SIZE[@]}"); label=default ;;
      s1536) ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
                 --queries 200 --n "$S1536_N"); label=s1536-default ;;
      *) echo "bench.sh: unknown compare set $set" >&2; return 1 ;;
    esac
    run "compare $set load" cvb "${ds[@]}" --label "$label" --options "" \
      --phase load --reuse
    for round in $(seq 1 "$ROUNDS"); do
      for which in old new; do
        if [ "$which" = old ]; then so=$COMPARE_SO; else so=$COLVEC_SO; fi
        # column 2 of the TSV (config) names the build and the round
        run "compare $set $which round $round" "$BIN/colvec-bench" \
          --engine colvec --ext "$so" --work-dir "$WORK" "${ds[@]}" \
          --label "$label" --phase query --runs "$RUNS" \
          --tsv "$OUT/compare.tsv.tmp" --md /dev/null
        awk -F'\t' -v OFS='\t' -v w="$which" -v r="$round" \
          'NR > 1 { $2 = w " " r; print }' "$OUT/compare.tsv.tmp" \
          >>"$OUT/compare.tsv"
        rm -f "$OUT/compare.tsv.tmp"
      done
    done
  done
  # pair old and new of each round (columns 3 dataset, 16 qps, 19 recall)
  awk -F'\t' '
    { split($2, a, " "); k = $3 SUBSEP a[2]
      if (a[1] == "old") { oq[k] = $16; orr[k] = $19; op[k] = $17 }
      else if (k in oq) {
        if (!($3 in seen)) { seen[$3] = 1; ds[++nds] = $3 }
        n[$3]++; x = $16 / oq[k]; ratio[$3, n[$3]] = x
        qo[$3, n[$3]] = oq[k]; qn[$3, n[$3]] = $16
        po[$3, n[$3]] = op[k]; pn[$3, n[$3]] = $17
        line[$3, n[$3]] = sprintf("| %s | %.0f | %.0f | %.2f | %.3f | %.3f | %.4f | %.4f |",
                                  a[2], oq[k], $16, x, op[k], $17, orr[k], $19)
      } }
    # median of the m values a[1..m] (sorts a)
    function median(a, m,   i, j, t) {
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
      for (d = 1; d <= nds; d++) {
        s = ds[d]; m = n[s]
        printf "#### %s\n\n", s
        print "| round | QPS old | QPS new | QPS new/old | p50 ms old | p50 ms new | recall@10 old | recall@10 new |"
        print "|--:|--:|--:|--:|--:|--:|--:|--:|"
        split("", v); split("", vo); split("", vn); split("", wo); split("", wn)
        for (i = 1; i <= m; i++) {
          print line[s, i]
          v[i] = ratio[s, i]; vo[i] = qo[s, i]; vn[i] = qn[s, i]
          wo[i] = po[s, i]; wn[i] = pn[s, i]
        }
        med = median(v, m); mo = median(vo, m); mn = median(vn, m)
        mpo = median(wo, m); mpn = median(wn, m)
        printf "\nmedian QPS old %.0f (%.0f-%.0f), new %.0f (%.0f-%.0f); ", \
               mo, vo[1], vo[m], mn, vn[1], vn[m]
        printf "new/old per round: median %.2f, range %.2f-%.2f, %d rounds;\n",
               med, v[1], v[m], m
        printf "median p50 old %.3f ms (%.3f-%.3f), new %.3f ms (%.3f-%.3f)\n\n", \
               mpo, wo[1], wo[m], mpn, wn[1], wn[m]
      }
    }' "$OUT/compare.tsv" >"$OUT/compare.md"
  cat "$OUT/compare.md" >&2
}

# storage_copy SRC DST FOLDER: copies database SRC (and its <db>.load) to
# DST, removing DST's earlier copy and folder first; with FOLDER=1 the
# -colvec folder is copied too.
storage_copy() {
  rm -rf "$2" "$2-colvec" "$2-journal" "$2-wal" "$2-shm"
  cp "$1" "$2"
  cp "$1.load" "$2.load"
  if [ "$3" = 1 ]; then cp -r "$1-colvec" "$2-colvec"; fi
}

# section_storage: storage=sidecar vs storage=embedded (see the usage).
# Every row goes to <out>/storage.tsv with its step in the config label:
# <mode> (warm, cache present), <mode>-copy (a fresh copy's first open)
# and embedded-blob (no cache: a read-only mount).
section_storage() {
  local set mode src dst ro ds
  need_colvec || return 0
  : >"$OUT/storage.tsv"
  for set in ${STORAGE_SETS:-fmnist}; do
    case "$set" in
      fmnist) ds=(--dataset fashion-mnist "${FMNIST_SIZE[@]}") ;;
      s1536) ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
                 --queries 200 --n "$S1536_N") ;;
      *) echo "bench.sh: unknown storage set $set" >&2; return 1 ;;
    esac
    for mode in sidecar embedded; do
      run "storage=$mode load ($set)" cvb "${ds[@]}" --label "$mode" \
        --options ", storage=$mode" --phase load "${REUSE[@]}"
      run "storage=$mode warm ($set)" cvb "${ds[@]}" --label "$mode" \
        --phase query --tsv "$OUT/storage.tsv" --md "$MD" --runs "$RUNS"
      src=$(cvb "${ds[@]}" --label "$mode" --phase path)
      dst=$(cvb "${ds[@]}" --label "$mode-copy" --phase path)
      if [ "$mode" = sidecar ]; then
        storage_copy "$src" "$dst" 1
      else
        storage_copy "$src" "$dst" 0
      fi
      run "storage=$mode first open of a copy ($set)" cvb "${ds[@]}" \
        --label "$mode-copy" --phase query --tsv "$OUT/storage.tsv" \
        --md "$MD" --runs "$RUNS"
    done
    # no cache: the embedded copy alone on a read-only mount
    ro=$WORK/storage-ro
    mkdir -p "$ro"
    dst=$("$BIN/colvec-bench" --engine colvec --ext "$COLVEC_SO" \
          --work-dir "$ro" "${ds[@]}" --label embedded-blob --phase path)
    storage_copy "$src" "$dst" 0
    ln -f "$WORK"/gt-*.bin "$ro"/ 2>/dev/null || cp "$WORK"/gt-*.bin "$ro"/
    run "storage=embedded, no cache ($set)" unshare -m --propagation private \
      bash -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
               shift && exec "$@"' _ "$ro" \
      "$BIN/colvec-bench" --engine colvec --ext "$COLVEC_SO" \
      --work-dir "$ro" "${ds[@]}" --label embedded-blob --phase query \
      --tsv "$OUT/storage.tsv" --md "$MD" --runs "$RUNS"
  done
  cat "$OUT/storage.tsv" >>"$TSV"
  # columns: 2 config, 3 dataset, 10 load_s, 12 disk_mb, 15 first_ms,
  # 16 qps, 17 p50_ms, 19 recall
  awk -F'\t' 'BEGIN {
      print "| data set | storage | step | load s | disk MB | first answer ms | QPS | p50 ms | recall@10 |"
      print "|---|---|---|--:|--:|--:|--:|--:|--:|" }
    $1 == "engine" { next }
    { m = $2; st = "warm (cache present)"
      if (m ~ /-copy$/) { sub(/-copy$/, "", m)
        st = (m == "embedded") ? "fresh copy of the database alone (cache rebuilt)" : "fresh copy with its folder" }
      if (m ~ /-blob$/) { sub(/-blob$/, "", m); st = "no cache (read-only mount: read from the database)" }
      printf "| %s | %s | %s | %.0f | %.0f | %.1f | %.0f | %.3f | %.4f |\n",
             $3, m, st, $10, $12, $15, $16, $17, $19 }' \
    "$OUT/storage.tsv" >"$OUT/storage.md"
  cat "$OUT/storage.md" >&2
}

for sec in $SECTIONS; do
  "section_$sec"
done

echo >&2
cat "$MD"
echo "bench.sh: results in $OUT ($FAILED failed step(s))" >&2
[ "$FAILED" = 0 ]
