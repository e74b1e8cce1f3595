#!/bin/bash
# bench.sh — the standard benchmark suite, end to end (doc/BENCHMARKS.md).
#
# Installs the peers (tool/bench-setup.sh), builds colvec-bench,
# hnswlib-bench and colvec-loadbench into $BENCH_BIN (default <work>/bin),
# snapshots colvec.so there, then runs the sections asked for, one engine
# and one thread at a time, each engine in its own processes (a load
# process, then a query process that reopens the database). Writes
# <out>/results.tsv and results.md (every query configuration), bench.log
# (each step's stderr, with its "first-query" timing line), prefault.tsv,
# loadbench.tsv, h2h.tsv, access.tsv/.md, s1536-peers.tsv, filters.txt,
# int8.txt, fashion-mnist-matched.md, h2h-matched.md and the recall-vs-QPS
# plot <out>/fashion-mnist.png.
#
# usage: tool/bench.sh [--quick] [--all | --fmnist --h2h --s1536 --access
#                      --prefault --loadbench --million --int8] [--reuse]
#                      [--colvec PATH]
#                      [--engines "LIST"] [--work DIR] [--out DIR]
#   (no section)  --fmnist only
#   --fmnist      Fashion-MNIST 60k x 784, l2, 1,000 queries: colvec int8
#                 (default), none and bit; hnswlib, vectorlite (ef sweeps);
#                 sqlite-vec (brute force, 200 queries)
#   --h2h         after --fmnist: colvec default vs hnswlib interleaved ef
#                 by ef, 5 passes each (the matched-recall ratio)
#   --s1536       synthetic 200k x 1536 (64 clusters, seed 1, 200 queries):
#                 colvec default vs its own exact scan and quantize=bit;
#                 native hnswlib at ef 10 on the first 50k rows; the peers
#                 on the full set, then interleaved ef by ef with colvec
#                 (<out>/s1536-peers.tsv)
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
#   --int8        int8[128] and bit[256] columns (50k rows): indexed vs
#                 exact (<out>/int8.txt)
#   --all         every section
#   --quick       small sizes (a few minutes), one timed pass
#   --reuse       keep databases already loaded (their <db>.load exists)
#   --colvec      colvec.so to measure (default <repo>/build/colvec.so,
#                 <repo>/colvec.so or <repo>/.libs/colvec.so)
#   --engines     subset of "colvec sqlite-vec vectorlite hnswlib" (--fmnist)
#   --work DIR    databases, ground truth, peers (default <repo>/bench-data)
#   --out DIR     results folder (default <work>/results-quick|full)
# Each timed configuration runs its queries RUNS times (quick 1, full 3) and
# keeps the fastest pass: the machine is shared, so the fastest is the least
# disturbed. Environment: COLVEC_CONFIGS overrides the Fashion-MNIST colvec
# table-option sets, one per line, "label|options|oversampling list".
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
QUICK=0
REUSE=()
SECTIONS=""
COLVEC_SO=""
ENGINES="colvec sqlite-vec vectorlite hnswlib"
WORK=$ROOT/bench-data
OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --reuse) REUSE=(--reuse) ;;
    --all) SECTIONS="fmnist h2h s1536 access prefault loadbench million int8" ;;
    --fmnist|--h2h|--s1536|--access|--prefault|--loadbench|--million|--int8)
      SECTIONS="$SECTIONS ${1#--}" ;;
    --synthetic) SECTIONS="$SECTIONS s1536" ;;  # older name
    --colvec) COLVEC_SO=$2; shift ;;
    --engines) ENGINES=$2; shift ;;
    --work) WORK=$2; shift ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/!p;}' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
SECTIONS=${SECTIONS:-fmnist}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
EF=10,16,24,32,48,64,96,128,256
if [ "$QUICK" = 1 ]; then
  MODE=quick; RUNS=1
  FMNIST_SIZE=(--n 10000 --queries 200); SVEC_QUERIES=200
  S1536_N=20000; S1536_HNSW_N=20000; ACCESS_N=10000; PREFAULT_N=10000
  LOAD_N=100000; LOAD_HNSW_N=20000; MILLION_N=100000; INT8_N=10000
