#!/usr/bin/env bash
# Builds the checkpoint benchmark if needed, runs it on 2 ranks (64 MiB to 1 GiB of object
# state per rank; about 6 GiB of memory and 2 GiB of disk at the largest size, removed after
# each run) and writes benchmarks/results/checkpoint.json and checkpoint.txt (the table).
#
#   benchmarks/run_checkpoint.sh [benchmark options...]     e.g. --sizes 64,256 --repeat 3
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun), MPIRUN_ARGS (extra
# mpirun options), SCRATCH (default BUILD_DIR/checkpoint_bench.tmp: the file system measured).
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build checkpoint

# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${as_root[@]}" --bind-to none ${MPIRUN_ARGS:-} -np 2 "$build/benchmarks/checkpoint" \
    --dir "${SCRATCH:-$build/checkpoint_bench.tmp}" --json "$results/checkpoint.json" "$@" | relative_paths | tee "$results/checkpoint.txt"
