#!/usr/bin/env bash
# tools/rdma-check.sh's refusals, which must come before it installs, downloads or boots
# anything: each case must exit 2 and say why. The guest side's scripts that rewire networking
# must refuse to run outside the guest. (The guest itself runs in CI as tools/rdma-check.sh.)
#
#   rdma_check_test.sh SOURCE_DIR
set -uo pipefail

source_dir=${1:?usage: rdma_check_test.sh SOURCE_DIR}
check=$source_dir/tools/rdma-check.sh
failures=0
passes=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/build/bin"

# expect NAME STATUS TEXT COMMAND...: COMMAND must exit STATUS and print TEXT.
expect() {
  local name=$1 status=$2 text=$3 output got
  shift 3
  output=$("$@" </dev/null 2>&1)
  got=$?
  if [[ $got == "$status" && $output == *"$text"* ]]; then
    echo "PASS $name"
    passes=$((passes + 1))
  else
    echo "FAIL $name: wanted status $status and '$text', got status $got:"
    printf '  | %s\n' "${output//$'\n'/$'\n'  | }"
    failures=$((failures + 1))
  fi
}

expect unknown-option 2 "unknown option --bogus" "$check" --bogus
expect short-time-limit 2 "at least 60" "$check" --timeout 5
expect no-memory 2 "HOOP_RDMA_GUEST_MEMORY" env HOOP_RDMA_GUEST_MEMORY=64 "$check"

if [[ $(id -u) -eq 0 ]]; then
  # The script must be readable by the unprivileged user for this one.
  if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$check" 2>/dev/null; then
    expect not-root 2 "needs root" setpriv --reuid=65534 --regid=65534 --clear-groups "$check"
  else
    echo "SKIP not-root: $check is not readable by nobody"
  fi
  if [[ -r /etc/os-release ]] && grep -q '^VERSION_ID="12"' /etc/os-release; then
    expect no-build-directory 2 "no build directory '$scratch/none'" "$check" "$scratch/none"
    expect no-programs 2 "has no bin/" "$check" "$scratch"
    # A QEMU named explicitly is never installed: its absence stops the run at once.
    expect no-qemu 2 "QEMU ('$scratch/no-qemu') is not installed" \
      env HOOP_RDMA_QEMU="$scratch/no-qemu" "$check" "$scratch/build"
  else
    expect not-debian-12 2 "needs Debian 12" "$check" "$scratch/build"
  fi
else
  expect not-root 2 "needs root" "$check" "$scratch/build"
fi

expect layout-outside-guest 2 "only inside the guest" bash "$source_dir/tools/rdma-guest/layout.sh"
if [[ ! -e /run/rdma-guest/env ]]; then
  expect suite-outside-guest 2 "only inside the guest" \
    bash "$source_dir/tests/transport/rdma/guest_suite.sh"
fi
if [[ ! -e /run/rdma-guest/env ]]; then
  expect link-outside-guest 2 "only inside the guest" \
    bash "$source_dir/tools/rdma-guest/bin/hosts-link" down
fi

echo "$passes passed, $failures failed"
((failures == 0))
