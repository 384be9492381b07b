#!/usr/bin/env bash
# Builds with AddressSanitizer + UBSan (build-asan/, or $PREMA_BUILD_DIR-asan) and runs the whole
# suite under them; any sanitizer report fails its test (docs/testing.md, "Sanitizers").
#   bash scripts/test-asan.sh                  # every test but install_consumer
#   bash scripts/test-asan.sh -R test_objects  # further ctest args pass through
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:+$PREMA_BUILD_DIR-asan}"
build="${build:-$root/build-asan}"

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_SANITIZE=address,undefined
# Only what the tests run: the benchmarks and tools no test runs are the normal build's.
cmake --build "$build" -j "$(nproc)" --target prema_tested
# install_consumer links an uninstrumented outside project against the installed library, which
# cannot work with a sanitized libprema.a; the normal suite covers it.
bash "$root/scripts/run-ctest.sh" "$build" -E '^install_consumer$' "$@"
