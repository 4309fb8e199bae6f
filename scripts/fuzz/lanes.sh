#!/usr/bin/env bash
# Several libFuzzer campaigns side by side on one many-core machine, resumable from tarballs
# (docs/fuzzing.md, "Campaign").
#   scripts/fuzz/lanes.sh BINS WORK OUT LANE...
# BINS: a folder or a .tar.xz holding the fuzz targets (and any library they need).
# WORK: the working folder (binaries, seeds from fixtures/, corpora, segment logs).
# OUT:  where the results go: lane<N>.txt (campaign.sh's lines), tails.tgz (the end of every
#       segment log and the findings), resume_<target>.tgz (corpus and segment logs).
# LANE: "target:jobs:seconds[:runs[:nice]][,...]"; lanes run in parallel, the segments of one lane
#       one after another (campaign.sh with `jobs` processes; a segment stops at `seconds` or after
#       about `runs` executions; `nice` 19 lets a lane use only the cores the others leave idle).
# A resume_<target>.tgz in FUZZ_RESUME_DIR (when set: a folder of the user's choosing, outside the
# tree, e.g. holding a tarball restored from git history) is unpacked into an empty WORK first, so
# a campaign goes on from its corpus on a fresh machine, and campaign.sh sums its segments.
# Run from the repository root. Exits 1 when any lane found something.
set -uo pipefail
bins=$1 work=$2 out=$3
shift 3
mkdir -p "$work/bin" "$out"
if [ -d "$bins" ]; then cp -n "$bins"/* "$work/bin/"; elif [ ! -e "$work/bin/.unpacked" ]; then
  tar -xJf "$bins" -C "$work/bin" && touch "$work/bin/.unpacked"
fi
export LD_LIBRARY_PATH="$work/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ ! -d "$work/out" ]; then
  mkdir -p "$work/out"
  for r in "${FUZZ_RESUME_DIR:-/nonexistent}"/resume_*.tgz; do [ -e "$r" ] && tar -xzf "$r" -C "$work/out"; done
fi
for t in text_fuzz passes_fuzz interp_fuzz codegen_fuzz; do
  [ -d "$work/seeds/$t" ] && continue
  mkdir -p "$work/seeds/$t"
  while IFS= read -r f; do cp "$f" "$work/seeds/$t/$(echo "${f#fixtures/}" | tr / _)"; done \
    < <(find fixtures -name '*.chi' -o -name '*.log')
  if [ -d "tests/fuzz/regressions/$t" ]; then cp "tests/fuzz/regressions/$t"/* "$work/seeds/$t/"; fi
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
i=0
pids=()
for lane in "$@"; do
  i=$((i + 1))
  (
    rc=0
    for seg in ${lane//,/ }; do
      IFS=: read -r t j s r nz <<<"$seg"
      FUZZ_JOBS=$j FUZZ_RUNS=${r:-} nice -n "${nz:-0}" bash "$root/scripts/fuzz/campaign.sh" "$work/bin" "$work/seeds" "$root/tests/fuzz" \
        "$work/out" "$s" "$t" || rc=1
    done
    exit $rc
  ) >"$out/lane$i.txt" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
tails=$(mktemp -d)
mkdir -p "$tails/tails"
for l in "$work/out"/*.log "$work/out"/*.workers/*.log; do
  [ -e "$l" ] || continue
  name=$(basename "$l")
  case "$l" in *.workers/*) name="$(basename "$(dirname "$l")")_$name" ;; esac
  { grep -a -v -E '^#[0-9]+|^INFO:' "$l" | tail -60; grep -a -E '^#[0-9]+' "$l" | tail -3; } >"$tails/tails/$name"
done
cp -r "$work/out/findings" "$tails/tails/" 2>/dev/null
tar -czf "$out/tails.tgz" -C "$tails" tails
rm -rf "$tails"
for t in passes_fuzz interp_fuzz codegen_fuzz text_fuzz; do
  [ -d "$work/out/corpus/$t" ] || continue
  (cd "$work/out" && tar -czf "$out/resume_$t.tgz" "corpus/$t" "$t"-*.log $(ls -d "$t"-*.workers 2>/dev/null))
done
cat "$out"/lane*.txt
exit $status
