#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU: configure hoop with CUDA on, build the CUDA tests
# and hoop-cuda-bench, run them (each test in a process of its own, as ctest does: a process that
# initialised CUDA cannot use it in a forked child, which the IPC test needs), run a short
# compute-sanitizer pass where the tool is installed, and print a short table last.
#
#   tools/gpu-check.sh                       build here (build-gpu/) and run, sizes 1 MiB .. 1 GiB
#   tools/gpu-check.sh --pack DIR            build here, no GPU needed: copy the stripped GPU test
#                                            and bench programs and the libraries they need that
#                                            are not the C/C++ runtime into DIR, and stop
#   tools/gpu-check.sh --packed DIR          run what --pack put in DIR (a GPU machine that lacks
#                                            hwloc or GoogleTest: nothing is built there)
#
#   HOOP_CUDA_ARCHITECTURES=90-real tools/gpu-check.sh   build for one architecture only (faster)
#   HOOP_GPU_BENCH_ARGS="--max-mib 256 --iters 10" tools/gpu-check.sh
#   HOOP_GPU_LOG_DIR=DIR       where --packed writes its logs (default DIR/logs)
#   HOOP_GPU_SANITIZER_SECONDS=N    the limit on each compute-sanitizer run (default 240)
#
# Installs nothing: a missing tool or library stops it at once, named.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=build
pack_dir=""
case "${1:-}" in
  "") ;;
  --pack | --packed)
    [ $# -eq 2 ] || { echo "usage: $0 [--pack DIR | --packed DIR]" >&2; exit 2; }
    mode="${1#--}"
    pack_dir="$2"
    ;;
  *) echo "usage: $0 [--pack DIR | --packed DIR]" >&2; exit 2 ;;
esac

build_dir=build-gpu
archs="${HOOP_CUDA_ARCHITECTURES:-80-real;90-real;90-virtual}"
bench_args="${HOOP_GPU_BENCH_ARGS:-}"
test_programs=(hoop_cuda_host_test hoop_cuda_gpu_test hoop_cuda_runtime_test)

missing() {
  echo "gpu-check: missing $1" >&2
  echo "gpu-check: this script installs nothing; on Debian 12: $2" >&2
  exit 2
}

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# ---- Build (modes build and pack): configure build-gpu/ with CUDA on, build the programs. ----
build_seconds=0
build_programs() {
  command -v nvcc >/dev/null || missing "nvcc (the CUDA compiler)" "install CUDA 13 or put its bin/ on PATH"
  command -v cmake >/dev/null || missing cmake "apt-get install cmake"
  command -v ninja >/dev/null || missing ninja "apt-get install ninja-build"
  command -v pkg-config >/dev/null || missing pkg-config "apt-get install pkg-config"
  pkg-config --exists hwloc || missing "hwloc (pkg-config hwloc)" "apt-get install libhwloc-dev"
  local gtest_found=no
  for dir in /usr/include /usr/local/include ${CMAKE_PREFIX_PATH:+${CMAKE_PREFIX_PATH//:/ }}; do
    [ -f "$dir/gtest/gtest.h" ] || [ -f "$dir/include/gtest/gtest.h" ] && gtest_found=yes
  done
  [ "$gtest_found" = yes ] || missing "GoogleTest headers (gtest/gtest.h)" "apt-get install googletest libgtest-dev"
  mkdir -p "$build_dir/gpu-check"
  local start
  start=$(date +%s)
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOOP_WERROR=ON \
    -DHOOP_WITH_CUDA=ON "-DHOOP_CUDA_ARCHITECTURES=$archs" -DHOOP_WITH_PYTHON=OFF \
    >"$build_dir/gpu-check/configure.log" 2>&1 || {
    tail -30 "$build_dir/gpu-check/configure.log"
    echo "gpu-check: configure failed ($build_dir/gpu-check/configure.log)"
    exit 1
  }
  cmake --build "$build_dir" -j "$(nproc)" --target "${test_programs[@]}" hoop-cuda-bench \
    >"$build_dir/gpu-check/build.log" 2>&1 || {
    tail -40 "$build_dir/gpu-check/build.log"
    echo "gpu-check: build failed ($build_dir/gpu-check/build.log)"
    exit 1
  }
  build_seconds=$(($(date +%s) - start))
  echo "gpu-check: built in ${build_seconds} s (nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), architectures $archs)"
}

# Where a built program lies in build-gpu/.
built_program() {
  case "$1" in
    hoop-cuda-bench) echo "$build_dir/bin/$1" ;;
    *) echo "$build_dir/tests/device/cuda/$1" ;;
  esac
}

if [ "$mode" = pack ]; then
  build_programs
  mkdir -p "$pack_dir"
  for program in "${test_programs[@]}" hoop-cuda-bench; do
    strip --strip-debug -o "$pack_dir/$program" "$(built_program "$program")"
    # hwloc and what it needs, which a GPU machine's image may lack.
    tools/bundle-libs.sh "$pack_dir/lib" "$(built_program "$program")"
  done
  printf 'packed by tools/gpu-check.sh on %s, %s, architectures %s\n' "$(hostname)" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$archs" >"$pack_dir/PACKED"
  du -sh "$pack_dir"
  echo "gpu-check: packed into $pack_dir; on the GPU machine: tools/gpu-check.sh --packed $pack_dir"
  exit 0
fi

device="none visible"
if command -v nvidia-smi >/dev/null; then
  device="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>/dev/null | head -1)" || device="nvidia-smi failed"
fi
echo "gpu-check: device: ${device:-none visible}"

