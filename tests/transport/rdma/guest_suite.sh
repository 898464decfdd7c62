#!/bin/bash
# hoop's RDMA suite on a real verbs device: run by tools/rdma-check.sh inside its Soft-RoCE
# guest, as root, with the guest's layout in the environment (tools/rdma-guest/README.md):
#
#   HOOP_BUILD     the host's build (test binaries where the build puts them)
#   HOOP_SOURCE    the source tree
#   RDMA_DEVICE    rxe0: one host, every rank in the initial network namespace
#   HOST_{A,B}_{NAME,ADDR,DEVICE}, HOSTS_IFNAME
#                  two simulated hosts: network namespaces for TCP, and rxea/rxeb on the two
#                  ends of one veth pair for RDMA; `on-host A|B COMMAND` runs a process of one
#                  (its namespace, hostname and HOOP_IB_HCA), `hosts-link down|up` cuts and
#                  restores the RDMA link between them
#   RDMA_GUEST_OUT where logs go (one file per rank and step)
#
# Steps, each printed as "RESULT <step> PASS|FAIL (<seconds> s)":
#   unit          hoop_rdma_test (no device needed) and hoop_rdma_device_test (the data path
#                 through rxe0 in one process: every size, four queue pairs, in-place paths,
#                 registered buffers, a mismatched call, a vanished peer, no leaked object)
#   rdma-N        every collective with HOOP_TRANSPORT=rdma between N = 2, 3, 4 ranks of one
#                 host: exact results, random floats bitwise alike on every rank
#   two-hosts     2 + 2 ranks on hosts A and B with hoop's own choice: shm within a host and
#                 rdma across, checked in every rank's log, and every collective exact
#   registered    send/recv between registered buffers across the hosts: the zero-copy path,
#                 through hoop's C API and through its libnccl.so.2 (ncclCommRegister)
#   kill          a rank of host B killed mid-allreduce: the others fail naming it, no hang
#   link-down     the RoCE link cut mid-allreduce: both ranks fail naming the peer, no hang
#   ib-write-bw   ib_write_bw beside hoop-perf over rdma: their ratio, printed, never asserted
#
# The guest is 10 to 100 times slower than a host: every step asserts results, never speed.
# Exits with the number of failed steps. Steps named as arguments run alone (guest_suite.sh unit
# rdma-2), for trying one out.
# The steps' functions run through `step`, which shellcheck cannot follow.
# shellcheck disable=SC2317
set -uo pipefail

[[ -f /run/rdma-guest/env ]] || {
  echo "guest_suite.sh: runs only inside the guest of tools/rdma-check.sh" >&2
  exit 2
}
: "${HOOP_BUILD:?the guest environment names the build}" "${RDMA_DEVICE:?}" "${HOST_A_NETNS:?}"
readonly out=${RDMA_GUEST_OUT:-/tmp/rdma-suite}/rdma
mkdir -p "$out"
started=$(cut -d. -f1 /proc/uptime)
readonly started
failures=0
port=29600

note() { echo "guest-suite [+$(($(cut -d. -f1 /proc/uptime) - started))s]: $*"; }

find_binary() {
  local found
  found=$(find "$HOOP_BUILD" -name "$1" -type f -perm -u+x 2>/dev/null | head -1)
  [[ -n $found ]] || {
    echo "guest-suite: $1 is not in $HOOP_BUILD" >&2
    return 1
  }
  echo "$found"
}
worker=$(find_binary hoop_rdma_worker) || exit 1
unit_test=$(find_binary hoop_rdma_test) || exit 1
device_test=$(find_binary hoop_rdma_device_test) || exit 1
perf=$(find_binary hoop-perf) || perf=""
nccl_program=$(find_binary nccl_abi_hoop) || exit 1
# The library the program loads (the guest's copy of the build may hold more than one).
nccl_library=$(ldd "$nccl_program" | awk '$1 == "libnccl.so.2" {print $3}')

