# Shared by the benchmarks' run scripts (source it): builds `target` in BUILD_DIR (default
# build-bench, Release) and sets root, build, results, mpirun, as_root and plot_with (the first
# python3 with matplotlib, or python3, whose plot script then says matplotlib is missing).
#   bench_build TARGET
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build-bench}"
[[ "$build" = /* ]] || build="$root/$build"
results="$root/benchmarks/results"
mpirun="${MPIRUN:-mpirun}"
mkdir -p "$results"

as_root=()
if [[ "$(id -u)" = 0 ]]; then
    as_root=(--allow-run-as-root)
fi

bench_build() {
    if [[ ! -f "$build/CMakeCache.txt" ]]; then
        cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
    fi
    cmake --build "$build" --target "$1" -j "$(nproc)"
}

# Filters a run's printed table: paths inside the repository become relative to it, so that the
# results files name no folder of the machine that ran them.
relative_paths() {
    sed "s|$root/||g"
}

plot_with=""
for py in python3 /usr/bin/python3; do
    if command -v "$py" > /dev/null && "$py" -c "import matplotlib" 2> /dev/null; then
        plot_with="$py"
        break
    fi
done
if [[ -z "$plot_with" ]] && command -v python3 > /dev/null; then
    plot_with=python3
fi