if [ "$mode" = build ]; then
  build_programs
  program_dir=""
  log_dir="$build_dir/gpu-check"
  build_line="ok, ${build_seconds} s, architectures $archs"
else
  [ -f "$pack_dir/PACKED" ] || { echo "gpu-check: $pack_dir holds no --pack output" >&2; exit 2; }
  program_dir="$pack_dir"
  export LD_LIBRARY_PATH="$pack_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  log_dir="${HOOP_GPU_LOG_DIR:-$pack_dir/logs}"
  build_line="prebuilt: $(cat "$pack_dir/PACKED")"
fi
mkdir -p "$log_dir"
program_path() {
  if [ -n "$program_dir" ]; then echo "$program_dir/$1"; else built_program "$1"; fi
}

# ---- Tests: every test of the CUDA programs, each in a process of its own. ----
passed=0
failed=0
skipped=0
gpu_skipped=0  # skips in the GPU programs: no GPU visible (the host test's skips are by design)
failed_names=""
: >"$log_dir/tests.log"
for program in "${test_programs[@]}"; do
  path="$(program_path "$program")"
  suite=""
  while IFS= read -r line; do
    case "$line" in
      "  "*) name="$suite${line#  }"; name="${name%% *}" ;;
      *) suite="${line%% *}"; continue ;;
    esac
    set +e
    output="$("$path" --gtest_filter="$name" 2>&1)"
    status=$?
    set -e
    printf '%s\n' "$output" >>"$log_dir/tests.log"
    if [ $status -ne 0 ]; then
      failed=$((failed + 1))
      failed_names="$failed_names $name"
      printf '%s\n' "$output" | tail -20
      echo "gpu-check: FAILED $program $name"
    elif printf '%s' "$output" | grep -q '\[  SKIPPED \]'; then
      skipped=$((skipped + 1))
      [ "$program" = hoop_cuda_host_test ] || gpu_skipped=$((gpu_skipped + 1))
      echo "gpu-check: skipped $name: $(printf '%s' "$output" | grep -m1 -A1 'Skipped' | tail -1)"
    else
      passed=$((passed + 1))
    fi
  done < <("$path" --gtest_list_tests)
done
echo "gpu-check: tests: $passed passed, $failed failed, $skipped skipped (log: $log_dir/tests.log)"

# ---- compute-sanitizer, where installed: memcheck over a short part of the kernel sweep. ----
sanitizer_line="compute-sanitizer not found: not run"
sanitizer_tool="$(command -v compute-sanitizer || true)"
[ -n "$sanitizer_tool" ] || [ ! -x /usr/local/cuda/bin/compute-sanitizer ] ||
  sanitizer_tool=/usr/local/cuda/bin/compute-sanitizer
sanitizer_failed=0
if [ -n "$sanitizer_tool" ]; then
  short='CudaKernelTest.InPlaceMatchesTheCpu:CudaKernelTest.SpecialValues*:CudaKernelTest.LargeCounts*:CudaKernelTest.CopyMovesExactlyTheBytes'
  sanitizer_results=""
  sanitizer_limit="${HOOP_GPU_SANITIZER_SECONDS:-240}"
  for tool in memcheck racecheck; do
    set +e
    timeout "$sanitizer_limit" "$sanitizer_tool" --tool "$tool" --error-exitcode 9 \
      "$(program_path hoop_cuda_gpu_test)" --gtest_filter="$short" >"$log_dir/$tool.log" 2>&1
    status=$?
    set -e
    tail -3 "$log_dir/$tool.log"
    # A run cut short by the limit found nothing wrong: say so rather than report errors
    # (racecheck took 45 s on an H200).
    case $status in
      0) result=clean ;;
      124) result="not finished within ${sanitizer_limit} s" ;;
      *) result=ERRORS ;;
    esac
    if [ $status -ne 0 ]; then
      sanitizer_failed=1
      echo "gpu-check: compute-sanitizer $tool: $result ($log_dir/$tool.log)"
    fi
    sanitizer_results="$sanitizer_results${sanitizer_results:+, }$tool $result"
  done
  sanitizer_line="short kernel sweep: $sanitizer_results"
fi

# ---- Bench. ----
set +e
# shellcheck disable=SC2086
"$(program_path hoop-cuda-bench)" $bench_args 2>&1 | tee "$log_dir/bench.log"
bench_status=${PIPESTATUS[0]}
set -e
last_row="$(grep -E '^ +[0-9]+ ' "$log_dir/bench.log" | tail -1 || true)"

# ---- Summary, last. ----
echo
echo "== gpu-check summary ($(date -u '+%Y-%m-%d %H:%M UTC')) =="
printf '%-22s %s\n' "device" "${device:-none visible}"
printf '%-22s %s\n' "build" "$build_line"
printf '%-22s %s\n' "CUDA tests" "$passed passed, $failed failed, $skipped skipped, $gpu_skipped of them GPU tests (log: $log_dir/tests.log)"
[ -z "$failed_names" ] || printf '%-22s %s\n' "failed" "$failed_names"
printf '%-22s %s\n' "compute-sanitizer" "$sanitizer_line"
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
if [ "$failed" != 0 ] || [ "$bench_status" != 0 ] || [ "$passed" = 0 ] || [ "$sanitizer_failed" != 0 ]; then
  echo "gpu-check: NOT OK"
  exit 1
fi
if [ "$gpu_skipped" != 0 ]; then
  echo "gpu-check: ok, but $gpu_skipped GPU test(s) skipped (no GPU visible to them?)"
  exit 0
fi
echo "gpu-check: OK"
