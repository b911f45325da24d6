#!/usr/bin/env bash
# One rank of a TP=2 run, started by mpirun: reads its weight shard and
# writes its output under DIR/<name>.rank<r>/.
# usage: run_rank.sh DIR NAME TX-RUN-ARGS...
set -euo pipefail
dir=$1 name=$2
shift 2
r=${OMPI_COMM_WORLD_RANK:?run under mpirun}
mkdir -p "$dir/$name.rank$r"
exec tx-run "$@" --weights "$dir/rank$r" \
  --inputs "$dir/x.npy,$dir/cos.npy,$dir/sin.npy" \
  --output-dir "$dir/$name.rank$r"
