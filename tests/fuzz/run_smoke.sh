#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in their own build directory and runs each for a short while from
# the seed corpus in tests/fuzz/corpus/ (the corpus in the repository is never modified: new inputs go to a
# scratch copy). Exits non-zero on the first crash, leak, sanitizer report or uncaught exception.
#   tests/fuzz/run_smoke.sh [SECONDS_PER_TARGET]   (default 30; env: BUILD_DIR, CXX)
# With ADVPLAN_FUZZ_RUNS=N each target instead runs exactly N inputs from the fixed seed 1 (-runs=N -seed=1): the
# same inputs on every machine, so CI passes or fails on the code, not on how far a random search got.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-30}"
build="${BUILD_DIR:-$root/build-fuzz}"
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DADVPLAN_FUZZ=ON -DADVPLAN_BUILD_TESTS=OFF -DADVPLAN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_all

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
status=0
passed=0
failed=0
for target in plan_json config_yaml template_yaml csv llm_body exec_reply geo_tool http_head http_request quiz_answer user_map expert_study played_plans; do
  exe="$build/tests/fuzz/fuzz_$target"
  mkdir -p "$scratch/$target" "$scratch/artifacts-$target"
  echo "== fuzz_$target: ${seconds}s"
  budget=(-max_total_time="$seconds")
  [ -n "${ADVPLAN_FUZZ_RUNS:-}" ] && budget=(-runs="$ADVPLAN_FUZZ_RUNS" -seed=1)
  if ! "$exe" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$scratch/artifacts-$target/" "$scratch/$target" "$here/corpus/$target" \
      >"$scratch/$target.log" 2>&1; then
    echo "fuzz_$target FAILED; last lines of its log:"
    tail -40 "$scratch/$target.log"
    for a in "$scratch/artifacts-$target"/*; do
      [ -e "$a" ] && { mkdir -p "$root/build-fuzz-artifacts"; cp "$a" "$root/build-fuzz-artifacts/"; echo "input kept: build-fuzz-artifacts/$(basename "$a")"; }
    done
    status=1
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|cov:" "$scratch/$target.log" | tail -2 || true
  fi
done
echo "fuzz smoke: $passed passed, $failed failed"
exit "$status"
