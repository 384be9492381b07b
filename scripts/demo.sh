#!/usr/bin/env bash
# The two-minute tour: installs what PREMA needs, builds it (Release) and runs the hello example
# on two ranks. Safe to run again: every step is a no-op or incremental the second time.
#   bash scripts/demo.sh
# PREMA_BUILD_DIR overrides the build directory (default: build/ at the repository root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target hello -j "$(nproc)"

# Open MPI refuses to run as root unless told that it is on purpose (containers, CI).
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

echo "== mpirun -np 2 $build/examples/hello"
mpirun --oversubscribe -np 2 "$build/examples/hello"
