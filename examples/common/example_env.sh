# shellcheck shell=bash disable=SC2034  # sourced: the variables are for the script that sources it
# Shared by the examples' run scripts (source it with the example's name): the benchmarks'
# setup (benchmarks/bench_env.sh: root, build, mpirun, as_root), then builds the example and
# sets bin (its binary), out (its results folder, created) and launch (mpirun options for more
# ranks than cores).
#   source examples/common/example_env.sh NAME
# shellcheck source=benchmarks/bench_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../benchmarks/bench_env.sh"
bench_build "$1"
bin="$build/examples/$1"
out="$root/examples/$1/results"
mkdir -p "$out"
launch=(--oversubscribe --bind-to none "${as_root[@]}")
