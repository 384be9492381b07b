#!/usr/bin/env bash
# nbody's figures: static placement (policy none) against every registered balancing policy,
# on 2 ranks (one per core here) and 4 ranks (oversubscribed), default problem (4096 particles
# in 64 chunks, the upper half empty, 20 steps). Results: examples/nbody/results/.
#
#   examples/nbody/run.sh [nbody options...]        (passed to every run, e.g. --steps 10)
#
# Environment: BUILD_DIR (default build-bench, Release), MPIRUN (default mpirun), MPIRUN_ARGS
# (extra mpirun options), RANKS (default "2 4").
set -euo pipefail

# shellcheck source=examples/common/example_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/example_env.sh" nbody

: > "$out/nbody.txt"
for np in ${RANKS:-2 4}; do
    # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
    "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np "$np" "$bin" --all \
        --json "$out/nbody_np$np.json" "$@" | relative_paths | tee -a "$out/nbody.txt"
    echo | tee -a "$out/nbody.txt"
done
echo "wrote $out/nbody.txt and $out/nbody_np*.json"
