#!/usr/bin/env bash
# A long libFuzzer campaign on a machine with many cores (docs/fuzzing.md, "Long campaigns").
#   scripts/fuzz/campaign.sh BIN_DIR SEED_DIR DICT_DIR OUT_DIR SECONDS TARGET...
# Runs each TARGET from BIN_DIR in libFuzzer's fork mode with one job per core for SECONDS,
# starting from SEED_DIR/TARGET, and prints the executions it made. Findings land in
# OUT_DIR/findings; the corpus grown in OUT_DIR/corpus/TARGET. Exits 1 when any target found one.
set -uo pipefail
bin=$1 seeds=$2 dicts=$3 out=$4 seconds=$5
shift 5
jobs="${FUZZ_JOBS:-$(nproc)}"
mkdir -p "$out/findings"
status=0
for t in "$@"; do
  case "$t" in
    json_kernel_fuzz | inputs_fuzz) dict="$dicts/json.dict" ;;
    *) dict="$dicts/chi.dict" ;;
  esac
  mkdir -p "$out/corpus/$t"
  log="$out/$t.log"
  ASAN_OPTIONS=detect_leaks=1 PASSBENCH_FUZZ_STATS=1 "$bin/$t" -fork="$jobs" -max_total_time="$seconds" \
    -timeout=20 -rss_limit_mb=2560 -max_len=65536 -dict="$dict" -artifact_prefix="$out/findings/$t-" \
    "$out/corpus/$t" "$seeds/$t" >"$log" 2>&1
  rc=$?
  # Fork mode prints "#EXECS: cov: ... crash: C/T/O ..." lines; the last holds the totals.
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
  echo "$t: rc=$rc jobs=$jobs seconds=$seconds last: $last"
  if [ "$rc" -ne 0 ] || ls "$out/findings/$t-"* >/dev/null 2>&1; then
    status=1
    echo "$t: FINDING"; grep -v -E '^#[0-9]+|^INFO:' "$log" | tail -40
  fi
done
exit $status
