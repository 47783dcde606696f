#!/usr/bin/env bash
# The report's browser test (tests/browser/report_test.mjs): two small runs (tests/data/small.yaml with plans kept,
# two run seeds), a report of the first against the second, then Debian's Chromium driven by playwright-core.
# Exits 77 (ctest: skipped) when Chromium, Node or playwright-core is missing; scripts/test.sh installs them.
# Usage: run_report_test.sh ADVPLAN_BINARY SOURCE_DIR WORK_DIR NODE_MODULES
set -euo pipefail
bin="$1" src="$2" work="$3" modules="$4"
if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ] || [ ! -d "$modules/playwright-core" ]; then
  echo "browser test skipped: it needs node, /usr/bin/chromium and $modules/playwright-core (bash scripts/test.sh installs them)" >&2
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cfg="$work/small.yaml"
sed -e "s|template_dir: ../../configs/templates|template_dir: $src/configs/templates|" \
    -e "s|framing_mode: metadata|framing_mode: metadata\ntraces: {plans: true}|" "$src/tests/data/small.yaml" > "$cfg"
sed -e "s|^seed: 20240601|seed: 99|" "$cfg" > "$work/small-b.yaml"
"$bin" run "$cfg" --out "$work/a" --progress none
"$bin" run "$work/small-b.yaml" --out "$work/b" --progress none
"$bin" report "$work/a" --against "$work/b" --out "$work/site"
NODE_PATH="$modules" node "$src/tests/browser/report_test.mjs" "$work/site" "$work/a" "$work/b" "$work/report.png"
