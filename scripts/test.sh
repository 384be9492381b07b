#!/usr/bin/env bash
# The test command for users: installs the dependencies, builds everything once (RelWithDebInfo,
# g++, warnings as errors) and runs the whole test suite, then prints each test's time against
# its timeout. About 15 minutes on a 2-core machine from a fresh clone, packages included.
#   bash scripts/test.sh
# Exits nonzero if the build or any test fails, or a test used more than a third of its timeout.
# PREMA_BUILD_DIR overrides the build directory (default: build/ at the repository root).
# The full matrix (this, then clang++, ASan+UBSan and TSan) is scripts/test-all.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_WERROR=ON
cmake --build "$build" -j "$(nproc)"
bash "$root/scripts/run-ctest.sh" "$build"
