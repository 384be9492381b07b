#!/usr/bin/env bash
# Installs a built PREMA tree into a temporary prefix, then builds and runs an outside project
# against it: once through find_package(prema) (CMakeLists.txt here), once through
# `pkg-config --cflags --libs prema`. Registered with ctest as install_consumer.
#
# usage: run.sh BUILD_DIR EXPECTED_VERSION   (environment: CMAKE, CXX, MPIEXEC, PKG_CONFIG)
set -euo pipefail
build_dir=$1
version=$2
here=$(cd "$(dirname "$0")" && pwd)
cmake=${CMAKE:-cmake}
cxx=${CXX:-c++}
mpiexec=${MPIEXEC:-mpiexec}
pkg_config=${PKG_CONFIG:-pkg-config}
mpirun=("$mpiexec" --oversubscribe --allow-run-as-root -np 2)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prema-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== cmake --install $build_dir --prefix $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >"$tmp/install.log"
test -f "$prefix/include/prema/prema.hpp" || fail "headers not installed"
test -f "$prefix/include/prema/version.hpp" || fail "version.hpp not installed"
lib=$(find "$prefix" -name libprema.a -o -name 'libprema.so' | head -1)
test -n "$lib" || fail "library not installed"
config=$(find "$prefix" -name premaConfig.cmake | head -1)
test -n "$config" || fail "premaConfig.cmake not installed"
pcdir=$(dirname "$(find "$prefix" -name prema.pc | head -1)")
test -f "$pcdir/prema.pc" || fail "prema.pc not installed"
if grep -rq concurrentqueue "$prefix/include"; then fail "a public header includes concurrentqueue"; fi

echo "== find_package(prema) consumer"
"$cmake" -S "$here" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$tmp/configure.log" ||
    { cat "$tmp/configure.log"; fail "configuring the consumer"; }
found=$(sed -n 's/^prema_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package found prema in '$found', not under $prefix"
"$cmake" --build "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building the consumer"; }

check_run() { # binary: runs it on 2 ranks, checks both ranks and the version line
    local out
    out=$("${mpirun[@]}" "$1" --prema-workers 1) || fail "$1 exited nonzero"
    echo "$out"
    [[ $(grep -c "neighbour .* answered" <<<"$out") == 2 ]] || fail "expected 2 ranks to answer"
    grep -qx "consumer: headers $version, library $version" <<<"$out" || fail "version line"
}
check_run "$tmp/build/consumer"

echo "== --prema-version"
out=$("${mpirun[@]}" "$tmp/build/consumer" --prema-version) || fail "--prema-version exited nonzero"
echo "$out"
[[ $out == "prema $version" ]] || fail "--prema-version printed '$out', want 'prema $version' once"

echo "== pkg-config consumer"
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
flags=$("$pkg_config" --cflags --libs prema) || fail "pkg-config --cflags --libs prema"
echo "pkg-config --cflags --libs prema: $flags"
[[ $("$pkg_config" --modversion prema) == "$version" ]] || fail "pkg-config --modversion"
incdir=$("$pkg_config" --variable=includedir prema)
[[ $(cd "$incdir" && pwd -P) == $(cd "$prefix/include" && pwd -P) ]] ||
    fail "includedir $incdir is not $prefix/include"
[[ " $flags " == *" -I$incdir "* && " $flags " == *" -lprema "* ]] || fail "no -I$incdir or -lprema"
# shellcheck disable=SC2086 # the flags are meant to split
"$cxx" -std=c++20 -O1 "$here/main.cpp" -o "$tmp/consumer_pc" $flags || fail "building with pkg-config flags"
check_run "$tmp/consumer_pc"
echo "== install_consumer: OK"
