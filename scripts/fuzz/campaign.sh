#!/usr/bin/env bash
# A long libFuzzer campaign on a machine with many cores (docs/fuzzing.md, "Campaign").
#   scripts/fuzz/campaign.sh BIN_DIR SEED_DIR DICT_DIR OUT_DIR SECONDS TARGET...
# Runs each TARGET from BIN_DIR in libFuzzer's fork mode with FUZZ_JOBS jobs (default: one per
# core) for SECONDS, starting from OUT_DIR/corpus/TARGET and SEED_DIR/TARGET, and prints the
# executions it made. Running it again with the same OUT_DIR resumes the campaign in a new
# segment: the corpus is kept, each segment logs to OUT_DIR/TARGET-N.log, and the line printed
# also sums the executions of every segment so far. Findings land in OUT_DIR/findings.
# Exits 1 when any target found one.
set -uo pipefail
bin=$1 seeds=$2 dicts=$3 out=$4 seconds=$5
shift 5
jobs="${FUZZ_JOBS:-$(nproc)}"
mkdir -p "$out/findings"
status=0

# Fork mode prints "#EXECS: cov: ... crash: C/T/O ..." lines; the last one of a log holds its total.
segment_execs() { grep -E '^#[0-9]+: cov:' "$1" | tail -1 | sed -E 's/^#([0-9]+):.*/\1/'; }

for t in "$@"; do
  case "$t" in
    json_kernel_fuzz | inputs_fuzz) dict="$dicts/json.dict" ;;
    *) dict="$dicts/chi.dict" ;;
  esac
  mkdir -p "$out/corpus/$t" "$seeds/$t"
  n=1
  while [ -e "$out/$t-$n.log" ]; do n=$((n + 1)); done
  log="$out/$t-$n.log"
  ASAN_OPTIONS=detect_leaks=1 PASSBENCH_FUZZ_STATS=1 "$bin/$t" -fork="$jobs" -max_total_time="$seconds" \
    -timeout=20 -rss_limit_mb=2560 -max_len=65536 -dict="$dict" -artifact_prefix="$out/findings/$t-" \
    "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1
  rc=$?
  total=0
  for l in "$out/$t"-*.log; do
    e=$(segment_execs "$l")
    total=$((total + ${e:-0}))
  done
  echo "$t: segment $n rc=$rc jobs=$jobs seconds=$seconds executions=$(segment_execs "$log") campaign_total=$total"
  echo "$t: last: $(grep -E '^#[0-9]+: cov:' "$log" | tail -1)"
  if [ "$rc" -ne 0 ] || ls "$out/findings/$t-"* >/dev/null 2>&1; then
    status=1
    echo "$t: FINDING"; grep -v -E '^#[0-9]+|^INFO:' "$log" | tail -40
  fi
done
exit $status
