#!/usr/bin/env bash
# advplan play's browser test (tests/browser/play_test.mjs, docs/PLAY.md "Browser test"): a sitting of three scenarios
# (tests/data/small.yaml with one template and three seeds) played as BLUE in Debian's Chromium through
# playwright-core; then the run `advplan play` wrote must be byte-identical (run_metadata.json aside) to
# `advplan run` of the same config with the same plans given as `plans:FILE` in BLUE's seat.
# Exits 77 (ctest: skipped) when Chromium, Node or playwright-core is missing; scripts/test.sh installs them.
# Usage: run_play_test.sh ADVPLAN_BINARY SOURCE_DIR WORK_DIR NODE_MODULES
set -euo pipefail
bin="$1" src="$2" work="$3" modules="$4"
if ! command -v node >/dev/null || [ ! -x /usr/bin/chromium ] || [ ! -d "$modules/playwright-core" ]; then
  echo "browser test skipped: it needs node, /usr/bin/chromium and $modules/playwright-core (bash scripts/test.sh installs them)" >&2
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cfg="$work/three.yaml"
sed -e "s|template_dir: ../../configs/templates|template_dir: $src/configs/templates|" \
    -e "s|templates: \[urban, air-defense\]|templates: [urban]|" "$src/tests/data/small.yaml" > "$cfg"
grep -q "templates: \[urban\]" "$cfg" || { echo "tests/data/small.yaml changed: no templates line to edit" >&2; exit 1; }

"$bin" play "$cfg" --side blue --out "$work/sitting" --port 0 2> "$work/play.log" &
play_pid=$!
trap 'kill $play_pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(grep -o 'http://127.0.0.1:[0-9]*/[0-9a-f]\{32\}/' "$work/play.log" || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "advplan play did not start: $(cat "$work/play.log")" >&2; exit 1; }
NODE_PATH="$modules" node "$src/tests/browser/play_test.mjs" "$url" "$work/play.png"
# After the third plan the command writes the run and ends by itself.
for _ in $(seq 1 600); do
  kill -0 $play_pid 2>/dev/null || break
  sleep 0.1
done
wait $play_pid || { echo "advplan play failed: $(cat "$work/play.log")" >&2; exit 1; }
trap - EXIT
[ "$(wc -l < "$work/sitting/play_times.csv")" -eq 4 ] || { echo "play_times.csv has not three rows" >&2; exit 1; }
python3 - "$work/sitting/played.jsonl" <<'PY'
import json, sys
plans = [json.loads(l) for l in open(sys.argv[1])]
assert [p["scenario_id"] for p in plans] == ["urban-100", "urban-101", "urban-102"], plans
first, second, third = (p["plan"] for p in plans)
# Scenario 1: made from an empty plan in the editor; its second action moved up to run first.
assert len(first["actions"]) == 2 and first["chain"] == ["a2", "a1"], first
assert {a["priority"] for a in first["actions"]} == {1, 3}, first["actions"]
# Scenario 2: the seed plan with its first two chain steps swapped.
assert second["chain"][:2] == ["a2", "a1"], second["chain"]
# Scenario 3: the seed plan and a branch at its first step over two actions off the chain.
last = third["branches"][-1]
assert last["condition"] == "the bridge is down" and [len(o) for o in last["options"]] == [1, 1], third["branches"]
assert all(o[0] not in third["chain"] for o in last["options"]), third
PY
printf '%s\ndefault_blue: "plans:%s"\n' "$(cat "$cfg")" "$work/sitting/played.jsonl" > "$work/as-set.yaml"
"$bin" run "$work/as-set.yaml" --out "$work/as-set" --progress none
diff -r -x run_metadata.json "$work/as-set" "$work/sitting/run" > "$work/diff.txt" ||
  { echo "the played run differs from the run of its plans as plans:FILE:" >&2; head -20 "$work/diff.txt" >&2; exit 1; }
echo "browser.play: three scenarios played; the run is byte-identical to plans:FILE's"
