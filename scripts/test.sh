#!/usr/bin/env bash
# Installs the dependencies, builds everything (RelWithDebInfo, g++, warnings as errors) and runs
# the whole test suite. Exits nonzero if any step or any test fails.
#   bash scripts/test.sh
# Then the library and the tests with clang++, warnings as errors, and the single-rank unit tests
# (scripts/test-clang.sh, in build-clang/ or $PREMA_BUILD_DIR-clang).
# Then builds everything again with AddressSanitizer+UBSan (build-asan/, or $PREMA_BUILD_DIR-asan)
# and runs the suite once more: any sanitizer report fails its test (see README "Sanitizers").
# PREMA_BUILD_DIR overrides the build directory (default: build/ at the repository root).
# Last, the ThreadSanitizer share of the suite (scripts/test-tsan.sh --subset: worker pool,
# transport, objects, load balancing) in build-tsan/ (or $PREMA_BUILD_DIR-tsan).
# PREMA_SKIP_CLANG=1 skips the clang pass, PREMA_SKIP_ASAN=1 the ASan pass, PREMA_SKIP_TSAN=1
# the TSan pass.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:-$root/build}"

bash "$root/scripts/install-deps.sh"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_WERROR=ON
cmake --build "$build" -j "$(nproc)"

# Tests launch mpiexec with --allow-run-as-root already; the variables cover anything else.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# One test at a time: each is an MPI job of up to 4 oversubscribed ranks with a progress
# thread per rank, and on a 2-core machine parallel jobs mostly steal each other's cores.
status=0
ctest --test-dir "$build" --output-on-failure -j 1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "test.sh: ctest failed (exit status $status)" >&2
fi

if [ "${PREMA_SKIP_CLANG:-0}" != 1 ]; then
  clang_status=0
  bash "$root/scripts/test-clang.sh" || clang_status=$?
  if [ "$clang_status" -ne 0 ]; then
    echo "test.sh: clang build or tests failed (exit status $clang_status)" >&2
    status=$clang_status
  fi
fi
if [ "${PREMA_SKIP_ASAN:-0}" != 1 ]; then
  asan_build="${PREMA_BUILD_DIR:+$PREMA_BUILD_DIR-asan}"
  asan_build="${asan_build:-$root/build-asan}"
  cmake -S "$root" -B "$asan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_SANITIZE=address,undefined
  cmake --build "$asan_build" -j "$(nproc)"
  asan_status=0
  # install_consumer links an uninstrumented outside project against the installed library,
  # which cannot work with a sanitized libprema.a; the normal suite above covers it.
  ctest --test-dir "$asan_build" --output-on-failure -j 1 -E '^install_consumer$' || asan_status=$?
  if [ "$asan_status" -ne 0 ]; then
    echo "test.sh: ASan+UBSan ctest failed (exit status $asan_status)" >&2
    status=$asan_status
  fi
fi
if [ "${PREMA_SKIP_TSAN:-0}" != 1 ]; then
  tsan_status=0
  bash "$root/scripts/test-tsan.sh" --subset || tsan_status=$?
  if [ "$tsan_status" -ne 0 ]; then
    echo "test.sh: TSan ctest failed (exit status $tsan_status)" >&2
    status=$tsan_status
  fi
fi
exit "$status"
