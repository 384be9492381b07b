#!/usr/bin/env bash
# Kill and restart: a run to completion gives the reference checksum; a run that checkpoints
# every EVERY steps and whose rank 1 raises SIGKILL after step KILL must fail; restarting from
# its checkpoints on each rank count of COUNTS (the first is the killed run's) must resume
# part-way, not from step 0, and print the reference checksum.
#   kill_restart.sh EVERY KILL "3 2 4" MPIEXEC PROGRAM [ARGS...]
# PROGRAM takes --run prema, --checkpoint-every, --checkpoint-dir, --kill-rank,
# --kill-after-step and --restart, and prints "checksum: X" and "restarted at step N".
set -u
every=$1 kill=$2 counts=$3 mpiexec=$4
shift 4
read -r np _ <<<"$counts"
dir=$(mktemp -d "${TMPDIR:-/tmp}/prema_kill_restart.XXXXXX")
trap 'rm -rf "$dir"' EXIT
run() {
    local n=$1
    shift
    "$mpiexec" --oversubscribe --allow-run-as-root -n "$n" "$@" --run prema 2>&1
}
answer() { grep -m1 "^checksum:" <<<"$1"; }

out=$(run "$np" "$@") || { echo "FAIL: the reference run exited with status $?"; echo "$out"; exit 1; }
reference=$(answer "$out")
[[ -n $reference ]] || { echo "FAIL: no checksum in the reference run"; echo "$out"; exit 1; }
echo "reference: $reference"

if out=$(run "$np" "$@" --checkpoint-every "$every" --checkpoint-dir "$dir" --kill-rank 1 \
    --kill-after-step "$kill"); then
    echo "FAIL: the run whose rank 1 was killed exited with status 0"
    echo "$out"
    exit 1
fi
ls "$dir"/ckpt-*/manifest >/dev/null 2>&1 || { echo "FAIL: no complete checkpoint in $dir"; echo "$out"; exit 1; }
echo "killed after step $kill: $(ls "$dir")"

for n in $counts; do
    out=$(run "$n" "$@" --restart "$dir") || {
        echo "FAIL: the restart on $n rank(s) exited with status $?"
        echo "$out"
        exit 1
    }
    resumed=$(grep -m1 -o "restarted at step [0-9]*" <<<"$out")
    step=${resumed##* }
    if [[ -z $step || $step -eq 0 || $step -gt $kill ]]; then
        echo "FAIL: the restart on $n rank(s) did not resume between step 1 and $kill ($resumed)"
        echo "$out"
        exit 1
    fi
    got=$(answer "$out")
    if [[ $got != "$reference" ]]; then
        echo "FAIL: the restart on $n rank(s) answered '$got', the uninterrupted run '$reference'"
        echo "$out"
        exit 1
    fi
    echo "restart on $n rank(s), $resumed: $got"
done
echo "OK"
