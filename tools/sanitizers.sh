#!/usr/bin/env bash
# Builds hoop and its tests under a sanitizer and runs them; any report fails the run.
#   tools/sanitizers.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): the
#                              unit and multi-process tests, minus the exclusions below
#   tools/sanitizers.sh fuzz   the libFuzzer targets (build-fuzz/, clang), each for
#                              HOOP_FUZZ_SECONDS (default 5) from its seed corpus in fuzz/corpus
#   tools/sanitizers.sh tsan   ThreadSanitizer (build-tsan/): the multi-process, abort/timeout and
#                              hostile-input tests (each rank is a process, so TSan checks the
#                              communicator's own threads: the root service, abort from another
#                              thread, the progress and wait paths)
# Extra arguments go to ctest (e.g. -R Failure). HOOP_SANITIZER_JOBS sets the parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:-}"
shift || true
jobs="${HOOP_SANITIZER_JOBS:-$(nproc)}"
export HOOP_SOCKET_IFNAME="${HOOP_SOCKET_IFNAME:-=lo}"
# Reports name source lines (llvm-symbolizer comes with clang).
symbolizer="$(command -v llvm-symbolizer || true)"

case "$kind" in
  asan)
    # The preset leaves out UBSan's enum check: it only covers enums without a fixed type, which
    # in hoop are the C API's (hoopDataType_t, hoopRedOp_t), where a C caller may pass any int
    # and hoop rejects bad values as ints (hoopInvalidArgument, tested on purpose).
    # Leak checking stays on: hoop promises RAII for every resource. A report aborts the process,
    # which fails the rank and so the test.
    # fast_unwind_on_malloc=0: the slow unwinder walks through hwloc's plugins (built without
    # frame pointers), so tools/lsan.supp can name the caller of a leak inside them.
    # detect_stack_use_after_return=0: its fake stack frames do not keep the 64-byte alignment
    # GCC gives the AVX-512 kernels' zero-padded tail buffers (src/device/cpu/simd_loop.h), and
    # the aligned stores into them fault (SEGV inside simdLoop, only under this option).
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=0:fast_unwind_on_malloc=0${symbolizer:+:external_symbolizer_path=$symbolizer}"
    export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    # Not run under ASan, and why:
    #   style.clang_format   not a build of hoop at all (the normal test run covers it)
    #   hoop_perf.*          bench is off in this preset (performance has no place here)
    #   HooprunE2E.SecondInterruptKillsAtOnce   asserts the job dies within 2 s of a second ^C,
    #                        a timing the sanitizer's slowdown (and a loaded machine) breaks
    #   Failure.KilledRankLeavesNoSharedMemory   kills a rank 1.5 s in; under ASan's slowdown
    #                        a segment was then left in /dev/shm (the kill landed in
    #                        shared-memory setup, before the creator unlinked the name; the
    #                        joiner now unlinks it too, not yet re-checked under ASan)
    #   Ranks.*/5..8         the 5-8 rank sweeps run the same code as 2-4 ranks, at a minute
    #                        each under ASan on two cores (CI's 15-minute budget)
    #   SimulatedHosts */{a,a,b,b,c,c}   the 6-rank layout (70 s under ASan); the 4-rank
    #                        layouts run the same hierarchical code
    #   Schedule.ForcedSweepIsExact/*_{3,4,7}   the forced-schedule sweeps above 2 ranks: the
    #                        2-rank ones run every schedule, Exchange.* runs them at 5 and 8 ranks
    #                        in small pieces (CI's 15-minute budget)
    #   Launches.*           three launches of the same jobs to compare their bits: the code
    #                        they run is the sweeps', and their point is the schedule choice
    #   multihost.*          namespaces around the same code SimulatedHosts runs, slower
    #   Exchange.*, SimulatedHosts.*, the 3-4 rank Ranks.* sweeps, the many-streams TCP sweep,
    #   the every-rank-same-choice sweep   the same code paths as the
    #                        2-rank sweeps and the unit tests, at ASan's 3x cost (CI's budget:
    #                        the whole test command measured 16.4 min on 2 cores with them)
    #   python.*             not built here: Debian's python3 would need libasan preloaded
    #   Soak/Transport.{TenThousandAllReduces...,CreateDestroyCycles...}   10,000 calls and
    #                        1,000 inits: their fd/thread checks run in the normal pass, and
    #                        their RSS checks switch off under sanitizers anyway
    #   StoppedRankUnderHooprun.*   hooprun's 3 s grace for a stopped rank plus HOOP_TIMEOUT:
    #                        7 s of waiting that sanitizes nothing the StoppedRank.* cases do not
    exclude='^style\.|^HooprunE2E\.SecondInterruptKillsAtOnce$|^Failure\.KilledRankLeavesNoSharedMemory$'
    exclude+='|Ranks\.(SweepEveryCollectiveDtypeOpAndCount|RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank)/[5-8]$'
    exclude+='|SimulatedHosts\.EveryCollectiveExact/.*"c"'
    exclude+='|ForcedSweepIsExact/[a-z]+_[a-z]+_[a-z]+_[347] |Launches\.|^multihost\.'
    exclude+='|^[A-Za-z]*/?Exchange\.|SimulatedHosts\.|Ranks\.[A-Za-z]*/[34]$'
    exclude+='|^Transport\.ManyStreamsAndSmallPieces$|^Algorithm\.EveryRankMakesTheSameChoice$'
    exclude+='|^StoppedRankUnderHooprun\.'
    # The device sweeps at 4 and 8 ranks: the 2- and 3-rank ones run the same device path.
    exclude+='|^Ranks/DeviceEmulatedSweep\.EveryCollectiveDtypeOpAndCount/[48]$'
    exclude+='|^Soak/Transport\.(TenThousandAllReducesKeepResourcesFlat|CreateDestroyCyclesLeaveNothingBehind)/'
    # The device sweeps across simulated hosts with 3 and 4 ranks: the 2-rank one runs the same
    # staged connections.
    exclude+='|^Layouts/DeviceEmulatedAcrossHosts\.EveryCollectiveDtypeOpAndCount/"aab"'
    # Not yet run under ASan (added without a sanitizer pass; to be brought in once they have
    # been): the NCCL drop-in's programs, which load libnccl.so.2 through LD_LIBRARY_PATH, and
    # the multi-process split and premultiplied-sum jobs.
    exclude+='|^nccl\.|^example\.nccl|^Ranks/(Split|PreMulSum)|^Split(Misuse|NonBlocking)\.'
    # hoop-validate on simulated hosts: namespaces and shaped links around the probe and the
    # report code that validate.local_3 and validate.local_corrupt_3 run on one host.
    exclude+='|^validate\.(healthy|slow_link|slow_host|slow_nic|lossy_link|link_down|corrupt)_'
    # Slurm's daemons and srun around the same rendezvous code the launch.mpirun.* jobs run
    # (PMIx) and the launch unit tests cover (the fallback without it).
    exclude+='|^launch\.slurm\.'
    cmake --preset asan
    cmake --build --preset asan -j "$jobs"
    ctest --preset asan -j "$jobs" --timeout 900 -E "$exclude" "$@"
    ;;
  tsan)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tools/tsan.supp${symbolizer:+:external_symbolizer_path=$symbolizer}"
    cmake --preset tsan
    cmake --build --preset tsan -j "$jobs" --target hoop_core_test hoop_api_test hoop_shm_test hoop_tcp_test \
      hoop_multiprocess_test hoop_test_worker hooprun hoop_security_test hoop_security_worker \
      hoop_config_test hoop_config_worker
    # In-process: several communicators as threads of one process (api tests: abort from another
    # thread, mismatches, strangers at the root) and both ends of shm connections.
    build-tsan/tests/core/hoop_core_test
    # Less the split, finalize and premultiplied-sum cases, not yet run under TSan.
    build-tsan/tests/api/hoop_api_test \
      --gtest_filter='-Split.*:Finalize.*:PreMulSum.*:CppApi.SplitPreMulSumAndFinalize'
    build-tsan/tests/transport/hoop_shm_test
    build-tsan/tests/transport/hoop_tcp_test
    build-tsan/tests/core/hoop_config_test  # the non-blocking queue's thread against abort
    # Several ranks per job, the failure paths (dead peer, killed rank) and strangers on the
    # ports. The sweeps and Transport.* take 3-5 minutes each under TSan (15x slower) for little
    # more: the threads they run are the ones the tests above run.
    subset='Ranks\.(SendRecvGroups|BarrierHoldsEveryoneUntilTheLastArrives)/[234]$'
    subset+='|Failure\.|Launch\.Hooprun|security\.'
    ctest --preset tsan -j "$jobs" --timeout 900 -R "$subset" "$@"
    ;;
  fuzz)
    if ! command -v clang++ > /dev/null; then
      echo "sanitizers.sh fuzz: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2
      exit 1
    fi
    export ASAN_OPTIONS="detect_leaks=1${symbolizer:+:external_symbolizer_path=$symbolizer}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    seconds="${HOOP_FUZZ_SECONDS:-5}"
    cmake --preset fuzz
    cmake --build --preset fuzz -j "$jobs" --target hoop_fuzzers
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    for target in bootstrap_fuzz tcp_fuzz env_fuzz rdma_setup_fuzz; do
      # New inputs go to a scratch corpus, crashes to build-fuzz/crashes/ (kept for the report).
      mkdir -p "$work/$target" build-fuzz/crashes
      echo "fuzzing $target for ${seconds}s"
      if ! "build-fuzz/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 \
          -artifact_prefix="build-fuzz/crashes/$target-" "$work/$target" "fuzz/corpus/$target" \
          > "$work/$target.log" 2>&1; then
        cat "$work/$target.log" >&2
        echo "sanitizers.sh fuzz: $target failed; the input is in build-fuzz/crashes/" >&2
        exit 1
      fi
      grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' "$work/$target.log"
    done
    ;;
  *)
    echo "usage: $0 asan|tsan|fuzz [ctest arguments]" >&2
    exit 2
    ;;
esac
