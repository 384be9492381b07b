#!/usr/bin/env bash
# The mesh refinement example in one command: builds it if needed (Release, in BUILD_DIR,
# default build-bench) and runs
#   1. 4 ranks x 1 worker: static placement and every policy (--all), writing the mesh
#      -> examples/mesh_refinement/results/np4.{txt,json}, mesh.vtk (not kept in git), mesh.png
#   2. the same with unit load estimates (the balancer knows nothing about the subdomains)
#      -> results/np4_unit.{txt,json}
#   3. 2 ranks x 1 worker, the same subdomains: static placement and every policy
#      -> results/np2.{txt,json}
# and checks that the runs made the same mesh (digest of every subdomain's mesh). Each runs the
# sequence of policies REPEAT times and shows each policy's fastest run.
#
#   examples/mesh_refinement/run.sh [mesh_refinement options...]   (passed to both runs)
#
# Environment: BUILD_DIR, MPIRUN, MPIRUN_ARGS as for the benchmarks (benchmarks/bench_env.sh);
# SUBDOMAINS (default 64: 16 per rank on 4 ranks), REPEAT (default 2).
set -euo pipefail

# shellcheck source=examples/common/example_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/example_env.sh" mesh_refinement
common=(--all --subdomains "${SUBDOMAINS:-64}" --repeat "${REPEAT:-2}")

run() { # NAME NP [options...]
    local name="$1" np="$2"
    shift 2
    # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
    "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np "$np" "$bin" "${common[@]}" \
        --json "$out/$name.json" "$@" | tee "$out/$name.txt"
}
run np4 4 --vtk "$out/mesh.vtk" "$@"
run np4_unit 4 --estimate unit "$@"
run np2 2 "$@"

mesh="$(grep '^mesh: ' "$out/np4.txt")"
for name in np4_unit np2; do
    if [[ "$(grep '^mesh: ' "$out/$name.txt")" != "$mesh" ]]; then
        echo "run.sh: $name made another mesh than np4:" >&2
        grep '^mesh: ' "$out/np4.txt" "$out/$name.txt" >&2
        exit 1
    fi
done
echo "same mesh in every run: $mesh"

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/examples/mesh_refinement/plot_mesh.py" "$out/mesh.vtk" "$out/mesh.png"
fi
