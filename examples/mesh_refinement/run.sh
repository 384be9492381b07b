#!/usr/bin/env bash
# The mesh refinement example's tables in one command: builds it if needed (Release, in
# BUILD_DIR, default build-bench) and runs, each table one process per rank with every policy
# on a fresh runtime after static placement (--all), written to examples/mesh_refinement/results/:
#   1. coupled single-step refinement, 4 ranks x 1 worker, writing the mesh
#      -> np4.{txt,json}, mesh.vtk and mesh.vtk.sides (not kept in git), mesh.png
#   2. the same on 2 and 3 ranks (checks on every rank count; the mesh size varies with the
#      order in which splits arrive) -> np2.{txt,json}, np3.{txt,json}
#   3. multi-step adaptivity, 4 ranks: 20 steps, 10% and 50% of the subdomains refined (and as
#      many coarsened) per step -> np4_adapt10.{txt,json}, np4_adapt50.{txt,json}; when the
#      runtime has --prema-lb-load, every policy runs with declared, measured and hybrid loads
# Each runs the sequence of policies REPEAT times and shows each policy's fastest run.
#
#   examples/mesh_refinement/run.sh [mesh_refinement options...]   (passed to every run)
#
# Environment: BUILD_DIR, MPIRUN, MPIRUN_ARGS as for the benchmarks (benchmarks/bench_env.sh);
# SUBDOMAINS (default 64: 16 per rank on 4 ranks), REPEAT (default 2), STEPS (default 20).
set -euo pipefail

# shellcheck source=examples/common/example_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/example_env.sh" mesh_refinement
common=(--all --subdomains "${SUBDOMAINS:-64}" --repeat "${REPEAT:-2}")
# The multi-step benchmark: no curve (hmin = hmax), the moving front alone makes the load.
adapt=(--hmin 0.05 --fine 0.0015 --adapt-steps "${STEPS:-20}")

run() { # NAME NP [options...]
    local name="$1" np="$2"
    shift 2
    # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
    "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np "$np" "$bin" "${common[@]}" \
        --json "$out/$name.json" "$@" | relative_paths | tee "$out/$name.txt"
}
run np4 4 --vtk "$out/mesh.vtk" "$@"
run np2 2 "$@"
run np3 3 "$@"
# shellcheck disable=SC2086
if "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 1 "$bin" --prema-help 2>&1 |
    grep -q -- --prema-lb-load; then
    adapt+=(--lb-loads "declared,measured,hybrid")
fi
run np4_adapt10 4 "${adapt[@]}" --change 0.1 "$@"
run np4_adapt50 4 "${adapt[@]}" --change 0.5 "$@"

echo "mesh size per rank count (it depends on the order in which splits arrive):"
grep -H '^mesh (none): ' "$out"/np[234].txt

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/examples/mesh_refinement/plot_mesh.py" "$out/mesh.vtk" "$out/mesh.png"
fi