else
  MODE=full; RUNS=3
  FMNIST_SIZE=(--queries 1000); SVEC_QUERIES=200
  S1536_N=200000; S1536_HNSW_N=50000; ACCESS_N=50000; PREFAULT_N=50000
  LOAD_N=1000000; LOAD_HNSW_N=200000; MILLION_N=1000000; INT8_N=50000
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
"$ROOT/tool/bench-setup.sh" "$WORK"
# shellcheck disable=SC1091
. "$WORK/peers.env"
BIN=${BENCH_BIN:-$WORK/bin}
mkdir -p "$BIN"
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE -c "$ROOT/tool/bench_data.c" \
  -o "$BIN/bench_data.o"
# shellcheck disable=SC2046  # pkg-config output is meant to be split
gcc -O2 -std=c99 -Wall -Wextra -D_GNU_SOURCE "$ROOT/tool/colvec-bench.c" \
  "$BIN/bench_data.o" $(pkg-config --cflags --libs sqlite3) -lz -lm \
  -o "$BIN/colvec-bench"
# shellcheck disable=SC2046
gcc -O2 -std=c99 -D_GNU_SOURCE "$ROOT/tool/colvec-loadbench.c" \
  $(pkg-config --cflags --libs sqlite3) -o "$BIN/colvec-loadbench"
# -march=native: hnswlib picks its SIMD kernels at compile time, as in
# ann-benchmarks' build; the prebuilt vectorlite also uses AVX.
g++ -O2 -march=native -std=c++17 "$ROOT/tool/hnswlib-bench.cpp" \
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
  plot fashion-mnist
  matched fashion-mnist
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

# section_s1536: colvec default vs its own exact scan (and quantize=bit) at
# 1536-d; native hnswlib at ef 10 (on fewer rows: its one-thread build of
# 200k x 1536 takes too long) to show the set is not trivial for HNSW.
section_s1536() {
  local ds=(--dataset synthetic --dim 1536 --clusters 64 --seed 1
            --queries 200)
  need_colvec || return 0
  run "s1536 default load" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-default --options "" --phase load "${REUSE[@]}"
  run "s1536 exact load" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-exact --options "index=none quantize=none" \
    --phase load "${REUSE[@]}"
  run "s1536 bit load" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-bit --options "quantize=bit" --phase load "${REUSE[@]}"
  run "s1536 default query" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-default --phase query --tsv "$TSV" --md "$MD" \
    --runs "$RUNS" --ef 0,10,32,128
  run "s1536 exact query" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-exact --phase query --tsv "$TSV" --md "$MD" --runs "$RUNS"
  run "s1536 bit query" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-bit --phase query --tsv "$TSV" --md "$MD" \
    --runs "$RUNS" --oversampling 0,5,10
  run "s1536 hnswlib" "$BIN/hnswlib-bench" --work-dir "$WORK" \
    "${ds[@]}" --n "$S1536_HNSW_N" --threads 2 --reuse "${#REUSE[@]}" \
    --tsv "$TSV" --md "$MD" --ef 10,32,64 --runs "$RUNS"
  # the peers on the full set, side by side (doc/BENCHMARKS.md section 2b;
  # vectorlite builds with one thread: ~6 CPU-minutes at 200k)
  run "s1536 hnswlib full" "$BIN/hnswlib-bench" --work-dir "$WORK" \
    "${ds[@]}" --n "$S1536_N" --threads 2 --reuse "${#REUSE[@]}" \
    --tsv "$TSV" --md "$MD" --ef 10,16,32,48,64,80,96,128 --runs "$RUNS"
  sql_engine vectorlite "$VECTORLITE_SO" "${ds[@]}" --n "$S1536_N" \
    --ef 10,16,32,48,64,80,96,128
  sql_engine sqlite-vec "$SQLITE_VEC_SO" "${ds[@]}" --n "$S1536_N" --runs 1
  run "s1536 colvec sweep" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-default --phase query --tsv "$TSV" --md "$MD" \
    --runs "$RUNS" --ef 0,10,32,80,96,128
  # the three HNSW engines one after another at each ef, so that each
  # ef's three figures share the machine's load (s1536-peers.tsv)
  local ef peers=(--tsv "$OUT/s1536-peers.tsv" --md "$OUT/s1536-peers.md")
  : >"$OUT/s1536-peers.tsv"
  : >"$OUT/s1536-peers.md"
  for ef in 16 32 48 64 96 128; do
    run "s1536 peers ef=$ef colvec" cvb "${ds[@]}" --n "$S1536_N" \
      --label s1536-default --phase query --ef "$ef" --runs "$RUNS" \
      "${peers[@]}"
    run "s1536 peers ef=$ef hnswlib" "$BIN/hnswlib-bench" --work-dir "$WORK" \
      "${ds[@]}" --n "$S1536_N" --reuse 1 --ef "$ef" --runs "$RUNS" \
      "${peers[@]}"
    run "s1536 peers ef=$ef vectorlite" "$BIN/colvec-bench" \
      --engine vectorlite --ext "$VECTORLITE_SO" --work-dir "$WORK" \
      "${ds[@]}" --n "$S1536_N" --phase query --ef "$ef" --runs "$RUNS" \
      "${peers[@]}"
  done
  run "s1536 peers colvec defaults" cvb "${ds[@]}" --n "$S1536_N" \
    --label s1536-default --phase query --runs "$RUNS" "${peers[@]}"
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
# scan, an ef sweep, then filtered KNN (tool/filter-bench.tcl, rowid
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
  tclsh "$ROOT/tool/filter-bench.tcl" "$COLVEC_SO" \
    "$WORK/colvec-m1-default-$key.db" "$WORK/colvec-m1-exact-$key.db" \
    "$((MILLION_N / 50)) $((MILLION_N * 6 / 100)) $((MILLION_N / 10)) $((MILLION_N * 3 / 10))" \
    | tee "$OUT/filters.txt" >&2 || FAILED=$((FAILED+1))
}

