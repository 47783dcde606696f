#!/usr/bin/env bash
# Regenerates the golden run of tests/run/run_golden_test.cpp: tests/golden/small from tests/data/small.yaml.
# Builds nothing itself. Usage (from anywhere): scripts/update_golden.sh [PATH/TO/advplan]   (default build/advplan)
# Review the diff before committing it: a change there is a change in behaviour (tests/golden/README.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-build/advplan}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
if [[ ! -x "$bin" ]]; then
  echo "update_golden.sh: no advplan binary at $bin (build it first, or pass its path)" >&2
  exit 1
fi
cd "$root"
rm -rf tests/golden/small
"$bin" run tests/data/small.yaml --out tests/golden/small --threads 2
# Host- and time-specific (wall time, thread count, hardware): not part of the golden output.
rm -f tests/golden/small/run_metadata.json
echo "update_golden.sh: wrote $(find tests/golden/small -type f | wc -l) files under tests/golden/small"
