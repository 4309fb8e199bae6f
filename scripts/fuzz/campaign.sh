#!/usr/bin/env bash
# A long libFuzzer campaign on a machine with many cores (docs/fuzzing.md, "Campaign").
#   scripts/fuzz/campaign.sh BIN_DIR SEED_DIR DICT_DIR OUT_DIR SECONDS TARGET...
# Runs each TARGET from BIN_DIR for SECONDS with FUZZ_JOBS parallel processes (default: one per
# core), starting from OUT_DIR/corpus/TARGET and SEED_DIR/TARGET, and prints the executions it
# made. FUZZ_MODE picks libFuzzer's parallel mode:
#   jobs (default)  -jobs=N -workers=N: N fuzzing processes share the corpus folder (each reads
#                   what the others add); each logs to OUT_DIR/TARGET-N.workers/fuzz-K.log
#   fork            -fork=N: one parent hands short jobs to N children (about half the executions
#                   per core on the slow targets: each child first re-runs its share of the corpus)
# FUZZ_RUNS (jobs mode): stop once about this many executions are made (each process makes
# FUZZ_RUNS/N), or at SECONDS, whichever comes first.
# Running it again with the same OUT_DIR resumes the campaign in a new segment: the corpus is kept,
# each segment logs to OUT_DIR/TARGET-N.log, and the line printed also sums the executions of every
# segment so far. Findings land in OUT_DIR/findings. Exits 1 when any target found one.
# ASan keeps no allocation stacks (malloc_context_size=0: a quarter more executions on
# interp_fuzz); replay a saved input with the default options for a full report.
set -uo pipefail
bin=$1 seeds=$2 dicts=$3 out=$4 seconds=$5
shift 5
jobs="${FUZZ_JOBS:-$(nproc)}"
mode="${FUZZ_MODE:-jobs}"
mkdir -p "$out/findings"
out="$(cd "$out" && pwd)" seeds="$(cd "$seeds" && pwd)" bin="$(cd "$bin" && pwd)" dicts="$(cd "$dicts" && pwd)"
status=0

# The executions of one segment. Fork mode prints "#EXECS: cov: ..." lines (the last holds the
# total); in jobs mode each process prints "#EXECS ..." lines (its last is its count, or a lower
# bound when it stopped on a finding; with -print_final_stats its exact count), summed.
worker_execs() {
  local e
  e=$(grep -a -E '^stat::number_of_executed_units: ' "$1" | tail -1 | sed -E 's/.*: //')
  [ -n "$e" ] || e=$(grep -a -E '^#[0-9]+' "$1" | tail -1 | sed -E 's/^#([0-9]+).*/\1/')
  echo "${e:-0}"
}
segment_execs() {
  local log=$1 workers="${1%.log}.workers" total=0 w
  if [ -d "$workers" ]; then
    for w in "$workers"/fuzz-*.log; do
      [ -e "$w" ] || continue
      total=$((total + $(worker_execs "$w")))
    done
    echo "$total"
  else
    grep -a -E '^#[0-9]+: cov:' "$log" | tail -1 | sed -E 's/^#([0-9]+):.*/\1/'
  fi
}

# Of a jobs-mode segment's executions (its logs uncut), those that only re-ran the corpus it
# started from: each process's count at its INITED line, or all of them for a process stopped
# before it got there. Every process re-runs the whole corpus, so a short segment on many
# processes can be all replay.
segment_replayed() {
  local workers="${1%.log}.workers" total=0 w i
  for w in "$workers"/fuzz-*.log; do
    [ -e "$w" ] || continue
    i=$(grep -a -E '^#[0-9]+[[:space:]]+INITED' "$w" | head -1 | sed -E 's/^#([0-9]+).*/\1/')
    total=$((total + ${i:-$(worker_execs "$w")}))
  done
  echo "$total"
}

for t in "$@"; do
  case "$t" in
    json_kernel_fuzz | inputs_fuzz) dict="$dicts/json.dict" ;;
    *) dict="$dicts/chi.dict" ;;
  esac
  mkdir -p "$out/corpus/$t" "$seeds/$t"
  n=1
  while [ -e "$out/$t-$n.log" ]; do n=$((n + 1)); done
  log="$out/$t-$n.log"
  flags=(-timeout=20 -rss_limit_mb=2560 -max_len=65536 -dict="$dict" -artifact_prefix="$out/findings/$t-"
    -max_total_time="$seconds" -print_final_stats=1)
  export ASAN_OPTIONS=detect_leaks=1:malloc_context_size=0 PASSBENCH_FUZZ_STATS=1
  if [ "$mode" = fork ]; then
    "$bin/$t" -fork="$jobs" "${flags[@]}" "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1
    rc=$?
  else
    # Workers log to fuzz-K.log in the current folder; a worker stopped by a finding ends the
    # campaign's jobs count for that worker (-jobs equals -workers), the others go on.
    runs=()
    [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs=$(((FUZZ_RUNS + jobs - 1) / jobs)))
    mkdir -p "${log%.log}.workers"
    # The parent's status says nothing of the workers' (detached.sh stop interrupts them all):
    # their logs and the artifacts say whether one found something.
    (cd "${log%.log}.workers" && "$bin/$t" -jobs="$jobs" -workers="$jobs" "${runs[@]}" "${flags[@]}" \
      "$out/corpus/$t" "$seeds/$t") >"$log" 2>&1
    rc=0
    grep -a -l -E '^==[0-9]+==ERROR|passbench fuzz finding|^SUMMARY: ' "${log%.log}.workers"/fuzz-*.log \
      >/dev/null 2>&1 && rc=1
  fi
  total=0
  for l in "$out/$t"-*.log; do
    e=$(segment_execs "$l")
    total=$((total + ${e:-0}))
  done
  echo "$t: segment $n mode=$mode rc=$rc jobs=$jobs seconds=$seconds executions=$(segment_execs "$log") campaign_total=$total"
  if [ "$mode" = fork ]; then
    echo "$t: last: $(grep -a -E '^#[0-9]+: cov:' "$log" | tail -1)"
  else
    echo "$t: segment $n replayed its starting corpus in $(segment_replayed "$log") of those executions"
  fi
  if [ "$rc" -ne 0 ] || ls "$out/findings/$t-"* >/dev/null 2>&1; then
    status=1
    echo "$t: FINDING"
    grep -a -v -E '^#[0-9]+|^INFO:' "$log" "${log%.log}".workers/fuzz-*.log 2>/dev/null | grep -a -B2 -A40 -E \
      'ERROR|finding|SUMMARY' | head -120
  fi
done
exit $status
