#!/usr/bin/env bash
# Installs what is missing and builds the CLI (scripts/setup.sh), then builds the tests and what they need
# (the example plug-in) and runs the whole suite with ctest, the install + out-of-tree plug-in test included.
# Usage: bash scripts/test.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh -DADVPLAN_BUILD_TESTS=ON "$@"
jobs="$(nproc)"
echo "test: building the tests with ${jobs} job(s)" >&2
cmake --build build -j"${jobs}" --target advplan_tests
ctest --test-dir build --output-on-failure -j"${jobs}"
