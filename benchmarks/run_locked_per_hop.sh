#!/usr/bin/env bash
# Counts the locked instructions (lock-prefixed, and xchg with memory) that PREMA's own code
# executes per hop of the 8-byte ping-pong, on rank 1 of `benchmarks/latency` (inline progress,
# 20,000 timed hops): for the transport hop, and for the object hop (its run minus the
# transport's). Each costs about 7 ns on a message's path on x86 (it waits for the thread's
# earlier stores to reach the cache; see docs/performance/latency.md), and unlike a time the
# count does not depend on the machine's load. Needs valgrind (apt-get install valgrind);
# writes benchmarks/results/locked_per_hop.txt.
#
#   benchmarks/run_locked_per_hop.sh
#
# Environment: BUILD_DIR (default build-bench), MPIRUN (default mpirun).
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
command -v valgrind > /dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
bench_build latency

binary="$build/benchmarks/latency"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
hops=20000

# Addresses of the binary's locked instructions.
objdump -d --no-show-raw-insn "$binary" | awk '/\tlock |\txchg .*\(/ { sub(":", "", $1); print $1 }' \
    > "$work/locked"

# Rank 1 under callgrind with a count per instruction; the sum over the locked ones.
cat > "$work/rank1.sh" <<EOS
#!/usr/bin/env bash
if [[ "\$OMPI_COMM_WORLD_RANK" = 1 ]]; then
    exec valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$work/callgrind.out" "\$@"
fi
exec "\$@"
EOS
chmod +x "$work/rank1.sh"
count() { # benchmark options -> locked instructions executed in the binary on rank 1
    "$mpirun" "${as_root[@]}" -np 2 "$work/rank1.sh" "$binary" --modes inline --no-rate \
        --no-handoff --rounds 1 --warmup 10 --iters "$hops" --max-bytes 8 "$@" > /dev/null
    python3 - "$work/locked" "$work/callgrind.out" "$(basename "$binary")" <<'EOP'
import sys
locked = {int(a, 16) for a in open(sys.argv[1])}
ob, after_call, total = "", False, 0
for line in open(sys.argv[2]):
    if line.startswith("ob="):
        ob = line[3:].strip()
    elif line.startswith("calls="):
        after_call = True  # the next line is the call's inclusive cost
    elif line.startswith("0x"):
        fields = line.split()
        if not after_call and ob.endswith("/" + sys.argv[3]) and int(fields[0], 16) in locked:
            total += int(fields[2])
        after_call = False
    else:
        after_call = False
print(total)
EOP
}

transport=$(count --object-max-bytes 0)
both=$(count --object-max-bytes 8)
{
    echo "Locked instructions in PREMA's code per 8-byte hop, rank 1, inline progress ($hops hops)"
    echo "(callgrind; MPI's own locks, which raw MPI pays too, are not counted)"
    awk -v t="$transport" -v b="$both" -v n="$hops" 'BEGIN {
        printf "  transport hop  %.2f\n  object hop     %.2f\n", t / n, (b - t) / n }'
} | tee "$results/locked_per_hop.txt"
