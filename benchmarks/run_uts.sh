#!/usr/bin/env bash
# Builds the UTS benchmark if needed and counts each tree on each rank count, writing
# benchmarks/results/uts.json (one object per run: tree, ranks, nodes, seconds, nodes_per_s,
# efficiency, ...), uts.txt (the printed tables) and uts.png (efficiency against ranks, when
# matplotlib is available). Each run times the sequential loop on rank 0 first, in the same job;
# uts.txt also has the load average before and after (wall times mean little on a busy machine).
#
#   benchmarks/run_uts.sh [benchmark options...]        e.g. --repeat 3 --chunk 512
#
# Environment: TREES (default "T1 T3"; T1L and T3L are the ~100 M-node ones), RANKS (default
# "1 2"; more ranks than cores are oversubscribed), BUILD_DIR (default build-bench), MPIRUN
# (default mpirun), MPIRUN_ARGS (extra mpirun options, e.g. "--bind-to none").
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build uts

runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
loadavg() {
    echo "load average $1: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u '+%Y-%m-%d %H:%M UTC'))"
}
loadavg before | tee "$results/uts.txt"
for tree in ${TREES:-T1 T3}; do
    for np in ${RANKS:-1 2}; do
        oversubscribe=()
        [[ "$np" -le "$(nproc)" ]] || oversubscribe=(--oversubscribe)
        # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
        "$mpirun" "${as_root[@]}" "${oversubscribe[@]}" ${MPIRUN_ARGS:-} -np "$np" \
            "$build/benchmarks/uts/uts" --tree "$tree" --json "$runs/$tree-$np.json" "$@" \
            | relative_paths | tee -a "$results/uts.txt"
    done
done
loadavg after | tee -a "$results/uts.txt"
# One JSON array of every run, in the order run.
{
    echo "["
    for tree in ${TREES:-T1 T3}; do
        for np in ${RANKS:-1 2}; do
            cat "$runs/$tree-$np.json"
        done
    done | paste -sd, -
    echo "]"
} > "$results/uts.json"

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/benchmarks/plot_uts.py" "$results/uts.json" "$results/uts.png"
fi
