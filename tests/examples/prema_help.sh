#!/usr/bin/env bash
# Runs a program with --prema-help on 2 ranks: it must exit 0, print the runtime's options once
# (rank 0 only, from the first to the last in the table) and nothing matching ABSENT (what the
# program prints when it runs).
#   prema_help.sh ABSENT MPIEXEC PROGRAM [ARGS...]
set -u
absent=$1 mpiexec=$2
shift 2
out=$("$mpiexec" --oversubscribe --allow-run-as-root -n 2 "$@" --prema-help 2>&1) || {
    echo "FAIL: $* --prema-help exited with status $?"
    echo "$out"
    exit 1
}
echo "$out"
for line in "--prema-workers N  \[PREMA_WORKERS, default 1\]" \
    "--prema-help  \[PREMA_HELP=1, default off\]"; do
    n=$(grep -c -- "^  $line" <<<"$out")
    if [[ $n != 1 ]]; then
        echo "FAIL: '$line' printed $n times, not once"
        exit 1
    fi
done
if grep -E -q -- "$absent" <<<"$out"; then
    echo "FAIL: the program ran (its output matches '$absent')"
    exit 1
fi
echo "OK"
