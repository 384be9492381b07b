#!/usr/bin/env bash
# Builds everything with ThreadSanitizer (build-tsan/, or $PREMA_BUILD_DIR-tsan) and runs the
# test suite under it; any data race report outside Open MPI fails its test
# (suppressions: tests/sanitizers/tsan.supp). Not run by CI (.ci/run): too slow for its budget.
#   bash scripts/test-tsan.sh [ctest args, e.g. -R 'test_transport|test_objects']
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:+$PREMA_BUILD_DIR-tsan}"
build="${build:-$root/build-tsan}"

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_SANITIZE=thread
cmake --build "$build" -j "$(nproc)"

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Sanitizer builds give every test three times its normal timeout (tests/CMakeLists.txt).
# install_consumer (an uninstrumented outside project) cannot link a sanitized libprema.a.
ctest --test-dir "$build" --output-on-failure -j 1 -E '^install_consumer$' "$@"
