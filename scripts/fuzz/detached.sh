#!/usr/bin/env bash
# One libFuzzer campaign longer than one command where each command's time is capped
# (docs/fuzzing.md, "Campaign"): lanes.sh runs in its own process session, which outlives the
# command that started it while the machine stays up, so later commands only wait for it and the
# campaign is one segment (no resume, no re-merge).
#   scripts/fuzz/detached.sh start BINS WORK LANE...   start lanes.sh in WORK, return at once
#   scripts/fuzz/detached.sh wait WORK SECONDS [DEST]  wait up to SECONDS, printing progress; when
#                                                       the lanes are done, copy their results to DEST
#   scripts/fuzz/detached.sh stop WORK                 end the campaigns now (then `wait` for them)
# Run from the repository root. `wait` exits 0 when the lanes finished with no finding, 1 when
# they finished with one, 3 when they are still running. FUZZ_RESUME_DIR (a folder of the user's
# choosing with resume_TARGET.tgz files; docs/fuzzing.md, "Resuming a campaign") reaches lanes.sh.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Executions so far of each segment (jobs mode: the last count each process printed, summed).
progress() {
  local l w e total
  for l in "$1"/out/*.log; do
    [ -e "$l" ] || continue
    if [ -d "${l%.log}.workers" ]; then
      total=0
      for w in "${l%.log}".workers/fuzz-*.log; do
        [ -e "$w" ] || continue
        e=$(grep -a -E '^stat::number_of_executed_units: ' "$w" | tail -1 | sed -E 's/.*: //')
        [ -n "$e" ] || e=$(grep -a -E '^#[0-9]+' "$w" | tail -1 | sed -E 's/^#([0-9]+).*/\1/')
        total=$((total + ${e:-0}))
      done
      echo "$(basename "$l"): about $total executions in $(ls "${l%.log}".workers | wc -l) processes"
    else
      echo "$(basename "$l"): $(grep -a -E '^#[0-9]+: cov:' "$l" | tail -1)"
    fi
  done
  grep -a -h 'passbench fuzz finding\|^SUMMARY: ' "$1"/out/*.log "$1"/out/*.workers/*.log 2>/dev/null | sort | uniq -c
  uptime
}

case "${1:-}" in
  start)
    bins=$2 work=$3
    shift 3
    mkdir -p "$work"
    setsid nohup bash -c 'bash "$0"/scripts/fuzz/lanes.sh "$@"; echo "rc=$?" >"$2/lanes.rc"' \
      "$root" "$bins" "$work" "$work/results" "$@" >"$work/lanes.log" 2>&1 </dev/null &
    echo "detached: lanes started in $work: $*"
    ;;
  wait)
    work=$2 seconds=$3 dest=${4:-}
    end=$((SECONDS + seconds))
    while [ ! -e "$work/lanes.rc" ] && [ "$SECONDS" -lt "$end" ]; do sleep 5; done
    progress "$work"
    if [ ! -e "$work/lanes.rc" ]; then
      echo "detached: still running"
      exit 3
    fi
    cat "$work/lanes.log"
    [ -n "$dest" ] && cp "$work"/results/* "$dest"/
    grep -q '^rc=0$' "$work/lanes.rc"
    ;;
  stop)
    # libFuzzer ends on SIGINT after printing its final statistics (the exact executions).
    pkill -INT -f "^$2/bin/[a-z_]+_fuzz " || true
    echo "detached: interrupted the fuzzers in $2"
    ;;
  *)
    sed -n 2,12p "$0"
    exit 2
    ;;
esac
