#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   scripts/bootstrap.sh demo   install what is missing, build, run the main job on a bundled dump
#   scripts/bootstrap.sh test   install what is missing, build, run the whole test suite, build the
#                               libFuzzer targets and run each for FUZZ_SECONDS (default 20; 0 skips),
#                               then the house rules: clang-format and clang-tidy (scripts/lint.sh all;
#                               LINT=0 skips, LINT=format checks only the formatting)
# BUILD_DIR (default: build) and BUILD_TYPE (default: Release) may be set in the environment.
set -euo pipefail

mode="${1:-demo}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" >/dev/null
cmake --build "$build" -j "$jobs"

pb="$build/workbench/passbench"
case "$mode" in
  demo)
    dump="$root/fixtures/dumps/quadrants_issue_example_header.chi"
    inputs="$root/fixtures/dumps/quadrants_issue_example.inputs.json"
    echo "== passbench verify $(basename "$dump")"
    "$pb" verify "$dump"
    echo "== passbench run $(basename "$dump") --inputs $(basename "$inputs")"
    "$pb" run "$dump" --inputs "$inputs"
    echo "== passbench replay $(basename "$dump") --passes=simplify,dce,renumber --time-passes --stats"
    "$pb" replay "$dump" --passes=simplify,dce,renumber --time-passes --stats
    ;;
  test)
    (cd "$build" && ctest --output-on-failure -j "$jobs")
    if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
      PASSBENCH="$pb" bash "$root/scripts/fuzz/libfuzzer.sh" ci "${FUZZ_SECONDS:-20}"
    fi
    case "${LINT:-1}" in
      0) ;;
      format) bash "$root/scripts/lint.sh" format ;;
      *) bash "$root/scripts/lint.sh" all "$build" ;;
    esac
    ;;
  *)
    echo "usage: $0 demo|test" >&2
    exit 2
    ;;
esac
