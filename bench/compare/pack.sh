#!/usr/bin/env bash
# Copies what run.sh and tuner_table.py run (hooprun, hoop-perf and the peer benches that were
# built) into DIR/bin, stripped, and the shared libraries they need beyond the C and C++ runtimes
# (libhoop, hwloc, Gloo, ...) into DIR/lib, so the measurements can run on another x86-64 Linux
# machine that has none of the build's packages (a larger machine than this one, say):
#
#   bench/compare/pack.sh DIR [BUILD_DIR]             here (BUILD_DIR: build)
#   bench/compare/run.sh --build DIR --ranks 4 ...    there, from a checkout of the same commit
#   bench/compare/tuner_table.py --build DIR ...
#
# Both scripts put DIR/lib on LD_LIBRARY_PATH when it exists. Where the MPI peer bench was built,
# this machine's OpenMPI goes into DIR/openmpi (pack-openmpi.sh), and run.sh uses that copy, so
# the MPI columns fill on a machine without OpenMPI too.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DIR [BUILD_DIR]" >&2; exit 2; }
dir=$1
build=${2:-build}
[ -x "$build/bin/hoop-perf" ] && [ -x "$build/bin/hooprun" ] ||
  { echo "pack.sh: $build/bin has no hoop-perf and hooprun: build them first" >&2; exit 2; }
mkdir -p "$dir/bin" "$dir/lib"
for program in hooprun hoop-perf hoop-cacheline-rtt gloo_allreduce_bench mpi_allreduce_bench; do
  [ -x "$build/bin/$program" ] || continue
  strip --strip-debug -o "$dir/bin/$program" "$build/bin/$program"
  tools/bundle-libs.sh "$dir/lib" "$build/bin/$program"
done
if [ -x "$dir/bin/mpi_allreduce_bench" ]; then
  bench/compare/pack-openmpi.sh "$dir/openmpi"
fi
printf 'packed from %s at %s on %s\n' "$build" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  "$(hostname)" >"$dir/PACKED"
du -sh "$dir"
