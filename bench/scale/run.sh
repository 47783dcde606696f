#!/usr/bin/env bash
# Scale benchmark of the streaming run path (not a timed test): SCENARIOS scenarios (a multiple of 5) of
# bench/scale/scale.yaml.in, conditions single and greedy@8, R = 50, no council or studies. Prints the wall time,
# the scenario rate and the peak RSS (GNU time) of `advplan run`, one line per size.
#   bench/scale/run.sh [ADVPLAN] [SCENARIOS...]      (default: build/advplan 10000 100000 1000000)
# Needs /usr/bin/time (Debian package time). Each run writes to a temporary directory that is removed after.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/advplan}"
shift || true
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(10000 100000 1000000)
threads="${THREADS:-$(nproc)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '%-10s %-10s %-12s %-14s %s\n' scenarios threads wall_s scenarios_per_s peak_rss_MiB
for n in "${sizes[@]}"; do
  if (( n % 5 != 0 )); then echo "run.sh: $n is not a multiple of 5 (5 templates)" >&2; exit 2; fi
  sed -e "s|@SEED_TO@|$((n / 5))|" -e "s|@TEMPLATE_DIR@|$root/configs/templates|" \
    "$root/bench/scale/scale.yaml.in" >"$work/scale.yaml"
  /usr/bin/time -f '%e %M' -o "$work/time.txt" \
    "$bin" run "$work/scale.yaml" --out "$work/run-$n" --threads "$threads" --progress none --summary streaming 2>"$work/err.txt" ||
    { cat "$work/err.txt" >&2; exit 1; }
  read -r wall rss_kb <"$work/time.txt"
  awk -v n="$n" -v t="$threads" -v w="$wall" -v r="$rss_kb" \
    'BEGIN { printf "%-10d %-10d %-12.1f %-14.1f %.1f\n", n, t, w, (w > 0 ? n / w : 0), r / 1024 }'
  rm -rf "$work/run-$n"
done
