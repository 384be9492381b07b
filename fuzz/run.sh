#!/usr/bin/env bash
# Builds the wire-decoder fuzzer with clang (in build-fuzz/) and runs it for N seconds.
# Usage: fuzz/run.sh [N=60] [extra libFuzzer flags...]
# The work corpus grows in build-fuzz/corpus (seeded from fuzz/corpus, which stays small);
# crash reproducers land in build-fuzz/artifacts/. Prints the number of executions survived.
set -euo pipefail
seconds=${1:-60}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${PREMA_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${PREMA_FUZZ_JOBS:-2}

# Debian ships libFuzzer and the sanitizer runtimes in libclang-rt-N-dev, only a Recommends of
# clang (scripts/install-deps.sh installs without them): say so instead of failing at link time.
if [ ! -e "$(clang++ -print-runtime-dir)/libclang_rt.fuzzer-$(uname -m).a" ]; then
    echo "fuzz/run.sh: clang++ has no libFuzzer; on Debian:" \
        "apt-get install libclang-rt-$(clang++ -dumpversion | cut -d. -f1)-dev" >&2
    exit 1
fi
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
    -DPREMA_BUILD_FUZZ=ON -DPREMA_BUILD_TESTS=OFF -DPREMA_BUILD_EXAMPLES=OFF \
    -DPREMA_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target wire_fuzz -j "$jobs" >/dev/null

mkdir -p "$build/corpus" "$build/artifacts"
log="$build/fuzz.log"
set +e
"$build/fuzz/wire_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -timeout=10 -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/artifacts/" "$@" \
    "$build/corpus" "$here/corpus" >"$log" 2>&1
status=$?
set -e
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
echo "wire_fuzz: ${runs:-?} executions in ${seconds}s, exit status $status (log: $log)"
if [ "$status" -ne 0 ]; then
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -20
fi
exit "$status"