# section_int8: indexed vs exact KNN on int8[128] and bit[256] columns
# (tool/int8-bench.tcl) into <out>/int8.txt.
section_int8() {
  need_colvec || return 0
  echo "== int8 and bit columns" | tee -a "$LOG" >&2
  { tclsh "$ROOT/tool/int8-bench.tcl" "$COLVEC_SO" --n "$INT8_N" \
      --db "$WORK/int8-bench.db" &&
    tclsh "$ROOT/tool/int8-bench.tcl" "$COLVEC_SO" --n "$INT8_N" \
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

# plot NAME: recall@10 vs QPS of dataset NAME from the TSV, one line per
# engine/config/oversampling, to $OUT/NAME.png.
plot() {
  local name=$1 dir=$OUT/plot-$1 series=""
  rm -rf "$dir"
  mkdir -p "$dir"
  awk -F'\t' -v ds="$name" -v dir="$dir" '
    NR>1 && $3==ds && $7==10 {
      key = $1 " " $2; if ($9 > 0) key = key " os=" $9
      if ($8 == 0 && $9 == 0 && $1 == "colvec") key = key " (defaults)"
      f = key; gsub(/[^A-Za-z0-9=.-]/, "_", f)
      print $19, $16 >> (dir "/" f ".dat")
      if (!(f in seen)) { seen[f] = 1; print f "\t" key > (dir "/index") }
    }' "$TSV"
  [ -s "$dir/index" ] || return 0
  while IFS=$'\t' read -r f key; do
    series="$series${series:+, }'$dir/$f.dat' using 1:2"
    series="$series with linespoints title '$key'"
  done <"$dir/index"
  gnuplot <<GNUPLOT
set terminal pngcairo size 1100,750 noenhanced
set output '$OUT/$name.png'
set title 'recall@10 vs QPS, one query thread: $name ($MODE)'
set xlabel 'recall@10 (exact ground truth)'
set ylabel 'queries per second (log scale)'
set logscale y
set key below
set grid
set xrange [0.92:1.0005]
set label 1 'colvec bit os=1 (recall 0.73-0.75) is left of this range' at graph 0.02, graph 0.04
set pointsize 1.2
plot $series
GNUPLOT
  echo "bench.sh: wrote $OUT/$name.png" >&2
}

for sec in $SECTIONS; do
  "section_$sec"
done

echo >&2
cat "$MD"
echo "bench.sh: results in $OUT ($FAILED failed step(s))" >&2
[ "$FAILED" = 0 ]
