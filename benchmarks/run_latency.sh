#!/usr/bin/env bash
# Builds the latency benchmark if needed, runs it on 2 ranks and writes
# benchmarks/results/latency.json (plus latency.txt, the printed table, and latency.png when
# matplotlib is available). Then the ping-pong again over Open MPI's TCP transport
# (--mca btl tcp,self: the path between two nodes without a fast fabric; here over the loopback),
# default mode against raw MPI in the same job: latency_tcp.json and latency_tcp.txt.
#
#   benchmarks/run_latency.sh [benchmark options...]     e.g. --iters 2000 --rate-count 200000
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun), MPIRUN_ARGS (extra
# mpirun options, e.g. "--bind-to none").
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build latency

# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${as_root[@]}" ${MPIRUN_ARGS:-} -np 2 "$build/benchmarks/latency" \
    --json "$results/latency.json" "$@" | relative_paths | tee "$results/latency.txt"

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/benchmarks/plot_latency.py" "$results/latency.json" "$results/latency.png"
fi

# shellcheck disable=SC2086
"$mpirun" "${as_root[@]}" ${MPIRUN_ARGS:-} --mca btl tcp,self -np 2 "$build/benchmarks/latency" \
    --modes auto --no-rate --no-handoff --json "$results/latency_tcp.json" "$@" \
    | relative_paths | tee "$results/latency_tcp.txt"
