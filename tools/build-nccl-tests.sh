#!/usr/bin/env bash
# Builds nccl-tests' all_reduce_perf, all_gather_perf, broadcast_perf and reduce_scatter_perf as
# NCCL users build them, for tools/gpu-check.sh to run on hoop's libnccl.so.2. nccl-tests is
# NVIDIA's, never part of hoop: give a checkout of https://github.com/NVIDIA/nccl-tests.
#
#   tools/build-nccl-tests.sh NCCL_TESTS_SRC OUT_DIR [HOOP_BUILD_DIR]
#
# - Compiled against NCCL's own nccl.h and linked to NCCL's libnccl.so (NCCL_HOME, default
#   CUDA_HOME, which carries NCCL in CUDA 13's toolkit): the binaries are exactly what an NCCL
#   user has, and hoop's library takes over at run time through LD_LIBRARY_PATH.
# - MPI=1 against tools/nccl-tests/mpi.h: a stand-in for the few MPI calls nccl-tests makes,
#   served by hoop's C API under hooprun (OUT_DIR/mpi/lib/libmpi.so, linked to HOOP_BUILD_DIR's
#   libhoop, default build/). One process per rank, several on one GPU: nccl-tests' threads mode
#   would put several ranks in one process, where CUDA IPC cannot reach a process's own memory.
#   NCCL_TESTS_DEVICE=0 at run time puts every rank on GPU 0.
# - NVCC_GENCODE defaults to sm_90 (H100, H200) to keep the build short; CUDA_HOME defaults to
#   /usr/local/cuda, else /usr/local/cuda-13.0.
#
# - The CUDA runtime is linked statically (CUDARTLIB=cudart_static): the GPU machine needs only
#   its driver.
#
# Leaves OUT_DIR/bin/{all_reduce,all_gather,broadcast,reduce_scatter}_perf and, for their run
# time, OUT_DIR/mpi/lib/libhoop-mpi-standin.so (on LD_LIBRARY_PATH, with hoop's libnccl.so.2).
set -euo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || {
  echo "usage: $0 NCCL_TESTS_SRC OUT_DIR [HOOP_BUILD_DIR]" >&2
  exit 2
}
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
hoop_build="$(cd "${3:-$here/../build}" && pwd)"

cuda_home="${CUDA_HOME:-}"
if [ -z "$cuda_home" ]; then
  for candidate in /usr/local/cuda /usr/local/cuda-13.0; do
    [ -x "$candidate/bin/nvcc" ] && { cuda_home=$candidate; break; }
  done
fi
[ -n "$cuda_home" ] && [ -x "$cuda_home/bin/nvcc" ] || {
  echo "build-nccl-tests: no nvcc: set CUDA_HOME" >&2
  exit 2
}
nccl_home="${NCCL_HOME:-$cuda_home}"
[ -f "$nccl_home/include/nccl.h" ] || {
  echo "build-nccl-tests: no NCCL header in $nccl_home/include: set NCCL_HOME to NCCL's prefix" >&2
  exit 2
}
[ -e "$nccl_home/lib/libnccl.so" ] || {
  echo "build-nccl-tests: no $nccl_home/lib/libnccl.so to link with" >&2
  exit 2
}
[ -f "$src/src/all_reduce.cu" ] || { echo "build-nccl-tests: $src is not nccl-tests" >&2; exit 2; }
libhoop="$(ls "$hoop_build"/src/libhoop.so.* 2>/dev/null | head -1)"
[ -n "$libhoop" ] || {
  echo "build-nccl-tests: no libhoop in $hoop_build/src: build hoop first" >&2
  exit 2
}

# The MPI stand-in, on hoop's C API.
mpi_soname=libhoop-mpi-standin.so
mkdir -p "$out/mpi/include" "$out/mpi/lib" "$out/bin"
cp "$here/nccl-tests/mpi.h" "$out/mpi/include/mpi.h"
"${CXX:-g++}" -std=c++17 -O2 -fPIC -shared -Wall -Wextra -Werror \
  -I"$here/nccl-tests" -I"$here/../include" "$here/nccl-tests/hoop_mpi.cc" \
  -L"$hoop_build/src" -lhoop -Wl,-soname,"$mpi_soname" -Wl,-rpath,"$hoop_build/src" \
  -o "$out/mpi/lib/$mpi_soname"
# nccl-tests links -lmpi; its binaries then need the soname, which no MPI installation has, so an
# installed OpenMPI's libmpi.so can never stand in for it by accident.
ln -sf "$mpi_soname" "$out/mpi/lib/libmpi.so"

programs=(all_reduce_perf all_gather_perf broadcast_perf reduce_scatter_perf)
targets=()
for program in "${programs[@]}"; do targets+=("$out/build/$program"); done
start=$(date +%s)
make -C "$src/src" -j "${HOOP_NCCL_TESTS_JOBS:-2}" MPI=1 MPI_HOME="$out/mpi" \
  NCCL_HOME="$nccl_home" CUDA_HOME="$cuda_home" BUILDDIR="$out/build" CUDARTLIB=cudart_static \
  NVCC_GENCODE="${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}" \
  "${targets[@]}" >"$out/build.log" 2>&1 || {
  tail -30 "$out/build.log"
  echo "build-nccl-tests: make failed ($out/build.log)" >&2
  exit 1
}
for program in "${programs[@]}"; do cp "$out/build/$program" "$out/bin/$program"; done
echo "build-nccl-tests: built ${programs[*]} in $(($(date +%s) - start)) s into $out/bin" \
  "(nccl-tests $(git -C "$src" describe --always --tags 2>/dev/null || echo unknown)," \
  "NCCL header $nccl_home/include/nccl.h)"
