#!/usr/bin/env bash
# Checks that C++ sources are formatted as .clang-format says; changes nothing.
#   bash scripts/check-format.sh              # every tracked .cpp/.hpp/.h file (a few seconds)
#   bash scripts/check-format.sh origin/main  # only the files changed since that ref
# Exits nonzero and lists the lines clang-format would change. To fix a file you changed:
# clang-format -i FILE (never reformat files you did not touch in the same commit).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 2; }

if [ $# -gt 0 ]; then
  mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$1" -- '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h')
fi
if [ ${#files[@]} -eq 0 ]; then
  echo "check-format: no C++ files to check"
  exit 0
fi
if clang-format --dry-run --Werror "${files[@]}"; then
  echo "check-format: ${#files[@]} file(s) formatted"
else
  echo "check-format: the files above are not formatted (clang-format -i FILE)" >&2
  exit 1
fi
