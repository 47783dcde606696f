#!/usr/bin/env bash
# Submits an advplan run as a Slurm array of N shards and a merge job that starts when every shard succeeded.
#
#   experiments/slurm/submit.sh [--dry-run] CONFIG OUT_DIR SHARDS   (--dry-run may come anywhere)
#
# Shard i writes OUT_DIR.shards/shard-i (advplan run --shards N, the index from SLURM_ARRAY_TASK_ID); the merge job
# writes OUT_DIR (advplan merge), byte-identical to a single-process `advplan run CONFIG --out OUT_DIR`.
# A requeued or resubmitted shard resumes from its last checkpoint. --dry-run prints the two sbatch commands
# instead of submitting them. ADVPLAN names the advplan binary (default: advplan on PATH); extra sbatch options
# (partition, account) go in SBATCH_* environment variables, which sbatch reads itself.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dry=0
args=()
for a in "$@"; do  # --dry-run is accepted anywhere among the arguments
  if [[ "$a" == "--dry-run" ]]; then dry=1; else args+=("$a"); fi
done
set -- "${args[@]+"${args[@]}"}"
if [[ $# -ne 3 ]]; then
  echo "usage: submit.sh [--dry-run] CONFIG OUT_DIR SHARDS" >&2
  exit 2
fi
config="$1" out="$2" shards="$3"
if ! [[ "$shards" =~ ^[1-9][0-9]*$ ]]; then
  echo "submit.sh: SHARDS must be a positive integer, not '$shards'" >&2
  exit 2
fi
if [[ ! -f "$config" ]]; then
  echo "submit.sh: $config: config file not found" >&2
  exit 2
fi
config="$(cd "$(dirname "$config")" && pwd)/$(basename "$config")"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

array=(sbatch --parsable "--array=0-$((shards - 1))" "$here/array.sbatch" "$config" "$out" "$shards")
if [[ $dry -eq 1 ]]; then
  printf '%q ' "${array[@]}"
  echo
  job="DRYRUN"
else
  job="$("${array[@]}")"
  job="${job%%;*}"
fi
merge=(sbatch --parsable "--dependency=afterok:$job" "$here/merge.sbatch" "$config" "$out" "$shards")
if [[ $dry -eq 1 ]]; then
  printf '%q ' "${merge[@]}"
  echo
else
  merge_job="$("${merge[@]}")"
  echo "submit.sh: shards in array job $job, merge in job ${merge_job%%;*}; output $out"
fi
