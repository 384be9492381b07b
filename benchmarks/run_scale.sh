#!/usr/bin/env bash
# Builds the scale benchmark if needed and runs it at P = 8, 32, 64, 128 and 256 ranks
# (oversubscribed: more ranks than cores, inline progress, one worker per rank). Writes
# benchmarks/results/scale.jsonl (one JSON row per P and operation), scale.txt (the printed
# tables) and scale.png when matplotlib is available. Counts only: on a shared machine the
# counts and RSS are exact, times are not.
#
#   benchmarks/run_scale.sh [benchmark options...]     e.g. --incast-messages 10000
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun), MPIRUN_ARGS (extra
# mpirun options), RANKS (default "8 32 64 128 256").
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build scale

rows="$results/scale.jsonl"
: > "$rows"
: > "$results/scale.txt"
for p in ${RANKS:-8 32 64 128 256}; do
    # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
    "$mpirun" "${as_root[@]}" ${MPIRUN_ARGS:-} --oversubscribe --bind-to none -np "$p" \
        "$build/benchmarks/scale" --json "$results/scale_np$p.jsonl" --check "$@" \
        | relative_paths | tee -a "$results/scale.txt"
    cat "$results/scale_np$p.jsonl" >> "$rows"
    rm "$results/scale_np$p.jsonl"
done

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/benchmarks/plot_scale.py" "$rows" "$results/scale.png"
fi
