#!/usr/bin/env bash
# Runs a build's tests one at a time, then prints each test's time against its timeout and fails
# if a test used more than a third of it (scripts/check-test-times.py).
#   bash scripts/run-ctest.sh BUILD_DIR [ctest args...]
# Exits nonzero if a test failed or took too long; the table is printed either way.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=$(cd "$1" && pwd) # ctest takes a relative --output-junit from the build directory
shift

# Tests launch mpiexec with --allow-run-as-root already; the variables cover anything else.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# One test at a time: each is an MPI job of up to 10 oversubscribed ranks with a progress thread
# per rank, and on a 2-core machine parallel jobs mostly steal each other's cores (and their
# timing margins).
junit="$build/Testing/junit.xml"
rm -f "$junit"
status=0
ctest --test-dir "$build" --output-on-failure -j 1 --output-junit "$junit" "$@" || status=$?
if [ "$status" -ne 0 ]; then
  echo "run-ctest: tests failed in $build (ctest exit status $status)" >&2
fi
if [ -f "$junit" ]; then
  python3 "$root/scripts/check-test-times.py" "$build" "$junit" || status=1
else
  echo "run-ctest: ctest wrote no $junit" >&2
  status=1
fi
exit "$status"
