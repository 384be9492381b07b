#!/usr/bin/env bash
# Builds with ThreadSanitizer (build-tsan/, or $PREMA_BUILD_DIR-tsan) and runs the test suite
# under it; any data race or lock-order report outside the suppressions
# (tests/sanitizers/tsan.supp) fails its test.
#   bash scripts/test-tsan.sh                  # everything: the whole suite
#   bash scripts/test-tsan.sh --subset         # CI's share: worker pool, transport, objects, lb, hand-off
#   bash scripts/test-tsan.sh -R test_objects  # further ctest args pass through
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PREMA_BUILD_DIR:+$PREMA_BUILD_DIR-tsan}"
build="${build:-$root/build-tsan}"

# TSan slows ranks 5-15x: the whole suite takes ~5 minutes on 2 cores, too much for CI's
# budget next to the normal and ASan suites. CI runs the tests of the concurrent core (one
# binary each: all their ranks counts) and builds only those.
subset=(test_worker_pool test_transport test_objects test_lb_policies test_lb_cluster test_handoff
        test_loopback)
targets=(--target prema_tested)
filter=(-E '^install_consumer$') # an uninstrumented outside project cannot link libprema.a
if [ "${1:-}" = --subset ]; then
  shift
  targets=(--target "${subset[@]}")
  filter=(-R "^($(IFS='|'; echo "${subset[*]}"))_np[0-9]+\$")
fi

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPREMA_SANITIZE=thread
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

# Sanitizer builds scale every test's timeout (tests/CMakeLists.txt) and give it the TSan
# options, suppressions and MCA settings through its environment.
bash "$root/scripts/run-ctest.sh" "$build" "${filter[@]}" "$@"
