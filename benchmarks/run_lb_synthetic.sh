#!/usr/bin/env bash
# Builds the synthetic load-balancing benchmark if needed and runs
#   1. the main configuration: 8 ranks x 1 worker, sleep work, every policy beside static
#      placement (--all) -> benchmarks/results/lb_synthetic.{json,txt,png}
#   2. the preemption run: 4 ranks, 0.5 s spin items, inline progress, yield points on and off
#      -> benchmarks/results/lb_preemption.{json,txt}
#
#   benchmarks/run_lb_synthetic.sh [benchmark options...]   (passed to the main configuration)
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun), MPIRUN_ARGS (extra
# mpirun options), SKIP_PREEMPTION=1 to run only the main configuration.
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build lb_synthetic
bin="$build/benchmarks/lb_synthetic/lb_synthetic"

# More ranks than cores: oversubscribe, and let the OS move ranks between cores.
launch=(--oversubscribe --bind-to none "${as_root[@]}")

# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 8 "$bin" --all --work sleep \
    --json "$results/lb_synthetic.json" "$@" | relative_paths | tee "$results/lb_synthetic.txt"

if [[ "${SKIP_PREEMPTION:-0}" != 1 ]]; then
    # shellcheck disable=SC2086
    "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 4 "$bin" --preemption \
        --json "$results/lb_preemption.json" | relative_paths | tee "$results/lb_preemption.txt"
fi

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/benchmarks/plot_lb.py" "$results/lb_synthetic.json" \
        "$results/lb_synthetic.png"
fi
