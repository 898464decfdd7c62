#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU: configure hoop with CUDA on, build the CUDA tests
# and hoop-cuda-bench, run them (each test in a process of its own, as ctest does: a process that
# initialised CUDA cannot use it in a forked child, which the IPC test needs), run the device
# collectives across ranks on the one GPU (hoop_device_worker under hooprun: sweep at 2, 3, 4 and
# 8 ranks, p2p, random and graph capture at 4, the time-out, abort and a mismatched call at 3, the
# sweep and random floats at 4 ranks on two simulated hosts), a short compute-sanitizer pass
# where the tool is installed (the kernel sweep, then a 2-rank device allreduce), hoop-perf on
# device buffers at 2 and 4 ranks, nccl-tests (built for NCCL) on hoop's libnccl.so.2 at 2 and 4
# ranks when HOOP_NCCL_TESTS_SRC names a checkout of NVIDIA/nccl-tests, and print a short table
# last.
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
#   HOOP_GPU_RUN_SECONDS=N     the limit on each device sweep and hoop-perf run (default 180)
#   HOOP_GPU_BUILD_JOBS=N      parallel build jobs (default: every core)
#   HOOP_NCCL_TESTS_SRC=DIR    a checkout of NVIDIA/nccl-tests: build all_reduce_perf,
#                              all_gather_perf, broadcast_perf and reduce_scatter_perf against
#                              NCCL's header (tools/build-nccl-tests.sh) and run them on hoop
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
# Run by hooprun, several ranks on the one GPU: the device collectives and hoop-perf.
rank_programs=(hoop_device_worker hooprun hoop-perf)
# nccl-tests, built for NCCL and run on hoop's libnccl.so.2 (docs/nccl.md).
nccl_programs=(all_reduce_perf all_gather_perf broadcast_perf reduce_scatter_perf)
nccl_tests_src="${HOOP_NCCL_TESTS_SRC:-}"
build_jobs="${HOOP_GPU_BUILD_JOBS:-$(nproc)}"

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
  cmake --build "$build_dir" -j "$build_jobs" \
    --target "${test_programs[@]}" hoop-cuda-bench "${rank_programs[@]}" hoop_nccl \
    >"$build_dir/gpu-check/build.log" 2>&1 || {
    tail -40 "$build_dir/gpu-check/build.log"
    echo "gpu-check: build failed ($build_dir/gpu-check/build.log)"
    exit 1
  }
  if [ -n "$nccl_tests_src" ]; then
    HOOP_NCCL_TESTS_JOBS="$build_jobs" tools/build-nccl-tests.sh "$nccl_tests_src" \
      "$build_dir/nccl-tests" "$build_dir"
  fi
  build_seconds=$(($(date +%s) - start))
  echo "gpu-check: built in ${build_seconds} s (nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), architectures $archs)"
}

# Where a built program lies in build-gpu/.
built_program() {
  case "$1" in
    hoop-cuda-bench | hooprun | hoop-perf) echo "$build_dir/bin/$1" ;;
    hoop_device_worker) echo "$build_dir/tests/device/collectives/$1" ;;
    *_perf) echo "$build_dir/nccl-tests/bin/$1" ;;
    *) echo "$build_dir/tests/device/cuda/$1" ;;
  esac
}

