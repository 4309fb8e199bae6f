#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of tests/fuzz (docs/fuzzing.md).
#   scripts/fuzz/libfuzzer.sh build                    configure build-fuzz with clang-19 and build the targets
#   scripts/fuzz/libfuzzer.sh run SECONDS [TARGET...]  run each target (default: all) for SECONDS, one at a time
#   scripts/fuzz/libfuzzer.sh ci [SECONDS]             build, then run every target for SECONDS (default 30)
# A run that finds a crash, a sanitizer report, a leak or a timeout exits 1 after printing the
# finding, the input (as text, and base64) and the command that reproduces it.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_WORK (corpora and findings; default
# $FUZZ_BUILD_DIR/work), PASSBENCH (a passbench binary, to turn the .chi seeds into JSON seeds;
# default build/workbench/passbench, skipped when missing), FUZZ_NICE (default 10),
# FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
work="${FUZZ_WORK:-$build/work}"
passbench="${PASSBENCH:-$root/build/workbench/passbench}"
targets_all=(text_fuzz json_kernel_fuzz passes_fuzz interp_fuzz inputs_fuzz codegen_fuzz)

build_targets() {
  local launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-19 \
    -DPASSBENCH_FUZZ=ON "${launcher[@]}" >/dev/null
  local start=$SECONDS
  nice -n "${FUZZ_NICE:-10}" cmake --build "$build" --target fuzz_targets -j "$(nproc 2>/dev/null || echo 2)"
  echo "libfuzzer: fuzz targets built in $((SECONDS - start)) s"
}

# Past findings (tests/fuzz/regressions/TARGET/, one input each) join the seeds, so every run
# replays them first.
copy_regressions() {
  local d="$root/tests/fuzz/regressions/$1"
  if [ -d "$d" ]; then cp "$d"/* "$2"/; fi
}

# The seed corpus of one target, generated from the bundled fixtures and its past findings.
make_seeds() {
  local target=$1 dir="$work/seeds/$1"
  [ -d "$dir" ] && return 0
  mkdir -p "$dir"
  case "$target" in
    text_fuzz | passes_fuzz | interp_fuzz | codegen_fuzz)
      local f
      while IFS= read -r f; do
        cp "$f" "$dir/$(echo "${f#"$root/fixtures/"}" | tr / _)"
      done < <(find "$root/fixtures" -name '*.chi' -o -name '*.log')
      copy_regressions "$target" "$dir" ;;
    json_kernel_fuzz)
      if [ -x "$passbench" ]; then
        local f
        while IFS= read -r f; do
          local out
          out="$dir/$(echo "${f#"$root/fixtures/"}" | tr / _).json"
          "$passbench" print --emit json "$f" >"$out" 2>/dev/null || rm -f "$out"
        done < <(find "$root/fixtures" -name '*.chi')
      else
        echo "libfuzzer: $passbench not found; json_kernel_fuzz starts from the dictionary alone" >&2
      fi ;;
    inputs_fuzz)
      cp "$root"/tests/fuzz/inputs_seeds/*.json "$dir"
      python3 - "$root/fixtures" "$dir" <<'PY'
import json, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for i, p in enumerate(sorted(root.rglob('*.json'))):
    try:
        j = json.loads(p.read_text())
    except Exception:
        continue
    inputs = j.get('inputs') if isinstance(j, dict) and 'kernel' in j else j
    if isinstance(inputs, dict):
        (out / f'{i:04d}.json').write_text(json.dumps(inputs))
PY
      ;;
  esac
}

dict_for() {
  case "$1" in
    json_kernel_fuzz | inputs_fuzz) echo "$root/tests/fuzz/json.dict" ;;
    *) echo "$root/tests/fuzz/chi.dict" ;;
  esac
}

# CI runs a fixed number of executions from a fixed seed (about 20 s each on one CI core), so a
# clean clone replays exactly what was run before the commit; SECONDS only caps the time.
ci_runs() {
  case "$1" in
    text_fuzz) echo 40000 ;;
    json_kernel_fuzz) echo 30000 ;;
    passes_fuzz) echo 2500 ;;
    interp_fuzz) echo 3000 ;;
    inputs_fuzz) echo 200000 ;;
    codegen_fuzz) echo 1500 ;;
    *) echo 1000 ;;
  esac
}

run_target() {
  local target=$1 seconds=$2 bin="$build/tests/fuzz/$1"
  local fixed=""
  [ "$mode" = ci ] && fixed="-seed=1 -runs=$(ci_runs "$target")" && seconds=$((seconds * 4))
  [ -x "$bin" ] || { echo "libfuzzer: $bin is not built (run: $0 build)" >&2; return 2; }
  make_seeds "$target"
  mkdir -p "$work/corpus/$target" "$work/findings"
  local log="$work/$target.log"
  echo "== $target for ${seconds} s (log: $log)"
  local rc=0
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    PASSBENCH_FUZZ_STATS=1 nice -n "${FUZZ_NICE:-10}" "$bin" -max_total_time="$seconds" -timeout=20 \
    -rss_limit_mb=2560 -max_len=65536 -print_final_stats=1 -dict="$(dict_for "$target")" \
    -artifact_prefix="$work/findings/$target-" $fixed ${FUZZ_ARGS:-} "$work/corpus/$target" "$work/seeds/$target" \
    >"$log" 2>&1 || rc=$?
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|^passbench fuzz counters|^  [a-z]' "$log" | sed 's/^/  /' || true
  if [ "$rc" -ne 0 ]; then
    echo "libfuzzer: $target FAILED (exit $rc); the end of its log:"
    grep -v -E '^#[0-9]+|^INFO:' "$log" | tail -60
    local artifact
    artifact="$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')"
    if [ -n "$artifact" ] && [ -f "$artifact" ]; then
      echo "--- reproducer: $artifact ($(wc -c <"$artifact") bytes); as text:"
      head -c 4000 "$artifact"; echo
      echo "--- base64:"; base64 -w 120 "$artifact" | head -40
      echo "--- reproduce with: $bin $artifact"
    fi
    return 1
  fi
}

mode="${1:-}"
case "$mode" in
  build) build_targets ;;
  run | ci)
    seconds="${2:-30}"
    [ "$mode" = ci ] && build_targets
    shift $(( $# >= 2 ? 2 : $# ))
    targets=("$@")
    [ ${#targets[@]} -eq 0 ] && targets=("${targets_all[@]}")
    failed=()
    for t in "${targets[@]}"; do run_target "$t" "$seconds" || failed+=("$t"); done
    if [ ${#failed[@]} -ne 0 ]; then
      echo "libfuzzer: findings in ${failed[*]} (inputs under $work/findings)"
      exit 1
    fi
    echo "libfuzzer: ${#targets[@]} targets ran ${seconds} s each with no finding"
    ;;
  *)
    echo "usage: $0 build | run SECONDS [TARGET...] | ci [SECONDS]" >&2
    exit 2
    ;;
esac
