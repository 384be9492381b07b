#!/usr/bin/env bash
# heat2d's figures: PREMA against plain MPI on the same stencil, for two block sizes, on 2 ranks
# (one per core here) and 4 ranks (oversubscribed), with both progress modes. Each run does
# both versions --repeat times, alternating, and keeps the fastest of each; the table gives
# PREMA's time over MPI's and checks the checksums. Results: examples/heat2d/results/.
#
#   examples/heat2d/run.sh [heat2d options...]      (passed to every run, e.g. --steps 100)
#
# Environment: BUILD_DIR (default build-bench, Release), MPIRUN (default mpirun), MPIRUN_ARGS
# (extra mpirun options), RANKS (default "2 4"), REPEAT (default 3).
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../benchmarks/bench_env.sh"
bench_build heat2d
bin="$build/examples/heat2d"
out="$root/examples/heat2d/results"
mkdir -p "$out"
rm -f "$out"/run_*.json

launch=(--oversubscribe --bind-to none "${as_root[@]}")
# Blocks of 512 x 512 and 256 x 256, 16 blocks (several per rank), the same work in both.
for np in ${RANKS:-2 4}; do
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

python3 - "$out" <<'PY' | tee "$out/heat2d.txt"
import glob, json, os, sys
out = sys.argv[1]
runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(out, "run_*.json")))]
runs.sort(key=lambda r: (r["ranks"], -r["block_rows"], r["progress"]))
print("heat2d: PREMA vs plain MPI, %d blocks, fastest of %d runs each" % (runs[0]["blocks"], runs[0]["repeat"]))
print("%5s %9s %6s %-9s | %9s %9s %9s | %s" % ("ranks", "block", "steps", "progress", "mpi s", "prema s", "overhead", "checksums"))
for r in runs:
    print("%5d %4dx%-4d %6d %-9s | %9.3f %9.3f %+8.1f%% | %s" % (
        r["ranks"], r["block_rows"], r["cols"], r["steps"], r["progress"], r["mpi_s"],
        r["prema_s"], 100 * r["overhead"], "identical" if r["checksums_identical"] else "DIFFER"))
print("overhead = PREMA time / MPI time - 1 (target < 10%); 2 cores: 4 ranks are oversubscribed")
json.dump({"runs": runs}, open(os.path.join(out, "heat2d.json"), "w"), indent=1)
PY
rm -f "$out"/run_*.json
echo "wrote $out/heat2d.txt and $out/heat2d.json"
