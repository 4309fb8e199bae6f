#!/usr/bin/env bash
# Shrinks a campaign's resume tarball before the next segment (docs/fuzzing.md, "Resuming a
# campaign"): merges the corpus (libFuzzer -merge=1 keeps a unit only for features no earlier unit
# has) and cuts each segment log to what campaign.sh reads (the final statistics, the last counts,
# any report), so the tarball resumes the same campaign with the same total.
#   scripts/fuzz/compact.sh BIN_DIR RESUME_TGZ DEST_TGZ
# BIN_DIR holds the target named by the tarball (resume_TARGET.tgz), built as for the campaign.
# DEST_TGZ goes in a folder of the user's choosing, outside the tree (no corpus is committed),
# which the next segment's FUZZ_RESUME_DIR names.
set -euo pipefail
bin=$1 src=$2 dest=$3
t=$(basename "$src" .tgz)
t=${t#resume_}
[ -x "$bin/$t" ] || { echo "compact: $bin/$t not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in" "$tmp/out/corpus/$t"
tar -xzf "$src" -C "$tmp/in"
before=$(find "$tmp/in/corpus/$t" -type f | wc -l)
ASAN_OPTIONS=detect_leaks=0:malloc_context_size=0 "$bin/$t" -merge=1 -timeout=20 -rss_limit_mb=2560 \
  -max_len=65536 "$tmp/out/corpus/$t" "$tmp/in/corpus/$t" >"$tmp/merge.log" 2>&1 ||
  { tail -20 "$tmp/merge.log" >&2; exit 1; }
cut_log() { # keeps reports, statistics and INITED (where the corpus replay ended), drops the per-execution lines
  { grep -a -v -E '^#[0-9]+|^INFO:|NEW_FUNC|^/' "$1" | tail -60 || true; grep -a -E '^#[0-9]+[[:space:]]+INITED' "$1" || true
    grep -a -E '^#[0-9]+' "$1" | tail -3 || true; } >"$2"
}
for l in "$tmp/in/$t"-*.log; do
  [ -e "$l" ] || continue
  b=$(basename "$l")
  if [ -d "${l%.log}.workers" ]; then
    { grep -a -v -E '^#[0-9]+|NEW_FUNC|^INFO:' "$l" || true; } | tail -200 >"$tmp/out/$b"
    mkdir -p "$tmp/out/${b%.log}.workers"
    for w in "${l%.log}".workers/*.log; do cut_log "$w" "$tmp/out/${b%.log}.workers/$(basename "$w")"; done
  else
    cut_log "$l" "$tmp/out/$b"
  fi
done
(cd "$tmp/out" && tar -czf "$tmp/resume.tgz" corpus "$t"-*.log $(ls -d "$t"-*.workers 2>/dev/null))
mv "$tmp/resume.tgz" "$dest"
echo "compact: $t: corpus $before -> $(find "$tmp/out/corpus/$t" -type f | wc -l) units; $(du -h "$dest" | cut -f1) in $dest"
