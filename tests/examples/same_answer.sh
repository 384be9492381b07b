#!/usr/bin/env bash
# Runs an example on several rank counts and checks that each run succeeds and prints the same
# answer line (the first line starting with PREFIX) every time.
#   same_answer.sh PREFIX "1 2 3" MPIEXEC PROGRAM [ARGS...]
set -u
prefix=$1 counts=$2 mpiexec=$3
shift 3
first="" first_np=""
for np in $counts; do
    out=$("$mpiexec" --oversubscribe --allow-run-as-root -n "$np" "$@") || {
        echo "FAIL: $* on $np rank(s) exited with status $?"
        echo "$out"
        exit 1
    }
    echo "$out"
    line=$(grep -m1 "^$prefix" <<<"$out")
    if [[ -z $line ]]; then
        echo "FAIL: no line starting with '$prefix' on $np rank(s)"
        exit 1
    fi
    if [[ -z $first_np ]]; then
        first=$line first_np=$np
    elif [[ $line != "$first" ]]; then
        echo "FAIL: $np rank(s) answered '$line', $first_np rank(s) '$first'"
        exit 1
    fi
done
echo "OK: '$first' on $counts rank(s)"
