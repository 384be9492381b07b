#!/usr/bin/env bash
# The mesh refinement example in one command: builds it if needed (Release, in BUILD_DIR,
# default build-bench) and runs
#   1. 4 ranks x 1 worker: static placement and every policy (--all), writing the mesh
#      -> examples/mesh_refinement/results/np4.{txt,json}, mesh.vtk (not kept in git), mesh.png
#   2. 2 ranks x 1 worker, the same subdomains: static placement and every policy
#      -> results/np2.{txt,json}
# and checks that both runs made the same mesh (digest of every subdomain's mesh).
#
#   examples/mesh_refinement/run.sh [mesh_refinement options...]   (passed to both runs)
#
# Environment: BUILD_DIR, MPIRUN, MPIRUN_ARGS as for the benchmarks (benchmarks/bench_env.sh);
# SUBDOMAINS (default 64: 16 per rank on 4 ranks).
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../benchmarks/bench_env.sh"
bench_build mesh_refinement
bin="$build/examples/mesh_refinement"
out="$root/examples/mesh_refinement/results"
mkdir -p "$out"
launch=(--oversubscribe --bind-to none "${as_root[@]}")
subdomains=(--subdomains "${SUBDOMAINS:-64}")

# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 4 "$bin" --all "${subdomains[@]}" \
    --vtk "$out/mesh.vtk" --json "$out/np4.json" "$@" | tee "$out/np4.txt"
# shellcheck disable=SC2086
"$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 2 "$bin" --all "${subdomains[@]}" \
    --json "$out/np2.json" "$@" | tee "$out/np2.txt"

four="$(grep '^mesh: ' "$out/np4.txt")"
two="$(grep '^mesh: ' "$out/np2.txt")"
if [[ "$four" != "$two" ]]; then
    echo "run.sh: the meshes differ between 4 and 2 ranks:" >&2
    echo "  $four" >&2
    echo "  $two" >&2
    exit 1
fi
echo "same mesh on 4 and 2 ranks: $four"

if [[ -n "$plot_with" ]]; then
    "$plot_with" "$root/examples/mesh_refinement/plot_mesh.py" "$out/mesh.vtk" "$out/mesh.png"
fi
