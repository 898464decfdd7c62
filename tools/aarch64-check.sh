#!/usr/bin/env bash
# hoop on 64-bit ARM (aarch64) without ARM hardware: cross-builds with Debian's cross compiler and
# the target's libraries from Debian's arm64 packages (multiarch), then runs a subset of the tests
# under QEMU's user-mode emulation.
#   tools/aarch64-check.sh     installs what is missing (apt-get, as root or with sudo, on
#                              Debian 12), builds with the `aarch64` preset into build-aarch64,
#                              runs the subset below
#
# The subset, and why. QEMU translates every aarch64 instruction: a multi-process test runs about
# eight times slower than natively, and the whole suite (about half an hour of tests on x86)
# would take hours. What can differ on ARM is what is checked:
#   - the reduction kernels: every level this machine has (portable and NEON), every type and
#     op, bit for bit against a reference and against each other (hoop_reduce_isa_test), and the
#     fp16/bf16 conversions, the reduce entry points and the host executor (hoop_reduce_test):
#     the NEON code, and the portable code as GCC compiles it for aarch64;
#   - real multi-process jobs (hoop_multiprocess_test): 2, 3 and 4 ranks allreducing random
#     floats over shared memory and agreeing bit for bit, send/recv groups and a barrier at
#     3 ranks, jobs started by hooprun and by torchrun-style variables (TCP rendezvous), a dead
#     peer reported instead of hung and a killed rank's shared memory removed: the shm ring's
#     atomics and futex waits as compiled for aarch64, the wire formats, and the launch and
#     failure paths. (QEMU runs the atomics with the x86 host's stronger ordering, so a missing
#     barrier shows only on ARM hardware.)
# Left to x86: the sweeps of every collective x type x op x count at 1 to 8 ranks (the same
# schedule code; over an hour under QEMU), the tuner, the sanitizers, CUDA, Python and the
# training engine.
#
# Multi-process tests exec aarch64 binaries from aarch64 processes, which QEMU's user mode does
# not follow by itself: the kernel's binfmt_misc must hand aarch64 ELF files to qemu-aarch64.
# The script registers that when it can (root in a VM or a privileged container); where it
# cannot, it runs the single-process tests only and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

host_packages=(cmake ninja-build pkg-config g++-aarch64-linux-gnu qemu-user)
# libc6:arm64 and libstdc++6:arm64 let the emulated loader find the target's C and C++
# runtimes in /lib/aarch64-linux-gnu, as on a real Pi (no QEMU_LD_PREFIX to pass around).
target_packages=(libhwloc-dev:arm64 libgtest-dev:arm64 libc6:arm64 libstdc++6:arm64)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

install_packages() {
  local missing=() update=0
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "aarch64-check: adding arm64 as a foreign architecture (dpkg multiarch)"
    $sudo dpkg --add-architecture arm64
    update=1
  fi
  for p in "${host_packages[@]}" "${target_packages[@]}"; do
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    update=1
  fi
  if [ "$update" -eq 1 ]; then
    $sudo apt-get update
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "aarch64-check: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

# The aarch64 ELF header (64-bit, little-endian, machine 0xb7), executable or shared object;
# F: the interpreter is opened now, so it works in other mount namespaces too.
binfmt_dir=/proc/sys/fs/binfmt_misc
binfmt_magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
binfmt_mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

# Succeeds when the kernel runs aarch64 binaries (natively, or through a registered QEMU): the
# probe is hooprun, built as a dependency of the multi-process tests, started directly.
register_binfmt() {
  local probe=build-aarch64/bin/hooprun
  [ "$(uname -m)" = aarch64 ] && return 0
  if [ ! -e "$binfmt_dir/register" ]; then
    $sudo mount -t binfmt_misc binfmt_misc "$binfmt_dir" 2>/dev/null || return 1
  fi
  # Any aarch64 handler will do (qemu-user-binfmt's, or one registered by an earlier run).
  if ! grep -qs "magic 7f454c460201010000000000000000000200b700" "$binfmt_dir"/*; then
    printf '%s' ":qemu-aarch64:M::${binfmt_magic}:${binfmt_mask}:$(command -v qemu-aarch64):F" |
      $sudo tee "$binfmt_dir/register" >/dev/null 2>&1 || return 1
  fi
  grep -qs "^enabled" "$binfmt_dir/status" || return 1
  "$probe" --help >/dev/null 2>&1
}

# The targets the subset needs, nothing else (the full build is what x86 CI is for).
targets=(hoop_reduce_isa_test hoop_reduce_test hoop_multiprocess_test)
in_process_tests='ReduceAtEveryLevelTest|ReduceLevelTest|CpuIsaTest|HalfTest|ReduceTest|ReduceSweepTest'
in_process_tests+='|HostExecutor|ExecutorRegistry'
multi_process_tests='Ranks\.RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank/[234]$'
multi_process_tests+='|Ranks\.(SendRecvGroups|BarrierHoldsEveryoneUntilTheLastArrives)/3$'
multi_process_tests+='|^Launch\.(Hooprun|TorchrunVariables)$'
multi_process_tests+='|^Failure\.(DeadPeerIsReportedNotHung|KilledRankLeavesNoSharedMemory)$'
# The x86 levels' cases skip here; each would still cost an emulated process start.
x86_only='avx2|avx512'

install_packages
cmake --preset aarch64
start=$(date +%s)
cmake --build --preset aarch64 -j "$(nproc)" --target "${targets[@]}"
echo "aarch64-check: cross build took $(($(date +%s) - start)) s"

export HOOP_SOCKET_IFNAME="${HOOP_SOCKET_IFNAME:-=lo}"
regex="$in_process_tests"
if register_binfmt; then
  regex="$regex|$multi_process_tests"
else
  echo "aarch64-check: binfmt_misc cannot hand aarch64 binaries to qemu-aarch64 here (needs root" \
       "in a VM or a privileged container): the multi-process tests are skipped" >&2
fi
start=$(date +%s)
ctest --preset aarch64 -R "$regex" -E "$x86_only" -j "$(nproc)" --timeout 600
echo "aarch64-check: tests under qemu-aarch64 took $(($(date +%s) - start)) s"