if [ "$mode" = pack ]; then
  build_programs
  mkdir -p "$pack_dir"
  for program in "${test_programs[@]}" hoop-cuda-bench "${rank_programs[@]}"; do
    strip --strip-debug -o "$pack_dir/$program" "$(built_program "$program")"
    # hwloc and what it needs, which a GPU machine's image may lack.
    tools/bundle-libs.sh "$pack_dir/lib" "$(built_program "$program")"
  done
  # nccl-tests as NCCL users have them, beside hoop's libnccl.so.2 and the MPI stand-in (not
  # bundled: that would copy the libnccl.so.2 they were linked with, NCCL's).
  if [ -n "$nccl_tests_src" ]; then
    for program in "${nccl_programs[@]}"; do
      strip --strip-debug -o "$pack_dir/$program" "$(built_program "$program")"
    done
    cp -L "$build_dir/nccl-tests/mpi/lib/libhoop-mpi-standin.so" "$pack_dir/lib/"
  fi
  cp -L "$build_dir/src/libnccl.so.2" "$pack_dir/lib/libnccl.so.2"
  strip --strip-debug "$pack_dir/lib/libnccl.so.2"
  printf 'packed by tools/gpu-check.sh on %s, %s, architectures %s\n' "$(hostname)" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$archs" >"$pack_dir/PACKED"
  du -sh "$pack_dir"
  # The device machine takes 64 MiB of working tree in all.
  pack_kib=$(du -sk "$pack_dir" | cut -f1)
  [ "$pack_kib" -le $((60 * 1024)) ] ||
    echo "gpu-check: warning: $pack_dir is ${pack_kib} KiB, near or over a 64 MiB carry limit" >&2
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
  # hoop's libnccl.so.2 and the MPI stand-in, ahead of any NCCL the machine has.
  export LD_LIBRARY_PATH="$build_dir/src:$build_dir/nccl-tests/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  program_dir=""
  log_dir="$build_dir/gpu-check"
  build_line="ok, ${build_seconds} s, architectures $archs"
else
  [ -f "$pack_dir/PACKED" ] || { echo "gpu-check: $pack_dir holds no --pack output" >&2; exit 2; }
  program_dir="$pack_dir"
  # hoop's libnccl.so.2 is there too: it comes before any NCCL the machine has.
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

# ---- Device collectives: ranks of hooprun sharing the one GPU, every result checked. ----
# Each run is one line of the summary: its exit status says whether every rank's checks passed.
# HOOP_DEVICE_EMULATION stays unset: this is the real device path, CUDA IPC and stream flags.
run_limit="${HOOP_GPU_RUN_SECONDS:-180}"
hooprun_path="$(program_path hooprun)"
worker_path="$(program_path hoop_device_worker)"
perf_path="$(program_path hoop-perf)"
device_rows=()
device_failed=0
# run_ranks NAME NP ARGS...: hooprun -np NP ARGS... under the limit, logged to NAME.log.
run_ranks() {
  local name=$1 np=$2 status result
  shift 2
  set +e
  timeout "$run_limit" "$hooprun_path" -np "$np" "$@" >"$log_dir/$name.log" 2>&1
  status=$?
  set -e
  case $status in
    0) result="pass ($(grep -c '^\(\[[0-9]*\] \)\?OK rank' "$log_dir/$name.log" || true) ranks OK)" ;;
    124) result="FAIL: not finished within ${run_limit} s" ;;
    *) result="FAIL: exit status $status" ;;
  esac
  if [ $status -ne 0 ]; then
    device_failed=$((device_failed + 1))
    tail -20 "$log_dir/$name.log"
  fi
  echo "gpu-check: $name: $result ($log_dir/$name.log)"
  device_rows+=("$name|$result")
}
unset HOOP_DEVICE_EMULATION
for np in 2 3 4 8; do
  large=()
  if [ "$np" = 2 ] || [ "$np" = 4 ]; then large=(--large); fi
  run_ranks "device sweep ${np} ranks" "$np" "$worker_path" --suite sweep "${large[@]}"
