#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU: configure hoop with CUDA on, build the CUDA tests
# and hoop-cuda-bench, run them, and print a short table last. Installs nothing: a missing tool or
# library stops it at once, named. Build directory: build-gpu/ (kept between runs).
#
#   tools/gpu-check.sh                       everything, sizes 1 MiB .. 1 GiB
#   HOOP_CUDA_ARCHITECTURES=90 tools/gpu-check.sh      build for one architecture only (faster)
#   HOOP_GPU_BENCH_ARGS="--max-mib 256 --iters 10" tools/gpu-check.sh
#
# Dependencies missing on the GPU machine (hwloc, GoogleTest) can come as Debian packages
# unpacked anywhere (dpkg -x pkg.deb DIR): point CMAKE_PREFIX_PATH and PKG_CONFIG_PATH at
# DIR/usr (and DIR/usr/lib/x86_64-linux-gnu/pkgconfig), LD_LIBRARY_PATH at its lib folder.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-gpu
log_dir="$build_dir/gpu-check"
archs="${HOOP_CUDA_ARCHITECTURES:-80;90}"
bench_args="${HOOP_GPU_BENCH_ARGS:-}"

missing() {
  echo "gpu-check: missing $1" >&2
  echo "gpu-check: this script installs nothing; on Debian 12: $2" >&2
  exit 2
}

# ---- What the build needs, checked before anything runs. ----
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
command -v nvcc >/dev/null || missing "nvcc (the CUDA compiler)" "install CUDA 13 or put its bin/ on PATH"
command -v cmake >/dev/null || missing cmake "apt-get install cmake"
command -v ninja >/dev/null || missing ninja "apt-get install ninja-build"
command -v pkg-config >/dev/null || missing pkg-config "apt-get install pkg-config"
pkg-config --exists hwloc || missing "hwloc (pkg-config hwloc)" "apt-get install libhwloc-dev"
gtest_found=no
for dir in /usr/include /usr/local/include ${CMAKE_PREFIX_PATH:+${CMAKE_PREFIX_PATH//:/ }}; do
  [ -f "$dir/gtest/gtest.h" ] || [ -f "$dir/include/gtest/gtest.h" ] && gtest_found=yes
done
[ "$gtest_found" = yes ] || missing "GoogleTest headers (gtest/gtest.h)" "apt-get install googletest libgtest-dev"

device="none visible"
if command -v nvidia-smi >/dev/null; then
  device="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>/dev/null | head -1)" || device="nvidia-smi failed"
fi
echo "gpu-check: device: ${device:-none visible}; nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); architectures $archs"

mkdir -p "$log_dir"

# ---- Build. ----
start=$(date +%s)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOOP_WERROR=ON \
  -DHOOP_WITH_CUDA=ON "-DHOOP_CUDA_ARCHITECTURES=$archs" -DHOOP_WITH_PYTHON=OFF \
  >"$log_dir/configure.log" 2>&1 || { tail -30 "$log_dir/configure.log"; echo "gpu-check: configure failed ($log_dir/configure.log)"; exit 1; }
cmake --build "$build_dir" -j "$(nproc)" \
  --target hoop_cuda_host_test hoop_cuda_gpu_test hoop-cuda-bench \
  >"$log_dir/build.log" 2>&1 || { tail -40 "$log_dir/build.log"; echo "gpu-check: build failed ($log_dir/build.log)"; exit 1; }
build_seconds=$(( $(date +%s) - start ))
echo "gpu-check: built in ${build_seconds} s"

# ---- Tests: the CUDA groups only (the rest of the suite is CI's). ----
tests='^(CudaIpcHandleTest|MemoryKindTest|CudaLaunchArgumentsTest|CudaKernelTest|GpuMemoryKindTest|GpuIpcTest)\.|^cuda_bench\.smoke$'
set +e
ctest --test-dir "$build_dir" -R "$tests" --output-on-failure -j 4 2>&1 | tee "$log_dir/ctest.log"
set -e
passed=$(grep -c ' Passed ' "$log_dir/ctest.log" || true)
failed=$(grep -cE '\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout|Not Run' "$log_dir/ctest.log" || true)
skipped=$(grep -c '\*\*\*Skipped' "$log_dir/ctest.log" || true)

# ---- Bench. ----
set +e
# shellcheck disable=SC2086
"$build_dir/bin/hoop-cuda-bench" $bench_args 2>&1 | tee "$log_dir/bench.log"
bench_status=${PIPESTATUS[0]}
set -e
last_row="$(grep -E '^ +[0-9]+ ' "$log_dir/bench.log" | tail -1 || true)"

# ---- Summary, last. ----
echo
echo "== gpu-check summary ($(date -u '+%Y-%m-%d %H:%M UTC')) =="
printf '%-22s %s\n' "device" "${device:-none visible}"
printf '%-22s %s\n' "build" "ok, ${build_seconds} s, architectures $archs"
printf '%-22s %s\n' "CUDA tests" "$passed passed, $failed failed, $skipped skipped (log: $log_dir/ctest.log)"
if [ -n "$last_row" ]; then
  read -r size memcpy copy fp32 fp32pct bf16 bf16pct two twopct <<<"$last_row"
  printf '%-22s %s\n' "bench size" "$size bytes (largest measured; table above)"
  printf '%-22s %s GB/s (copy kernel %s GB/s)\n' "memcpy D2D" "$memcpy" "$copy"
  printf '%-22s %s GB/s = %s of memcpy (target >= 90%%)\n' "fp32 sum" "$fp32" "$fp32pct"
  printf '%-22s %s GB/s = %s of memcpy (target >= 90%%)\n' "bf16 sum" "$bf16" "$bf16pct"
  printf '%-22s %s GB/s = %s of memcpy\n' "fp32 sum, 2 outputs" "$two" "$twopct"
else
  printf '%-22s %s\n' "bench" "no numbers (exit status $bench_status; log: $log_dir/bench.log)"
fi
if [ "$failed" != 0 ] || [ "$bench_status" != 0 ] || [ "$passed" = 0 ]; then
  echo "gpu-check: NOT OK"
  exit 1
fi
if [ "$skipped" != 0 ]; then
  echo "gpu-check: ok, but $skipped test(s) skipped (no GPU visible to them?)"
  exit 0
fi
echo "gpu-check: OK"
