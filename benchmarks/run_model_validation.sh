#!/usr/bin/env bash
# Validates the load-balancing model (issue 8, prema-model) against lb_synthetic:
#   1. calibrates the machine (mpirun -np 2 prema-model --calibrate)
#   2. runs lb_synthetic (none beside work_stealing and diffusion, sleep work) over the grid
#        shapes: linear 2x, linear 4x, step (20 % heavy at 2.5x, clustered)
#        objects per worker 4, 8, 16 (light item 160 / k ms: the same work at every k)
#        ranks 4 and 8 (1 worker each)
#      plus the quantum check: linear 4x, 4 ranks, 8 per worker with quanta of 1 and 10 ms, with
#      dedicated and inline progress (where the thesis's half-quantum wait applies and where not)
#      REPEAT times (default 3), the grid in a new order each time; the median makespan counts
#   3. predicts each point with prema-model from the nominal weights (lb_synthetic --csv,
#      column weight_s: what is known before a run), round model and thesis closed form, and
#      asks it for the best objects per worker (scan 4, 8, 16 from the 8-per-worker workload)
#   4. prints the table, mean and max error, the recommendation check, and draws
#      measured vs predicted (benchmarks/plot_model.py)
# -> benchmarks/results/model_validation.{txt,json,png}, model_machine.txt, raw runs in
#    benchmarks/results/model_validation/.
#
#   benchmarks/run_model_validation.sh
#
# Environment: BUILD_DIR (default build-bench), MPIRUN, MPIRUN_ARGS, REPEAT (3).
set -euo pipefail

# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
bench_build lb_synthetic
bench_build prema-model
bench="$build/benchmarks/lb_synthetic/lb_synthetic"
model="$build/tools/prema_model/prema-model"
raw="$results/model_validation"
machine="$results/model_machine.txt"
mkdir -p "$raw"
launch=(--oversubscribe --bind-to none "${as_root[@]}")
repeat="${REPEAT:-3}"
# prema-model predicts dedicated progress unless told inline, so the calibration and the
# points without options run dedicated too (the default, auto, would pick inline with more
# threads than cores); the quantum check's --prema-progress flags override this.
export PREMA_PROGRESS=dedicated

echo "[model validation] calibrating -> $machine" >&2
# shellcheck disable=SC2086  # MPIRUN_ARGS is a list of words on purpose
"$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np 2 "$model" --calibrate "$machine" > /dev/null

declare -A shape_args=(
    [linear2]="--shape linear --ratio 2"
    [linear4]="--shape linear --ratio 4"
    [step]="--shape step --heavy-fraction 0.2 --heavy-factor 2.5"
)
# A point: shape, ranks, objects per worker, runtime options (- for none); its name adds the
# options' label.
points=()
for shape in linear2 linear4 step; do
    for ranks in 4 8; do
        for k in 4 8 16; do
            points+=("$shape $ranks $k -")
        done
    done
done
for progress in dedicated inline; do
    for q in 1000 10000; do
        points+=("linear4 4 8 --prema-progress=$progress,--prema-quantum-us=$q")
    done
done

# name SHAPE RANKS K OPTIONS -> file name stem
point_name() {
    local label=""
    if [[ "$4" != - ]]; then
        label="-$(sed -e 's/--prema-progress=//' -e 's/--prema-quantum-us=/q/' -e 's/,/-/g' <<< "$4")"
    fi
    echo "$1$label"_p"$2"_k"$3"
}

total=$((repeat * ${#points[@]}))
done_runs=0
for rep in $(seq 1 "$repeat"); do
    mapfile -t order < <(printf '%s\n' "${points[@]}" | shuf --random-source=<(yes "$rep"))
    for point in "${order[@]}"; do
        read -r shape ranks k opts <<< "$point"
        name="$(point_name "$shape" "$ranks" "$k" "$opts")"
        runtime_opts=()
        [[ "$opts" = - ]] || IFS=, read -r -a runtime_opts <<< "$opts"
        done_runs=$((done_runs + 1))
        echo "[model validation] run $done_runs/$total: $name, repetition $rep" >&2
        # shellcheck disable=SC2086
        "$mpirun" "${launch[@]}" ${MPIRUN_ARGS:-} -np "$ranks" "$bench" ${shape_args[$shape]} \
            --objects-per-worker "$k" --light-ms "$((160 / k))" --work sleep "${runtime_opts[@]}" \
            --policy work_stealing,diffusion --json "$raw/${name}_r${rep}.json" \
            --csv "$raw/${name}.csv" > "$raw/${name}_r${rep}.txt" 2> /dev/null
    done
done

echo "[model validation] predicting" >&2
for point in "${points[@]}"; do
    read -r shape ranks k opts <<< "$point"
    name="$(point_name "$shape" "$ranks" "$k" "$opts")"
    runtime_opts=()
    [[ "$opts" = - ]] || IFS=, read -r -a runtime_opts <<< "$opts"
    "$model" --csv "$raw/${name}.csv" --column weight_s --machine "$machine" \
        --yield-every-us 1000 --method both "${runtime_opts[@]}" \
        --json "$raw/${name}_model.json" > /dev/null
    if [[ "$k" = 8 && "$opts" = - ]]; then
        "$model" --csv "$raw/${name}.csv" --column weight_s --machine "$machine" \
            --yield-every-us 1000 --policy work_stealing,diffusion --recommend \
            --scan-objects 4,8,16 --scan-quantum-us 1000 --scan-neighbours 4 \
            --json "$raw/${shape}_p${ranks}_recommend.json" > /dev/null
    fi
done

"${plot_with:-python3}" "$root/benchmarks/model_validation.py" "$raw" "$results/model_validation.json" \
    "$results/model_validation.png" | relative_paths | tee "$results/model_validation.txt"
