#!/usr/bin/env bash
# The README's two commands.
#   tools/quickstart.sh bench  installs what hoop needs, builds, runs a 4-rank allreduce sweep
#   tools/quickstart.sh test   installs what hoop needs, builds, runs every test, the RDMA suite
#                              in a QEMU guest (tools/rdma-check.sh), the aarch64 cross build and
#                              its tests under qemu-aarch64 (tools/aarch64-check.sh), then the
#                              fuzzers and the ASan+UBSan and TSan builds (tools/sanitizers.sh)
# Needs root (or sudo) on Debian 12 the first time, to install packages with apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config googletest libgtest-dev libgmock-dev
          libbenchmark-dev openmpi-bin libopenmpi-dev libgloo-dev libhwloc-dev libibverbs-dev
          clang-format iproute2 iptables libnetfilter-queue-dev python3
          python3-dev pybind11-dev python3-pybind11 python3-torch python3-numpy python3-pytest
          dataset-fashion-mnist
          libpmix-dev slurm-wlm munge  # launch tests: PMIx under mpirun and srun, a one-node Slurm
          clang libclang-rt-14-dev llvm)  # fuzzers (libFuzzer), sanitizer report symbols

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "quickstart: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

build() {
  cmake --preset ci
  cmake --build --preset ci -j "$(nproc)"
}

# Runs one stage of the test command and says how long it took, so a slow stage is easy to find
# in a CI log.
test_started=$SECONDS
stage() {
  local began=$SECONDS
  "$@"
  echo "quickstart: stage '$*' took $((SECONDS - began)) s"
}

# Collectives talk over loopback only unless told otherwise.
export HOOP_SOCKET_IFNAME="${HOOP_SOCKET_IFNAME:-=lo}"

case "${1:-}" in
  bench)
    install_packages
    build
    build/bin/hooprun -np 4 build/bin/hoop-perf allreduce -b 8 -e 256M -f 4 -n 10 -w 3
    ;;
  test)
    stage install_packages
    stage build
    stage ctest --preset ci -j "$(nproc)" --timeout 600
    # The RDMA transport on a real verbs device: Soft-RoCE in a QEMU guest booted from Debian's
    # own kernel (tools/rdma-check.sh says how), running tests/transport/rdma/guest_suite.sh
    # with the binaries just built.
    stage tools/rdma-check.sh build
    # hoop on 64-bit ARM: a cross build with Debian's aarch64 compiler and arm64 libraries, and
    # the NEON kernels' exactness tests and a multi-process subset under qemu-aarch64
    # (tools/aarch64-check.sh says which tests and why).
    stage tools/aarch64-check.sh
    # Then the parsers under libFuzzer for a few seconds each, and the tests under the sanitizers
    # (tools/sanitizers.sh says what each runs). Any crash or report fails the run.
    stage tools/sanitizers.sh fuzz
    stage tools/sanitizers.sh asan
    stage tools/sanitizers.sh tsan
    echo "quickstart: every stage passed in $((SECONDS - test_started)) s"
    ;;
  *)
    echo "usage: $0 bench|test" >&2
    exit 2
    ;;
esac
