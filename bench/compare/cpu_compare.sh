#!/usr/bin/env bash
# CPU and wall time of two advplan builds side by side, interleaved (A, B, A, B, ...), median of N runs each:
#   bench/compare/cpu_compare.sh OLD_SOURCE_DIR NEW_SOURCE_DIR [N]
# Each SOURCE_DIR is a checkout with its build in SOURCE_DIR/build (e.g. a worktree of 75602e5:
#   git worktree add --detach /tmp/old 75602e5 && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=Release &&
#   cmake --build /tmp/old/build --target advplan).
# Cases: the full paper config (each build's configs/experiments/paper.yaml, council and studies included) and the
# bench subset (subset.yaml.in), at --threads 1 (CPU = user + sys) and, for the new build, --threads 2 (wall
# speed-up over --threads 1). Prints one line per case; docs/RESULTS.md "Speed" quotes them.
set -euo pipefail
old="$(cd "$1" && pwd)"; new="$(cd "$2" && pwd)"; n="${3:-5}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for side in old new; do
  src="${!side}"
  sed "s#@TEMPLATE_DIR@#$src/configs/templates#" "$here/subset.yaml.in" > "$tmp/subset-$side.yaml"
  cp "$src/configs/experiments/paper.yaml" "$tmp/paper-$side.yaml"
  sed -i "s#template_dir: ../templates#template_dir: $src/configs/templates#" "$tmp/paper-$side.yaml"
done
measure() {  # side config threads -> "cpu wall" in seconds, to the millisecond (getrusage of the child, not
             # /usr/bin/time's 10 ms steps)
  local bin="${!1}/build/advplan"; rm -rf "$tmp/out"
  /usr/bin/python3 - "$bin" run "$tmp/$2-$1.yaml" --out "$tmp/out" --threads "$3" <<'PY'
import resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{ru.ru_utime + ru.ru_stime:.4f} {wall:.4f}")
PY
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for cfg in paper subset; do
  : > "$tmp/old1"; : > "$tmp/new1"; : > "$tmp/new2"
  for _ in $(seq "$n"); do
    measure old "$cfg" 1 >> "$tmp/old1"
    measure new "$cfg" 1 >> "$tmp/new1"
    measure new "$cfg" 2 >> "$tmp/new2"
  done
  oc=$(cut -d' ' -f1 "$tmp/old1" | median); nc=$(cut -d' ' -f1 "$tmp/new1" | median)
  w1=$(cut -d' ' -f2 "$tmp/new1" | median); w2=$(cut -d' ' -f2 "$tmp/new2" | median)
  awk -v c="$cfg" -v oc="$oc" -v nc="$nc" -v w1="$w1" -v w2="$w2" -v n="$n" 'BEGIN {
    printf "%-7s CPU at 1 thread: old %.3f s, new %.3f s (%.2fx less); new wall: 1 thread %.3f s, 2 threads %.3f s (%.2fx); median of %d\n",
           c, oc, nc, oc / nc, w1, w2, w1 / w2, n }'
done
