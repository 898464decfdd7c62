#!/bin/bash
# PID 1 of the guest, started by the initramfs with the shares mounted under /share:
#   /share/build  hoop's programs and libraries (read-only), also mounted where the build is on
#                 the host, so paths compiled into the tests hold
#   /share/src    the source tree (read-only), likewise also at its host path
#   /share/out    the run's results: the suite's status and logs, read by tools/rdma-check.sh
# It mounts the usual file systems, sets up the RDMA devices and the two simulated hosts
# (layout.sh), runs the suite within the run's deadline, writes its status and powers off.
# It must never exit on its own: PID 1 ending is a kernel panic.
set -uo pipefail
export PATH=/share/src/tools/rdma-guest/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

readonly out=/share/out
readonly guest_tools=/share/src/tools/rdma-guest

note() { echo "rdma-guest [$(cut -d' ' -f1 /proc/uptime)s]: $*"; }

power_off() {
  sync
  echo o >/proc/sysrq-trigger
  sleep 60
}

finish() {
  echo "$1" >"$out/status"
  note "suite status $1"
  power_off
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
hostname guest
# Verbs pin every registered buffer: without this only 8 MiB could be registered.
ulimit -l unlimited
ulimit -n 65536
note "userspace up, kernel $(uname -r)"

# deadline (seconds since the epoch), suite (path in the source tree), host_build_dir and
# host_source_dir, written by tools/rdma-check.sh.
deadline="" suite="" host_build_dir="" host_source_dir=""
# shellcheck source=/dev/null
. /share/guest.env || finish 3

# The host's paths of the build and the source tree, the shorter first (the build may lie
# inside the source tree).
for pair in "$host_source_dir:/share/src" "$host_build_dir:/share/build"; do
  mkdir -p "${pair%%:*}" 2>/dev/null
  mount --bind "${pair#*:}" "${pair%%:*}" || {
    note "cannot mount ${pair#*:} at ${pair%%:*}"
    finish 3
  }
done
# Libraries the root lacks go where the loader looks without being told (no LD_LIBRARY_PATH,
# which a rank started with a clean environment through HOOP_RSH would not have, and no
# ldconfig, slow here).
cp -a /share/build/lib/. /usr/lib/x86_64-linux-gnu/
note "shares mounted, setting up the RDMA devices and the two hosts"

"$guest_tools/layout.sh" 2>&1 | tee "$out/layout.log"
layout_status=${PIPESTATUS[0]}
if ((layout_status != 0)); then
  note "setting up the RDMA devices and hosts failed ($layout_status)"
  finish 3
fi
# shellcheck source=/dev/null # written by layout.sh
. /run/rdma-guest/env

# The suite gets what is left of the run's time less a margin to report and power off.
seconds_left=$((deadline - $(date +%s) - 20))
if ((seconds_left < 10)); then
  note "no time left for the suite"
  finish 124
fi
note "running $suite (at most $seconds_left s)"
cd /tmp || finish 3
# Whichever ends first, the suite or its time: a suite still running is shown (ps) before the
# power-off ends it.
bash "/share/src/$suite" > >(tee "$out/suite.log") 2>&1 &
suite_pid=$!
sleep "$seconds_left" &
timer_pid=$!
wait -n -p first "$suite_pid" "$timer_pid"
status=$?
if [[ ${first:-} == "$suite_pid" ]]; then
  kill "$timer_pid"
else
  note "$suite ran out of time; what was still running:"
  # All but the kernel's threads (kthreadd, pid 2, and its children).
  ps -N -p 2 --ppid 2 -o pid,ppid,etimes,args --forest | tail -60
  status=124
fi
sleep 0.5 # the last of the suite's output through tee
finish "$status"