# step NAME COMMAND...: runs one step, prints its result and time.
step() {
  local name=$1 begin status
  shift
  begin=$(cut -d. -f1 /proc/uptime)
  note "step $name"
  "$@"
  status=$?
  local took=$(($(cut -d. -f1 /proc/uptime) - begin))
  if ((status == 0)); then
    echo "RESULT $name PASS (${took} s)"
  else
    echo "RESULT $name FAIL (${took} s)"
    failures=$((failures + 1))
  fi
}

# ---- Starting ranks ----
# A job's ranks are started here, one process each, not through hooprun: hooprun stops every
# rank as soon as one dies, and the failure steps need the survivors to report on their own.
#
# start_job NAME PLACEMENT ENV... -- PROGRAM ARGS...
#   PLACEMENT: "local:N" (N ranks in the initial namespace, RDMA on $RDMA_DEVICE) or "hosts:A,B"
#   (A ranks on host A, then B on host B, each host's RDMA device its own).
# Sets job_pids (by rank) and job_logs; every rank logs at INFO to $out/NAME.rank<R>.log.
start_job() {
  local name=$1 placement=$2
  shift 2
  local -a env=()
  while (($# > 0)) && [[ $1 != -- ]]; do
    env+=("$1")
    shift
  done
  shift
  local secret root nranks host_a=0 host_b=0
  secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  port=$((port + 1))
  case $placement in
    local:*)
      nranks=${placement#local:}
      root="127.0.0.1:$port"
      ;;
    hosts:*)
      host_a=${placement#hosts:}
      host_b=${host_a#*,}
      host_a=${host_a%,*}
      nranks=$((host_a + host_b))
      root="$HOST_A_ADDR:$port"
      ;;
  esac
  job_pids=()
  job_logs=()
  job_hosts=()
  local rank
  for ((rank = 0; rank < nranks; rank++)); do
    local log="$out/$name.rank$rank.log"
    local -a common=("HOOP_RANK=$rank" "HOOP_SIZE=$nranks" "HOOP_ROOT_ADDR=$root"
      "HOOP_SECRET=$secret" HOOP_DEBUG=INFO "HOOP_DEBUG_SUBSYS=INIT,NET" HOOP_TIMEOUT=60
      HOOP_INIT_TIMEOUT=120 HOOP_IB_TIMEOUT=14)
    if [[ $placement == local:* ]]; then
      env "${common[@]}" HOOP_SOCKET_IFNAME==lo "HOOP_IB_HCA==$RDMA_DEVICE" "${env[@]}" "$@" \
        >"$log" 2>&1 &
      job_hosts+=(guest)
    else
      local host=A host_name=$HOST_A_NAME
      ((rank < host_a)) || host=B host_name=$HOST_B_NAME
      on-host "$host" env "${common[@]}" "HOOP_SOCKET_IFNAME==$HOSTS_IFNAME" "${env[@]}" "$@" \
        >"$log" 2>&1 &
      job_hosts+=("$host_name")
    fi
    job_pids+=($!)
    job_logs+=("$log")
  done
}

# wait_job SECONDS: waits for every rank; kills what is left after SECONDS. Sets job_status.
wait_job() {
  local limit=$1 rank waited=0
  job_status=()
  while ((waited < limit * 10)); do
    local running=0
    for rank in "${!job_pids[@]}"; do
      kill -0 "${job_pids[$rank]}" 2>/dev/null && running=1
    done
    ((running)) || break
    sleep 0.1
    waited=$((waited + 1))
  done
  for rank in "${!job_pids[@]}"; do
    if kill -0 "${job_pids[$rank]}" 2>/dev/null; then
      echo "  rank $rank still running after $limit s: killed" >&2
      kill -9 "${job_pids[$rank]}" 2>/dev/null
    fi
    wait "${job_pids[$rank]}" 2>/dev/null
    job_status+=($?)
  done
}

# Every rank exited 0 and said OK; otherwise the tail of the failing ranks' logs.
all_passed() {
  local rank ok=0
  for rank in "${!job_pids[@]}"; do
    if [[ ${job_status[$rank]} != 0 ]] || ! grep -q "^OK rank $rank " "${job_logs[$rank]}"; then
      echo "  rank $rank exited ${job_status[$rank]}:" >&2
      tail -15 "${job_logs[$rank]}" | sed 's/^/    /' >&2
      ok=1
    fi
  done
  return "$ok"
}

# Every data connection a rank logged runs over `within` to ranks of its own host and over
# `across` to the others, and at least one of each kind exists when the job spans both. The
# lines are "connected to rank X (host H, pid P) at ... over T" and "accepted rank X (host H,
# pid P) over T".
check_transports() {
  local within=$1 across=$2 rank bad=0 seen_within=0 seen_across=0
  for rank in "${!job_logs[@]}"; do
    local own=${job_hosts[$rank]} line peer_host transport
    while IFS= read -r line; do
      peer_host=$(sed -E 's/.*(connected to|accepted) rank [0-9]+ \(host ([^,]+),.*/\2/' <<<"$line")
      transport=$(sed -E 's/.* over ([a-z_]+).*/\1/' <<<"$line")
      if [[ $peer_host == "$own" ]]; then
        seen_within=1
        [[ $transport == "$within" ]] || {
          echo "  rank $rank (host $own): $transport within the host: $line" >&2
          bad=1
        }
      else
        seen_across=1
        [[ $transport == "$across" ]] || {
          echo "  rank $rank (host $own): $transport across hosts: $line" >&2
          bad=1
        }
      fi
    done < <(grep -E '(connected to|accepted) rank [0-9]+ \(host .* over (shm|rdma|tcp)' \
      "${job_logs[$rank]}")
  done
  if [[ $within != - ]] && ((!seen_within)); then
    echo "  no connection within a host was logged" >&2
    bad=1
  fi
  if [[ $across != - ]] && ((!seen_across)); then
    echo "  no connection across hosts was logged" >&2
    bad=1
  fi
  return "$bad"
}

# ---- The steps ----

unit() {
  "$unit_test" --gtest_brief=1 >"$out/unit.log" 2>&1 || {
    tail -30 "$out/unit.log" >&2
    return 1
  }
  # The data path through the guest's device; a skip here would mean no device was found.
  RDMA_DEVICE=$RDMA_DEVICE "$device_test" --gtest_brief=1 >"$out/device.log" 2>&1 || {
    tail -40 "$out/device.log" >&2
    return 1
  }
  if grep -q SKIPPED "$out/device.log"; then
    grep -A3 SKIPPED "$out/device.log" >&2
    return 1
  fi
  grep -E '^\[  PASSED|tests? ran' "$out/device.log"
}

# N ranks with QPS queue pairs per connection; with "calibrate", the cost model is measured over
# the RDMA links at init (HOOP_TUNE_CALIBRATE=1) and the ranks must say what they adopted.
rdma_ranks() {
  local n=$1 qps=$2 calibrate=${3:-}
  start_job "rdma-$n" "local:$n" HOOP_TRANSPORT=rdma "HOOP_IB_QPS_PER_CONNECTION=$qps" \
    ${calibrate:+HOOP_TUNE_CALIBRATE=1 HOOP_DEBUG_SUBSYS=INIT,NET,TUNE} -- "$worker" collectives
  wait_job 240
  all_passed && check_transports rdma - || return 1
  [[ -z $calibrate ]] && return 0
  local rank
  for rank in "${!job_logs[@]}"; do
    grep -q 'cost model calibrated (slowest rank): tcp' "${job_logs[$rank]}" || {
      echo "  rank $rank did not calibrate its links" >&2
      return 1
    }
  done
  grep -o 'cost model calibrated (slowest rank): [^;]*' "${job_logs[0]}" | sed 's/^/  rank 0: /'
}

two_hosts() {
  start_job two-hosts hosts:2,2 -- "$worker" collectives
  wait_job 300
  all_passed && check_transports shm rdma
}

registered() {
  # Pieces of HOOP_CHUNK_SIZE larger than a slot: what goes straight between registered buffers.
  start_job registered hosts:1,1 HOOP_IB_QPS_PER_CONNECTION=2 HOOP_CHUNK_SIZE=4M -- \
    "$worker" registered
  wait_job 180
  all_passed && check_transports - rdma || return 1
  three_zero_copy_each_way || return 1
  # The same through hoop's libnccl.so.2: ncclCommRegister hands the buffers to hoop's registry.
  start_job nccl-registered hosts:1,1 HOOP_IB_QPS_PER_CONNECTION=2 HOOP_CHUNK_SIZE=4M -- \
    "$nccl_program" --library "$nccl_library" --id-dir "$out" --registered-only
  wait_job 180
  all_passed && check_transports - rdma && three_zero_copy_each_way
}

# Each rank sent three messages and received three straight between registered buffers.
three_zero_copy_each_way() {
  local rank
  for rank in 0 1; do
    grep -q 'rdma to rank .*: 3 message(s) written straight into registered buffers, 3 received' \
      "${job_logs[$rank]}" || {
      echo "  rank $rank did not log three zero-copy messages each way:" >&2
      grep 'rdma to rank' "${job_logs[$rank]}" | sed 's/^/    /' >&2
      return 1
    }
  done
}

# Waits until every rank of the job printed LOOPING (its allreduces run), at most 120 s.
wait_looping() {
  local rank tries
  for ((tries = 0; tries < 1200; tries++)); do
    local all=1
    for rank in "${!job_logs[@]}"; do
      grep -q '^LOOPING' "${job_logs[$rank]}" || all=0
    done
    ((all)) && return 0
    sleep 0.1
  done
  echo "  the ranks did not start their allreduces" >&2
  return 1
}

# Every rank but `skip` printed "ERROR hoopRemoteError ..." naming `who`, and exited 3.
survivors_named() {
  local skip=$1 who=$2 rank bad=0
  for rank in "${!job_logs[@]}"; do
    ((rank == skip)) && continue
    if [[ ${job_status[$rank]} != 3 ]] || ! grep -E "^ERROR hoopRemoteError .*$who" \
      "${job_logs[$rank]}" >/dev/null; then
      echo "  rank $rank (exit ${job_status[$rank]}) did not fail naming '$who':" >&2
      tail -8 "${job_logs[$rank]}" | sed 's/^/    /' >&2
      bad=1
    else
      grep -E '^ERROR' "${job_logs[$rank]}" | head -1 | cut -c1-400 | sed "s/^/  rank $rank: /"
    fi
  done
  return "$bad"
}

kill_rank() {
  start_job kill hosts:2,1 -- "$worker" loop
  wait_looping || {
    wait_job 1
    return 1
  }
  local killed_at
  killed_at=$(cut -d. -f1 /proc/uptime)
  # on-host, netns.sh, ip, unshare, sh and env all exec: the process started is the rank itself.
  kill -9 "${job_pids[2]}"
  wait_job 90
  ps -o pid,stat,args -p "${job_pids[2]}" >/dev/null 2>&1 &&
    echo "  the killed rank's process is still there: $(ps -o stat=,wchan=,args= -p "${job_pids[2]}")"
  note "the survivors ended $(($(cut -d. -f1 /proc/uptime) - killed_at)) s after the kill"
  survivors_named 2 "rank 2 \\(host $HOST_B_NAME"
}

link_down() {
  start_job link-down hosts:1,1 HOOP_IB_QPS_PER_CONNECTION=2 -- "$worker" loop
  wait_looping || {
    wait_job 1
    return 1
  }
  local cut_at status
  cut_at=$(cut -d. -f1 /proc/uptime)
  hosts-link down roce
  wait_job 90
  hosts-link up roce
  note "the ranks ended $(($(cut -d. -f1 /proc/uptime) - cut_at)) s after the link went down"
  survivors_named -1 "rank [01] \\(host h[01]"
  status=$?
  # What rank 0, whose own port went down, saw of it.
  grep -oE 'the port is [A-Z_]+' "${job_logs[0]}" | head -1 | sed 's/^/  rank 0: /'
  return "$status"
}

ib_write_bw_ratio() {
  local gid=${RDMA_GID_INDEX:-1} bytes=1048576
  ib_write_bw -d "$RDMA_DEVICE" -x "$gid" -s "$bytes" -n 50 -p 18600 -F >"$out/ib_write_bw.server" \
    2>&1 &
  local server=$!
  sleep 2
  ib_write_bw -d "$RDMA_DEVICE" -x "$gid" -s "$bytes" -n 50 -p 18600 -F 127.0.0.1 \
    >"$out/ib_write_bw.client" 2>&1
  local client_status=$?
  wait "$server"
  local verbs_mbs
  verbs_mbs=$(awk -v b="$bytes" '$1 == b {print $4}' "$out/ib_write_bw.client")
  if ((client_status != 0)) || [[ -z $verbs_mbs ]]; then
    echo "  ib_write_bw failed:" >&2
    tail -n 5 "$out/ib_write_bw.client" >&2
    return 1
  fi
  [[ -n $perf ]] || {
    echo "  hoop-perf was not built: ib_write_bw $verbs_mbs MB/s alone"
    return 0
  }
  start_job perf local:2 HOOP_TRANSPORT=rdma -- "$perf" sendrecv -b 1M -e 1M -n 5 -w 1
  wait_job 180
  [[ ${job_status[0]} == 0 && ${job_status[1]} == 0 ]] || {
    tail -n 10 "${job_logs[0]}" "${job_logs[1]}" >&2
    return 1
  }
  # hoop-perf's row: size count type redop root time(us) algbw ... (out of place); a byte per
  # microsecond is a MB/s. Each rank sends and receives 1 MiB at once.
  local hoop_mbs
  hoop_mbs=$(awk '$1 == 1048576 {printf "%.2f", $1 / $6; exit}' "${job_logs[0]}")
  echo "  ib_write_bw 1 MiB: $verbs_mbs MB/s; hoop-perf sendrecv 1 MiB over rdma: $hoop_mbs MB/s" \
    "each way; ratio $(awk -v h="$hoop_mbs" -v v="$verbs_mbs" 'BEGIN {if (v > 0) printf "%.2f", h / v}')" \
    "(the guest's figures say nothing of a real NIC's)"
}

note "RDMA suite: $worker; device $RDMA_DEVICE; hosts $HOST_A_NAME ($HOST_A_DEVICE) and" \
  "$HOST_B_NAME ($HOST_B_DEVICE)"
# Every step by default; the steps named on the command line alone otherwise.
steps=("$@")
((${#steps[@]} > 0)) ||
  steps=(unit rdma-2 rdma-3 rdma-4 two-hosts registered kill link-down ib-write-bw)
for name in "${steps[@]}"; do
  case $name in
    unit) step unit unit ;;
    rdma-2) step rdma-2 rdma_ranks 2 1 calibrate ;;
    rdma-3) step rdma-3 rdma_ranks 3 2 ;;
    rdma-4) step rdma-4 rdma_ranks 4 4 ;;
    two-hosts) step two-hosts two_hosts ;;
    registered) step registered registered ;;
    kill) step kill kill_rank ;;
    link-down) step link-down link_down ;;
    ib-write-bw) step ib-write-bw ib_write_bw_ratio ;;
    *)
      echo "guest-suite: no step '$name'" >&2
      failures=$((failures + 1))
      ;;
  esac
done
note "done: $failures step(s) failed"
exit "$failures"
