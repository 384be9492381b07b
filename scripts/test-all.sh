#!/usr/bin/env bash
# The full matrix, as CI runs it (.ci/run): the whole suite with g++ (scripts/test.sh), every
# target with clang++ and its single-rank tests (scripts/test-clang.sh), the whole suite under
# ASan+UBSan (scripts/test-asan.sh), the concurrent core under TSan (scripts/test-tsan.sh
# --subset), and the formatting of every C++ file (scripts/check-format.sh). Each test pass checks
# its tests' times against their timeouts. The g++ suite includes the documentation's tests: its
# code blocks compile, its links resolve, and the API reference builds without a warning. About 40 minutes on a
# 2-core machine from a fresh clone.
#   bash scripts/test-all.sh
# Every pass runs even if an earlier one failed; the exit status is nonzero if any did.
# PREMA_SKIP_CLANG=1, PREMA_SKIP_ASAN=1, PREMA_SKIP_TSAN=1 skip a pass.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
status=0
pass() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== test-all: $name"
  if "$@"; then
    echo "== test-all: $name passed in $((SECONDS - start)) s"
  else
    echo "== test-all: $name FAILED after $((SECONDS - start)) s" >&2
    status=1
  fi
}

pass "g++ suite" bash "$root/scripts/test.sh"
[ "${PREMA_SKIP_CLANG:-0}" = 1 ] || pass "clang++" bash "$root/scripts/test-clang.sh"
[ "${PREMA_SKIP_ASAN:-0}" = 1 ] || pass "ASan+UBSan suite" bash "$root/scripts/test-asan.sh"
[ "${PREMA_SKIP_TSAN:-0}" = 1 ] || pass "TSan subset" bash "$root/scripts/test-tsan.sh" --subset
pass "clang-format" bash "$root/scripts/check-format.sh"
exit "$status"
