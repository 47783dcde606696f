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
# A hostile run (the threat: a run mailed to you): a terrain: geo run whose map names are markup, with its MANIFEST
# updated so that it checks out; its site must show the names as text and run none of them.
sed -e "s|framing_mode: metadata|framing_mode: metadata\nterrain: geo|" -e "s|seeds: \[100, 102\]|seeds: [100, 100]|" "$cfg" > "$work/geo.yaml"
"$bin" run "$work/geo.yaml" --out "$work/hostile" --progress none
/usr/bin/python3 - "$work/hostile" <<'PY'
import hashlib, json, os, sys
run = sys.argv[1]
payload = "<img src=x onerror=\"document.title='PWNED'\">"
for name in os.listdir(os.path.join(run, "maps")):
    path = os.path.join(run, "maps", name)
    g = json.load(open(path))
    for f in g.get("features", []):
        f.setdefault("properties", {})["name"] = payload
    open(path, "w").write(json.dumps(g))
lines = []
for line in open(os.path.join(run, "MANIFEST")):
    digest, rel = line.rstrip("\n").split("  ", 1)
    if rel.startswith("maps/"):
        digest = hashlib.sha256(open(os.path.join(run, rel), "rb").read()).hexdigest()
    lines.append(digest + "  " + rel + "\n")
open(os.path.join(run, "MANIFEST"), "w").write("".join(lines))
PY
"$bin" check "$work/hostile" >/dev/null
"$bin" report "$work/hostile" --out "$work/hostile-site"
export HOSTILE_SITE="$work/hostile-site"
# A terrain: geo run of six scenarios with plans kept, whose plan graphs the test measures (plan_layout.mjs): its
# plans have branches whose options hold two actions.
sed -e "s|framing_mode: metadata|framing_mode: metadata\nterrain: geo|" "$cfg" > "$work/layout.yaml"
"$bin" run "$work/layout.yaml" --out "$work/layout" --progress none
"$bin" report "$work/layout" --out "$work/layout-site"
export LAYOUT_SITE="$work/layout-site" LAYOUT_RUN="$work/layout"

# `advplan view` of the first run on a free port, for the served half of the test.
"$bin" view "$work/a" --port 0 2> "$work/view.log" &
view_pid=$!
trap 'kill $view_pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 100); do
  url="$(grep -o 'http://127.0.0.1:[0-9]*/[0-9a-f]\{32\}/' "$work/view.log" || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "advplan view did not start: $(cat "$work/view.log")" >&2; exit 1; }
NODE_PATH="$modules" node "$src/tests/browser/report_test.mjs" "$work/site" "$work/a" "$work/b" "$work/report.png" "$url"
