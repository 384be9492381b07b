#!/usr/bin/env bash
# Builds with clang++ in build-clang/ (or $PREMA_BUILD_DIR-clang) with warnings as errors
# (-DPREMA_WERROR=ON), then runs tests; a warning fails the build and so the script.
#   bash scripts/test-clang.sh          # CI's share: every target (Debug), single-rank unit tests
#   bash scripts/test-clang.sh --all    # every target (RelWithDebInfo), the whole suite
#   bash scripts/test-clang.sh --all -R test_objects  # further ctest args pass through
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:+$PREMA_BUILD_DIR-clang}"
build="${build:-$root/build-clang}"

# CI's share builds every target at -O0 without debug information: clang's warnings depend on
# neither, and a test then compiles in 60% of the time -O0 -g takes. The single-rank unit tests
# take seconds; the multi-rank suite runs in the g++ trees.
build_type=Debug
flags=(-DCMAKE_CXX_FLAGS_DEBUG=-O0)
filter=(-R '_np1$')
if [ "${1:-}" = --all ]; then
  shift
  build_type=RelWithDebInfo
  flags=()
  filter=()
fi

bash "$root/scripts/install-deps.sh"
# CGAL's configuration warns about any build type but Release; -O0 is deliberate here.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE="$build_type" \
  "${flags[@]}" -DPREMA_WERROR=ON -DCGAL_DO_NOT_WARN_ABOUT_CMAKE_BUILD_TYPE=TRUE
cmake --build "$build" -j "$(nproc)"

bash "$root/scripts/run-ctest.sh" "$build" "${filter[@]}" "$@"
