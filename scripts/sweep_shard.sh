#!/usr/bin/env bash
# Run one shard of a usim sweep as one task of a job array (docs/sweeps.md).
#
#   scripts/sweep_shard.sh SWEEP.toml OUTDIR
#
# The shard index comes from the scheduler:
#   Slurm array job:        SLURM_ARRAY_TASK_ID (0-based with --array=0-N-1)
#                           and SLURM_ARRAY_TASK_COUNT
#   Kubernetes indexed Job: JOB_COMPLETION_INDEX and SHARDS (set in the Job)
#   by hand:                SHARD_INDEX and SHARDS
# It writes OUTDIR/part-<index>-of-<count>.csv; when every task is done,
#   usim sweep merge OUTDIR/part-*.csv -o summary.csv
# joins them into the summary the unsharded sweep would have written.
set -euo pipefail
sweep=${1:?usage: sweep_shard.sh SWEEP.toml OUTDIR}
outdir=${2:?usage: sweep_shard.sh SWEEP.toml OUTDIR}
index=${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-${SHARD_INDEX:?no shard index (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or SHARD_INDEX)}}}
count=${SLURM_ARRAY_TASK_COUNT:-${SHARDS:?no shard count (SLURM_ARRAY_TASK_COUNT or SHARDS)}}
usim=${USIM:-usim}
threads=${SLURM_CPUS_PER_TASK:-}
mkdir -p "$outdir"
exec "$usim" sweep "$sweep" --shard "$index/$count" -q \
  ${threads:+--threads "$threads"} \
  -o "$outdir/part-$index-of-$count.csv"
