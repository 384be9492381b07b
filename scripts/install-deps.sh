#!/usr/bin/env bash
# Installs the Debian packages PREMA needs. Idempotent: does nothing when all are present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  clang                        # CI's second compiler (scripts/test-clang.sh); uses libstdc++
  clang-format                 # the formatting check (scripts/check-format.sh)
  doxygen                      # the API reference (the `docs` target, tested by ctest docs_api)
  libopenmpi-dev openmpi-bin   # MPI: the wire and the process launcher
  liburing-dev                 # asynchronous checkpoint I/O
  libxxhash-dev                # XXH3: checkpoint checksums, node names at start-up
  libconcurrentqueue-dev       # moodycamel lock-free queues
  libspdlog-dev                # logging
  doctest-dev                  # tests
  libcereal-dev                # serialization of handler arguments and objects
  nettle-dev                   # SHA-1 of the UTS benchmark's tree (benchmarks/uts)
  libcgal-dev                  # 2-D Delaunay mesher of examples/mesh_refinement (optional)
  python3                      # the tests' time-against-timeout check (scripts/check-test-times.py)
  python3-matplotlib           # benchmark plots (benchmarks/plot_*.py); optional
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