done
run_ranks "device p2p 4 ranks" 4 "$worker_path" --suite p2p
run_ranks "device random 4 ranks" 4 "$worker_path" --suite random
# An allreduce and a send/receive group captured into a CUDA graph and replayed on new inputs;
# a stream left waiting on peers that never call, released by the time-out and by abort.
run_ranks "device graph 4 ranks" 4 "$worker_path" --suite graph
run_ranks "device time-out 3 ranks" 3 -x HOOP_TIMEOUT=2 "$worker_path" --suite timeout
run_ranks "device abort 3 ranks" 3 "$worker_path" --suite abort
run_ranks "device mismatch 3 ranks" 3 -x HOOP_TIMEOUT=20 "$worker_path" --suite mismatch-kind
# Two simulated hosts on the one GPU (each rank's HOOP_HOSTNAME from its rank): device messages
# between them are staged through pinned host memory over TCP, the hierarchical schedules split
# the work by host.
two_hosts="$log_dir/two-hosts.sh"
cat >"$two_hosts" <<'WRAP'
#!/usr/bin/env bash
export HOOP_HOSTNAME="gpu-host-$((HOOP_RANK % 2))"
exec "$@"
WRAP
chmod +x "$two_hosts"
run_ranks "device sweep 4 ranks on 2 simulated hosts" 4 "$two_hosts" "$worker_path" --suite sweep
run_ranks "device random 4 ranks on 2 simulated hosts" 4 "$two_hosts" "$worker_path" --suite random

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
  # The device collectives under the sanitizer: each of 2 ranks is its own compute-sanitizer
  # process (hooprun starts `prog args...`, and the tool follows no launcher's children well).
  device_results=""
  for tool in memcheck racecheck; do
    set +e
    timeout "$sanitizer_limit" "$hooprun_path" -np 2 "$sanitizer_tool" --tool "$tool" \
      --error-exitcode 9 "$worker_path" --suite sweep --only allreduce \
      >"$log_dir/device-$tool.log" 2>&1
    status=$?
    set -e
    case $status in
      0) result=clean ;;
      124) result="not finished within ${sanitizer_limit} s" ;;
      *) result="ERRORS (exit status $status)" ;;
    esac
    if [ $status -ne 0 ]; then
      sanitizer_failed=1
      tail -5 "$log_dir/device-$tool.log"
      echo "gpu-check: compute-sanitizer $tool on device ranks: $result ($log_dir/device-$tool.log)"
    fi
    device_results="$device_results${device_results:+, }$tool $result"
  done
  sanitizer_line="$sanitizer_line; 2-rank device allreduce: $device_results"
fi

# ---- Bench. ----
set +e
# shellcheck disable=SC2086
"$(program_path hoop-cuda-bench)" $bench_args 2>&1 | tee "$log_dir/bench.log"
bench_status=${PIPESTATUS[0]}
set -e
last_row="$(grep -E '^ +[0-9]+ ' "$log_dir/bench.log" | tail -1 || true)"

# ---- hoop-perf on device buffers, 2 and 4 ranks on the GPU, every result checked. ----
# Beside the memcpy D2D figure above (hoop-cuda-bench's cudaMemcpyAsync): what one GPU's memory
# gives, against which ranks sharing it are read.
perf_rows=()
for np in 2 4; do
  name="hoop-perf allreduce ${np} ranks"
  log="$log_dir/hoop-perf-np$np.log"
  set +e
  timeout "$run_limit" "$hooprun_path" -np "$np" "$perf_path" allreduce --memory device \
    -b 8 -e 1G -f 4 -n 20 -w 5 -c 1 >"$log" 2>&1
  status=$?
  set -e
  # The rows as rank 0 printed them (hooprun tags each line "[0] ").
  sed -n 's/^\[0\] //p' "$log" | grep -v '^#' | grep -E '^ +[0-9]+ ' || true
  # Columns: size count type redop root time algbw busbw #wrong (out-of-place first).
  small="$(sed -n 's/^\[0\] //p' "$log" | awk '$1 == 8 {print $6 " us"; exit}')"
  # -f 4 from 8 B steps over 1 GiB (512 MiB, then 2 GiB): the largest row stands for it.
  big="$(sed -n 's/^\[0\] //p' "$log" | grep -E '^ +[0-9]+ ' |
    awk 'END {if (NR) print $1 " B " $8 " GB/s busbw"}')"
  wrong="$(sed -n 's/^\[0\] //p' "$log" | sed -n 's/^# Out of bounds values : //p' | head -1)"
  if [ $status -ne 0 ]; then
    device_failed=$((device_failed + 1))
    tail -10 "$log"
    result="FAIL: exit status $status"
  else
    result="8 B ${small:-?}, largest ${big:-?}, wrong: ${wrong:-?}"
  fi
  echo "gpu-check: $name: $result ($log)"
  perf_rows+=("$name|$result")
