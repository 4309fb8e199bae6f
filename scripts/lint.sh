#!/usr/bin/env bash
# The house rules CI enforces on every tracked C++ file:
#   scripts/lint.sh format        clang-format 19 would change nothing (.clang-format)
#   scripts/lint.sh tidy [BUILD]  clang-tidy 19 reports nothing in the configured set (.clang-tidy), over every
#                                 translation unit of the product (ir, passes, codegen, runtime, workbench) in
#                                 BUILD's compile_commands.json (default: build) and the headers they include.
#                                 Tests and benchmarks are left out to keep CI's time: they get the compiler's
#                                 warnings and the format check.
#   scripts/lint.sh all [BUILD]   both (what .ci/run does)
#   scripts/lint.sh fix           reformat the tree in place
# An intended exception is marked in the code (NOLINT / NOLINTNEXTLINE with the check's name and the reason).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-all}"
build="${2:-${BUILD_DIR:-$root/build}}"
jobs="$(nproc 2>/dev/null || echo 2)"
cd "$root"

need() {
  if ! command -v "$1" >/dev/null; then
    echo "lint: $1 not found; run scripts/install-deps.sh" >&2
    exit 2
  fi
}

sources() { git ls-files '*.cpp' '*.h'; }

check_format() {
  need clang-format-19
  local bad=()
  while IFS= read -r f; do
    if ! clang-format-19 --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
  done < <(sources)
  if [ ${#bad[@]} -ne 0 ]; then
    echo "lint: ${#bad[@]} file(s) are not formatted; run 'scripts/lint.sh fix' (or clang-format-19 -i FILE):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    return 1
  fi
  echo "lint: format: $(sources | wc -l) files formatted"
}

check_tidy() {
  need clang-tidy-19
  need run-clang-tidy-19
  if [ ! -f "$build/compile_commands.json" ]; then
    echo "lint: $build/compile_commands.json is missing; configure the build first (cmake -S . -B $build)" >&2
    return 2
  fi
  # Every translation unit of the product; generated files in the build tree are not ours.
  # Debian's dtl headers hold a const member function that assigns a member (dtl::Diff::enableTrivial):
  # GCC accepts it as it is never called, clang 19 rejects the definition itself. The units that
  # include dtl are checked with -fdelayed-template-parsing, so clang parses a template's body only
  # where it is instantiated and never sees that one; every other unit is checked as it is compiled.
  local dtl_units=() other_units=()
  while IFS= read -r f; do
    if grep -q '#include <dtl/' "$f"; then dtl_units+=("^$root/${f//./\\.}\$"); else other_units+=("^$root/${f//./\\.}\$"); fi
  done < <(git ls-files 'ir/*.cpp' 'passes/*.cpp' 'codegen/*.cpp' 'runtime/*.cpp' 'workbench/*.cpp')
  local tidy=(run-clang-tidy-19 -p "$build" -j "$jobs" -quiet -warnings-as-errors='*'
    -header-filter="^$root/(ir|passes|codegen|runtime|workbench)/.*\.h$")
  local log
  log="$(mktemp)"
  local start=$SECONDS rc=0
  "${tidy[@]}" "${other_units[@]}" >"$log" 2>&1 || rc=1
  if [ ${#dtl_units[@]} -ne 0 ]; then
    "${tidy[@]}" -extra-arg=-fdelayed-template-parsing "${dtl_units[@]}" >>"$log" 2>&1 || rc=1
  fi
  if [ $rc -ne 0 ]; then
    grep -E "(warning|error):" "$log" | grep -v "^Error while processing" | sort -u >&2 || true
    echo "lint: clang-tidy found the problems above ($((SECONDS - start)) s; full log: $log)" >&2
    return 1
  fi
  echo "lint: tidy: clean ($((SECONDS - start)) s)"
  rm -f "$log"
}

case "$mode" in
  format) check_format ;;
  tidy) check_tidy ;;
  all)
    rc=0
    check_format || rc=1
    check_tidy || rc=1
    exit $rc
    ;;
  fix)
    need clang-format-19
    sources | xargs clang-format-19 -i
    ;;
  *)
    echo "usage: $0 format|tidy|all [BUILD_DIR]|fix" >&2
    exit 2
    ;;
esac
