#!/usr/bin/env bash
# heat2d's figures: PREMA against plain MPI on the same stencil, for two block sizes, on 1 rank
# (no messages between ranks: the runtime's own cost), 2 ranks (one per core here) and 4 ranks
# (oversubscribed), with both progress modes. Each run does both versions --repeat times,
# alternating, and keeps the least times of each; the table gives
# PREMA's wall and CPU time over MPI's (CPU time is what the job itself used, whatever else
# runs on the machine) and checks the checksums. Results: examples/heat2d/results/.
#
#   examples/heat2d/run.sh [heat2d options...]      (passed to every run, e.g. --steps 100)
#
# Environment: BUILD_DIR (default build-bench, Release), MPIRUN (default mpirun), MPIRUN_ARGS
# (extra mpirun options), RANKS (default "1 2 4"), REPEAT (default 3).
set -euo pipefail

# shellcheck source=examples/common/example_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../common/example_env.sh" heat2d
rm -f "$out"/run_*.json

cut -d' ' -f1-3 /proc/loadavg > "$out/load" # other jobs on the machine skew the times
# Blocks of 512 x 512 and 256 x 256, 16 blocks (several per rank), the same work in both.
for np in ${RANKS:-1 2 4}; do
    for size in "512 200" "256 800"; do
        read -r rows steps <<<"$size"
        for progress in dedicated inline; do
            name="run_np${np}_${rows}_${progress}"
            echo "== $np ranks, blocks ${rows}x${rows}, $progress progress" >&2
            # shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
            "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np "$np" "$bin" --blocks 16 \
                --block-rows "$rows" --cols "$rows" --steps "$steps" --repeat "${REPEAT:-3}" \
                --prema-progress "$progress" --json "$out/$name.json" "$@" >&2
        done
    done
done

python3 - "$out" <<'PY' | relative_paths | tee "$out/heat2d.txt"
import glob, json, os, sys
out = sys.argv[1]
runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, "run_*.json")))]
runs.sort(key=lambda r: (r["ranks"], -r["block_rows"], r["progress"]))
print("heat2d: PREMA vs plain MPI, %d blocks, least times of %d runs each" % (runs[0]["blocks"], runs[0]["repeat"]))
print("%5s %9s %6s %-9s | %9s %9s %9s | %9s %9s %9s | %s" % (
    "ranks", "block", "steps", "progress", "mpi s", "prema s", "overhead", "mpi cpu", "prema cpu",
    "overhead", "checksums"))
for r in runs:
    print("%5d %4dx%-4d %6d %-9s | %9.3f %9.3f %+8.1f%% | %9.3f %9.3f %+8.1f%% | %s" % (
        r["ranks"], r["block_rows"], r["cols"], r["steps"], r["progress"], r["mpi_s"],
        r["prema_s"], 100 * r["overhead"], r["mpi_cpu_s"], r["prema_cpu_s"],
        100 * r["cpu_overhead"], "identical" if r["checksums_identical"] else "DIFFER"))
print("overhead = PREMA / MPI - 1 (target < 10%%), of the wall time (fastest run) and of the CPU\n"
      "time of all ranks' processes (least run); %d cores, load average %s before the runs"
      % (os.cpu_count(), open(os.path.join(out, "load")).read().strip()))
json.dump({"runs": runs}, open(os.path.join(out, "heat2d.json"), "w"), indent=1)
PY
rm -f "$out"/run_*.json "$out/load"
echo "wrote $out/heat2d.txt and $out/heat2d.json"