done

# ---- nccl-tests on hoop's libnccl.so.2: 2 and 4 ranks on the GPU, every result checked. ----
# The binaries were compiled against NCCL's header and linked to NCCL's library; LD_LIBRARY_PATH
# (above) hands them hoop's. One process per rank under hooprun (the MPI stand-in), all on GPU 0.
# With HOOP_DEBUG=INFO for INIT, each process's two hoop communicators (the stand-in's world and
# nccl-tests' own) log "communicator ready": fewer than 2 per rank means NCCL served the run.
nccl_rows=()
nccl_failed=0
if [ ! -x "$(program_path all_reduce_perf)" ]; then
  nccl_rows+=("nccl-tests|not built: set HOOP_NCCL_TESTS_SRC to a checkout of NVIDIA/nccl-tests")
else
  for program in "${nccl_programs[@]}"; do
    for np in 2 4; do
      name="${program} ${np} ranks"
      log="$log_dir/nccl-tests-${program}-np$np.log"
      set +e
      timeout "$run_limit" "$hooprun_path" -np "$np" -x NCCL_TESTS_DEVICE=0 -x HOOP_DEBUG=INFO \
        -x HOOP_DEBUG_SUBSYS=INIT "$(program_path "$program")" -b 8 -e 64M -f 4 -g 1 -c 1 \
        -n 10 -w 2 >"$log" 2>&1
      status=$?
      set -e
      rows="$(sed -n 's/^\[0\] //p' "$log" | grep -E '^ +[0-9]+ +[0-9]+ ' || true)"
      printf '%s\n' "$rows"
      # Columns: size count type redop root, then time algbw busbw #wrong out of place and in place.
      wrong="$(awk 'NF >= 13 {w += $9 + $13} END {print w + 0}' <<<"$rows")"
      bounds="$(sed -n 's/^\[0\] # Out of bounds values : //p' "$log" | head -1)"
      big="$(awk 'END {if (NR) print $1 " B " $8 " GB/s busbw"}' <<<"$rows")"
      ready="$(grep -c 'hoop INFO INIT communicator ready' "$log" || true)"
      if [ $status -eq 124 ]; then
        result="FAIL: not finished within ${run_limit} s"
      elif [ $status -ne 0 ]; then
        result="FAIL: exit status $status, #wrong ${wrong}, out of bounds: ${bounds:-?}"
      elif [ "$ready" -lt $((2 * np)) ]; then
        result="FAIL: hoop did not serve it (${ready} hoop communicators for ${np} ranks)"
      elif [ "$wrong" != 0 ] || [ -z "$rows" ]; then
        result="FAIL: #wrong ${wrong} (${bounds:-no result rows})"
      else
        result="#wrong 0, largest ${big:-?}"
      fi
      case "$result" in FAIL*) nccl_failed=$((nccl_failed + 1)); tail -10 "$log" ;; esac
      echo "gpu-check: nccl-tests $name: $result ($log)"
      nccl_rows+=("$name|$result")
    done
  done
fi

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
for row in "${device_rows[@]}" "${perf_rows[@]}" "${nccl_rows[@]}"; do
  printf '%-27s %s\n' "${row%%|*}" "${row#*|}"
done
if [ "$failed" != 0 ] || [ "$device_failed" != 0 ] || [ "$bench_status" != 0 ] || [ "$passed" = 0 ] || [ "$sanitizer_failed" != 0 ] || [ "$nccl_failed" != 0 ]; then
  echo "gpu-check: NOT OK"
  exit 1
fi
if [ "$gpu_skipped" != 0 ]; then
  echo "gpu-check: ok, but $gpu_skipped GPU test(s) skipped (no GPU visible to them?)"
  exit 0
fi
echo "gpu-check: OK"
