#!/usr/bin/env bash
# Builds the latency benchmark if needed, runs it on 2 ranks and writes
# benchmarks/results/latency.json (plus latency.txt, the printed table, and latency.png when
# matplotlib is available).
#
#   benchmarks/run_latency.sh [benchmark options...]     e.g. --iters 2000 --rate-count 200000
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun), MPIRUN_ARGS (extra
# mpirun options, e.g. "--bind-to none").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build-bench}"
[[ "$build" = /* ]] || build="$root/$build"
results="$root/benchmarks/results"
mpirun="${MPIRUN:-mpirun}"

if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target latency -j "$(nproc)"

mkdir -p "$results"
run_as_root=()
if [[ "$(id -u)" = 0 ]]; then
    run_as_root=(--allow-run-as-root)
fi

# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${run_as_root[@]}" ${MPIRUN_ARGS:-} -np 2 "$build/benchmarks/latency" \
    --json "$results/latency.json" "$@" | tee "$results/latency.txt"

# The first python3 with matplotlib draws the plot; without one, the script says so.
python=""
for py in python3 /usr/bin/python3; do
    if command -v "$py" > /dev/null && "$py" -c "import matplotlib" 2> /dev/null; then
        python="$py"
        break
    fi
done
if [[ -z "$python" ]] && command -v python3 > /dev/null; then
    python=python3
fi
if [[ -n "$python" ]]; then
    "$python" "$root/benchmarks/plot_latency.py" "$results/latency.json" "$results/latency.png"
fi
