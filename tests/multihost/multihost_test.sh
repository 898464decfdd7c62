#!/usr/bin/env bash
# hoop's multi-host tests: hosts are network + UTS namespaces made by netns.sh, ranks start
# through hooprun with HOOP_RSH="netns.sh rsh SET", and every rank logs at INFO so that the
# log shows where each rank ran and how it connected. See README.md.
#
#   multihost_test.sh selftest                    the log checker on canned logs (no root needed)
#   multihost_test.sh run HOSTS SLOTS SUITE [ARGS...]
#                                                 HOSTS x SLOTS ranks run the worker suite
#   multihost_test.sh shaped HOSTS SLOTS SPEC SUITE [ARGS...]
#                                                 the same with the last host's link shaped by
#                                                 `netns.sh netem` (SPEC: "delay 2ms rate 200mbit")
#   multihost_test.sh one-identity HOSTS SLOTS    every rank claims one host (HOOP_HOSTNAME):
#                                                 the checker must reject the local ranks
#   multihost_test.sh rank-fails HOSTS SLOTS      the last rank exits 7 before init: hooprun must
#                                                 exit 7, name it and stop every other rank
#   multihost_test.sh link-cut HOSTS SLOTS        the last host's link goes down mid-allreduce:
#                                                 every rank must fail naming the operation within
#                                                 HOOP_TIMEOUT and a slack, nothing may hang
#
# Environment: HOOPRUN and HOOP_TEST_WORKER (paths; CTest sets them), HOOP_MH_KEEP_LOG=1 keeps
# the log of a passing run. Exit 0 pass, 1 fail, 77 skipped (no network namespaces here).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
readonly NETNS="$HERE/netns.sh"
readonly SKIP=77

# ---------------------------------------------------------------------------------------------
# The transport hook. A connection between two ranks of one host must use INTRA_HOST_TRANSPORT,
# one between hosts INTER_HOST_TRANSPORT: shared memory within a host ("connected to rank X ...
# over shm"), tcp across. HOOP_MH_INTRA_HOST_TRANSPORT=tcp checks a run with HOOP_TRANSPORT=tcp.
INTRA_HOST_TRANSPORT=${HOOP_MH_INTRA_HOST_TRANSPORT:-shm}
INTER_HOST_TRANSPORT=tcp

expected_transport() { # SELF_HOST PEER_HOST
  if [[ $1 == "$2" ]]; then echo "$INTRA_HOST_TRANSPORT"; else echo "$INTER_HOST_TRANSPORT"; fi
}
# ---------------------------------------------------------------------------------------------

say() { echo "multihost: $*"; }

# check_log LOG NRANKS SLOTS SUBNET
# Rank r runs on host h(r / SLOTS) at SUBNET.(r / SLOTS + 1) (hooprun fills hosts in -H order).
# Prints one line per problem and returns 1 if there is any:
#   - every rank printed "OK rank r of N" exactly once, and no rank printed FAIL;
#   - every rank logged "communicator ready: rank r of N, local rank r%SLOTS of SLOTS" once,
#     from its own host (the line's host:pid:rank prefix names the UTS hostname);
#   - every "connected to rank p (host H ...) at ADDR over T" / "accepted rank p (host H ...)
#     over T" line names p's real host, tcp dials p's host address, T is expected_transport;
#   - connections pair up (r connected to p <=> p accepted r), and each rank has at least one;
#   - with several hosts, at least one connection crosses hosts; with SLOTS > 1, at least one
#     stays within a host;
#   - where hoop logs a schedule choice ("... N ranks on H host(s)"), H is the number of hosts.
check_log() {
  local log=$1 n=$2 slots=$3 subnet=$4
  local errors=0 line r p host peer_host addr transport want
  local -A ok_count=() ready_count=() connected=() accepted=() per_rank=()
  local cross=0 within=0
  problem() {
    echo "  - $*"
    errors=$((errors + 1))
  }
  host_of() { echo "h$(($1 / slots))"; }

  local re_prefix='^\[([0-9]+)\] ([^: ]+):[0-9]+:([0-9-]+) hoop [A-Z]+ [A-Z]+ '
  local re_ready="${re_prefix}communicator ready: rank ([0-9]+) of ([0-9]+), local rank ([0-9]+) of ([0-9]+)"
  local re_conn="${re_prefix}connected to rank ([0-9]+) \(host ([^,]+), pid [0-9]+\) at ([^ ]+) over ([a-z_]+)"
  local re_coll='^\[([0-9]+)\] [^ ]+ hoop [A-Z]+ COLL .* ([0-9]+) ranks on ([0-9]+) host'
  local re_acc="${re_prefix}accepted rank ([0-9]+) \(host ([^,]+), pid [0-9]+\) over ([a-z_]+)"
  while IFS= read -r line; do
    line=${line%$'\r'}
    if [[ $line =~ ^\[([0-9]+)\]\ OK\ rank\ ([0-9]+)\ of\ ([0-9]+) ]]; then
      r=${BASH_REMATCH[1]}
      if [[ ${BASH_REMATCH[2]} != "$r" || ${BASH_REMATCH[3]} != "$n" ]]; then
        problem "rank $r says '${line#*] }' (want rank $r of $n)"
      fi
      ok_count[$r]=$((${ok_count[$r]:-0} + 1))
    elif [[ $line =~ ^\[([0-9]+)\]\ FAIL ]]; then
      problem "rank ${BASH_REMATCH[1]} failed: ${line#*] }"
    elif [[ $line =~ $re_ready ]]; then
      r=${BASH_REMATCH[1]}
      host=${BASH_REMATCH[2]}
      ready_count[$r]=$((${ready_count[$r]:-0} + 1))
      if [[ ${BASH_REMATCH[4]} != "$r" || ${BASH_REMATCH[5]} != "$n" ]]; then
        problem "rank $r: communicator is rank ${BASH_REMATCH[4]} of ${BASH_REMATCH[5]} (want $r of $n)"
      fi
      if [[ $host != "$(host_of "$r")" ]]; then
        problem "rank $r ran on host '$host', want $(host_of "$r")"
      fi
      if [[ ${BASH_REMATCH[6]} != $((r % slots)) || ${BASH_REMATCH[7]} != "$slots" ]]; then
        problem "rank $r: local rank ${BASH_REMATCH[6]} of ${BASH_REMATCH[7]}, want $((r % slots)) of $slots (ranks per host)"
      fi
    elif [[ $line =~ $re_coll ]]; then
      # The schedule choice names hoop's own count of hosts (when hoop logs it).
      if [[ ${BASH_REMATCH[2]} != "$n" || ${BASH_REMATCH[3]} != $((n / slots)) ]]; then
        problem "rank ${BASH_REMATCH[1]} counts ${BASH_REMATCH[2]} ranks on ${BASH_REMATCH[3]} host(s), want $n on $((n / slots)): ${line#*] }"
      fi
    elif [[ $line =~ $re_conn || $line =~ $re_acc ]]; then
      r=${BASH_REMATCH[1]}
      host=${BASH_REMATCH[2]}
      p=${BASH_REMATCH[4]}
      peer_host=${BASH_REMATCH[5]}
      if [[ $line == *" connected to rank "* ]]; then
        addr=${BASH_REMATCH[6]}
        transport=${BASH_REMATCH[7]}
        connected["$r,$p"]=1
      else
        addr=
        transport=${BASH_REMATCH[6]}
        accepted["$r,$p"]=1
      fi
      per_rank[$r]=1
      if [[ $host != "$(host_of "$r")" ]]; then
        problem "rank $r logged from host '$host', want $(host_of "$r"): ${line#*] }"
      fi
      if [[ $peer_host != "$(host_of "$p")" ]]; then
        problem "rank $r sees rank $p on host '$peer_host', want $(host_of "$p")"
      fi
      want=$(expected_transport "$(host_of "$r")" "$(host_of "$p")")
      if [[ $transport != "$want" ]]; then
        local hint=""
        if [[ $transport == tcp && $want == shm ]]; then
          hint=" (was the run made with HOOP_TRANSPORT=tcp? then set HOOP_MH_INTRA_HOST_TRANSPORT=tcp)"
        fi
        problem "rank $r <-> rank $p ($(host_of "$r") - $(host_of "$p")) over $transport, want $want$hint"
      fi
      if [[ -n $addr && $transport == tcp && ${addr%:*} != "$subnet.$((p / slots + 1))" ]]; then
        problem "rank $r dialled rank $p at $addr, want $(host_of "$p")'s address $subnet.$((p / slots + 1))"
      fi
      if [[ $(host_of "$r") == "$(host_of "$p")" ]]; then within=1; else cross=1; fi
    fi
  done <"$log"

  for ((r = 0; r < n; r++)); do
    [[ ${ok_count[$r]:-0} == 1 ]] || problem "rank $r printed 'OK rank $r of $n' ${ok_count[$r]:-0} times, want once"
    [[ ${ready_count[$r]:-0} == 1 ]] || problem "rank $r logged 'communicator ready' ${ready_count[$r]:-0} times, want once"
    if ((n > 1)) && [[ -z ${per_rank[$r]:-} ]]; then problem "rank $r logged no connection"; fi
  done
  local key
  for key in "${!connected[@]}"; do
    [[ -n ${accepted["${key#*,},${key%,*}"]:-} ]] ||
      problem "rank ${key%,*} connected to rank ${key#*,}, which never logged accepting it"
  done
  for key in "${!accepted[@]}"; do
    [[ -n ${connected["${key#*,},${key%,*}"]:-} ]] ||
      problem "rank ${key%,*} accepted rank ${key#*,}, which never logged connecting to it"
  done
  if ((n > slots && cross == 0)); then problem "no connection between hosts was logged"; fi
  if ((slots > 1 && within == 0)); then problem "no connection within a host was logged"; fi
  ((errors == 0))
}

# --- namespaces ------------------------------------------------------------------------------

SET=""
LOG=""

require_namespaces() {
  local why=""
  if [[ $(id -u) != 0 ]]; then
    why="not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
  elif ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    why="'ip' (iproute2) or 'unshare' (util-linux) is missing"
  else
    local probe="hoopmh-$$-probe" err
    if ! err=$(ip netns add "$probe" 2>&1); then
      why="'ip netns add' is not permitted here: $err"
    else
      if ! err=$(ip netns exec "$probe" unshare --uts -- sh -c 'hostname probe' 2>&1); then
        why="no UTS namespaces here: $err"
      elif ! err=$(ip -n "$probe" link add p0 type veth peer name p1 2>&1); then
        why="no veth links here: $err"
      fi
      ip netns del "$probe" 2>/dev/null || true
    fi
  fi
  if [[ -n $why ]]; then
    echo "SKIP: multi-host tests need network namespaces: $why"
    exit "$SKIP"
  fi
}

# Sets are named hoopmh-<pid of the test>; one whose test died without cleaning up (SIGKILL on
# a CTest timeout) is removed by the next test, with its log.
reap_stale_sets() {
  local ns pid
  local -A dead=()
  for ns in $(ip netns list | awk '{print $1}'); do
    if [[ $ns =~ ^hoopmh-([0-9]+)-(sw|probe|h[0-9]+)$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; then
      dead[${BASH_REMATCH[1]}]=1
    fi
  done
  for pid in "${!dead[@]}"; do
    say "removing set hoopmh-$pid left by a test that died"
    ip netns del "hoopmh-$pid-probe" 2>/dev/null || true
    "$NETNS" down "hoopmh-$pid" || true
    rm -f "${TMPDIR:-/tmp}/hoopmh-$pid."*.log
  done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n $SET ]]; then
    "$NETNS" down "$SET" || status=1
    if ip netns list | awk '{print $1}' | grep -q "^$SET-"; then
      say "FAIL: namespaces of $SET survived netns.sh down"
      status=1
    fi
  fi
  if [[ -n $LOG ]]; then
    if [[ ${HOOP_MH_KEEP_LOG:-0} == 1 ]]; then say "log kept: $LOG"; else rm -f "$LOG"; fi
  fi
  exit "$status"
}

start_set() { # HOSTS
  require_namespaces
  : "${HOOPRUN:?set HOOPRUN to the hooprun binary}" "${HOOP_TEST_WORKER:?set HOOP_TEST_WORKER}"
  reap_stale_sets
  SET="hoopmh-$$"
  LOG=$(mktemp "${TMPDIR:-/tmp}/hoopmh-$$.XXXXXX.log")
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  "$NETNS" up "$SET" "$1"
  SUBNET=$("$NETNS" addr "$SET" h0)
  SUBNET=${SUBNET%.*}
}

# hooprun runs in h0 (its rendezvous port and rank 0 live there); every rank, h0's included,
# starts through HOOP_RSH because hooprun treats any host not named localhost as remote.
hooprun_in_set() { # SLOTS NRANKS ARGS... ; writes $LOG, returns hooprun's status
  local slots=$1 n=$2 hosts
  shift 2
  hosts=$("$NETNS" hostlist "$SET" "$slots")
  say "hooprun -np $n -H $hosts $*"
  local status=0
  # In the background so that a TERM or INT for this script is handled at once (bash runs traps
  # only between foreground commands); the cleanup then stops hooprun and its ranks.
  HOOP_RSH="$NETNS rsh $SET" "$NETNS" exec "$SET" h0 "$HOOPRUN" --timeout 60 -np "$n" -H "$hosts" \
    -x HOOP_SOCKET_IFNAME==veth0 -x HOOP_DEBUG=INFO -x HOOP_INIT_TIMEOUT=20 -x HOOP_TIMEOUT=30 \
    "$@" >"$LOG" 2>&1 </dev/null &
  wait $! || status=$?
  return "$status"
}

# No rank may outlive hooprun: every process in the set's namespaces is gone once it returned
# (a link's delay queue, part of the wire, stays until `down`).
check_nothing_left() {
  local ns pid pids="" wire=""
  [[ -n ${HOOP_DELAY_QUEUE:-} ]] && wire=$(readlink -f "$HOOP_DELAY_QUEUE")
  for ns in $(ip netns list | awk '{print $1}' | grep "^$SET-h[0-9]*\$"); do
    for pid in $(ip netns pids "$ns"); do
      [[ -n $wire && $(readlink -f "/proc/$pid/exe" 2>/dev/null) == "$wire" ]] && continue
      pids+=" $pid"
    done
  done
  pids=$(xargs <<<"$pids")
  if [[ -n $pids ]]; then
    echo "  - processes still running in the hosts after hooprun returned: $pids"
    ps -o pid,args -p "${pids// /,}" 2>/dev/null | sed 's/^/    /' || true
    return 1
  fi
}

show_log() {
  say "---- hooprun output ----"
  sed 's/^/  /' "$LOG"
  say "------------------------"
}

finish_run() { # STATUS NRANKS SLOTS
  local status=$1 n=$2 slots=$3 failed=0
  if ((status != 0)); then
    say "FAIL: hooprun exited with status $status"
    failed=1
  fi
  local problems
  if ! problems=$(check_log "$LOG" "$n" "$slots" "$SUBNET"); then
    say "FAIL: the log does not show an exact run of $n ranks, $slots per host:"
    echo "$problems"
    failed=1
  fi
  if ! problems=$(check_nothing_left); then
    say "FAIL:"
    echo "$problems"
    failed=1
  fi
  if ((failed)); then
    show_log
    return 1
  fi
  say "PASS: $n ranks on $((n / slots)) hosts, exact results; local rank/size per host;" \
    "within a host over $INTRA_HOST_TRANSPORT, across over $INTER_HOST_TRANSPORT"
}

case_run() { # HOSTS SLOTS SUITE ARGS...
  local hosts=$1 slots=$2 suite=$3
  shift 3
  start_set "$hosts"
  local status=0
  hooprun_in_set "$slots" $((hosts * slots)) "$HOOP_TEST_WORKER" --init env --suite "$suite" "$@" ||
    status=$?
  finish_run "$status" $((hosts * slots)) "$slots"
}

case_shaped() { # HOSTS SLOTS SPEC SUITE ARGS...
  local hosts=$1 slots=$2 spec=$3 suite=$4
  shift 4
  start_set "$hosts"
  local last="h$((hosts - 1))"
  "$NETNS" netem "$SET" "$last" "$spec"
  say "link of $last shaped: $("$NETNS" qdisc "$SET" "$last" | head -1)"
  local status=0
  hooprun_in_set "$slots" $((hosts * slots)) "$HOOP_TEST_WORKER" --init env --suite "$suite" "$@" ||
    status=$?
  # Where the delay went through a netfilter queue, the job's packets must have passed it.
  local queued
  queued=$("$NETNS" qdisc "$SET" "$last" | awk '/^nfqueue:/ {n += $2} END {print n + 0}')
  say "packets through the delay queue: $queued"
  if "$NETNS" qdisc "$SET" "$last" | grep -q '^nfqueue:' && ((queued == 0)); then
    say "FAIL: the link's delay queue saw no packet"
    status=1
  fi
  finish_run "$status" $((hosts * slots)) "$slots"
}

# Every rank is told it runs on one host: hoop then counts all ranks as local, and the checker
# must say so. Proves that a wrong local rank/size cannot pass.
case_one_identity() { # HOSTS SLOTS
  local hosts=$1 slots=$2 n=$(($1 * $2))
  start_set "$hosts"
  local status=0
  hooprun_in_set "$slots" "$n" -x HOOP_HOSTNAME=onehost "$HOOP_TEST_WORKER" --init env \
    --suite hello || status=$?
  if ((status != 0)); then
    say "FAIL: hooprun exited with status $status"
    show_log
    return 1
  fi
  local problems
  if problems=$(check_log "$LOG" "$n" "$slots" "$SUBNET"); then
    say "FAIL: the checker accepted a run where every rank claimed the same host"
    show_log
    return 1
  fi
  if ! grep -q "local rank [0-9]* of $n, want" <<<"$problems"; then
    say "FAIL: the checker rejected the run, but not for its local ranks:"
    echo "$problems"
    show_log
    return 1
  fi
  check_nothing_left || return 1
  say "PASS: local size $n of a one-host identity rejected:"
  grep "local rank" <<<"$problems" | head -2
}

# The last rank (on the last host) exits 7 before initialising; the others wait for it in
# hoopCommInitFromEnv. hooprun must exit 7, name the rank and its host, and stop the rest.
case_rank_fails() { # HOSTS SLOTS
  local hosts=$1 slots=$2 n=$(($1 * $2))
  start_set "$hosts"
  local last=$((n - 1)) status=0 failed=0
  # shellcheck disable=SC2016 # $HOOP_RANK, $0 and $@ are the rank shell's
  hooprun_in_set "$slots" "$n" sh -c \
    'if [ "$HOOP_RANK" = '"$last"' ]; then echo "rank $HOOP_RANK fails on purpose" >&2; exit 7; fi
     exec "$0" "$@"' "$HOOP_TEST_WORKER" --init env --suite barrier || status=$?
  if ((status != 7)); then
    say "FAIL: hooprun exited with status $status, want 7 (the failing rank's)"
    failed=1
  fi
  if ! grep -q "rank $last .*host $SUBNET.$hosts.* exited with status 7" "$LOG"; then
    say "FAIL: hooprun did not name rank $last on $SUBNET.$hosts as the one that failed"
    failed=1
  fi
  if grep -q "OK rank" "$LOG"; then
    say "FAIL: a rank finished although rank $last never joined"
    failed=1
  fi
  local problems
  if ! problems=$(check_nothing_left); then
    say "FAIL:"
    echo "$problems"
    failed=1
  fi
  if ((failed)); then
    show_log
    return 1
  fi
  say "PASS: $(grep -m1 'exited with status' "$LOG")"
}

# An allreduce loop across hosts, then the last host's link goes down (`ip link set veth0 down`
# inside it: packets are dropped, no connection is reset). Every rank must fail with an error
# that names the operation (hoopTimeout, or hoopRemoteError where a socket does fail) within
# HOOP_TIMEOUT plus a slack for the hang report and hooprun's stop; hooprun must not need its own
# --timeout, and nothing may be left running.
case_link_cut() { # HOSTS SLOTS
  local hosts=$1 slots=$2 n=$(($1 * $2)) timeout=3 slack=20
  start_set "$hosts"
  local last="h$((hosts - 1))" hostlist status=0 failed=0 r
  hostlist=$("$NETNS" hostlist "$SET" "$slots")
  say "hooprun -np $n -H $hostlist (HOOP_TIMEOUT=$timeout) loop; then $last's link goes down"
  HOOP_RSH="$NETNS rsh $SET" "$NETNS" exec "$SET" h0 "$HOOPRUN" --timeout 60 -np "$n" \
    -H "$hostlist" -x HOOP_SOCKET_IFNAME==veth0 -x HOOP_INIT_TIMEOUT=20 \
    -x HOOP_TIMEOUT="$timeout" "$HOOP_TEST_WORKER" --init env --suite loop --count 65536 \
    >"$LOG" 2>&1 </dev/null &
  local job=$!
  local waited=0
  until (($(grep -c "LOOP rank" "$LOG") == n)); do
    if ((waited >= 300)) || ! kill -0 "$job" 2>/dev/null; then
      say "FAIL: the $n ranks did not all start their loop"
      show_log
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep 0.5
  ip -n "$SET-$last" link set veth0 down
  local cut=$SECONDS
  wait "$job" || status=$?
  local took=$((SECONDS - cut))
  say "hooprun exited with status $status ${took} s after the cut"
  if ((status == 0 || status == 124)); then
    say "FAIL: hooprun exited with status $status; want a rank's failure (not 0, not its timeout)"
    failed=1
  fi
  if ((took > timeout + slack)); then
    say "FAIL: the job took ${took} s to fail after the cut (HOOP_TIMEOUT $timeout s + $slack s)"
    failed=1
  fi
  # Every rank that reports at all names its operation; hooprun stops the others once the first
  # has failed, so at least one must have.
  local reported=0
  for ((r = 0; r < n; r++)); do
    if grep -Eq "^\[$r\] FAIL rank $r: .*(operation timed out|remote process exited).*: rank $r: allreduce #[0-9]+" "$LOG"; then
      reported=$((reported + 1))
    elif grep -q "^\[$r\] FAIL" "$LOG"; then
      say "FAIL: rank $r failed without naming its operation: $(grep -m1 "^\[$r\] FAIL" "$LOG")"
      failed=1
    fi
  done
  if ((reported == 0)); then
    say "FAIL: no rank reported the failed operation"
    failed=1
  fi
  local problems
  if ! problems=$(check_nothing_left); then
    say "FAIL:"
    echo "$problems"
    failed=1
  fi
  if ((failed)); then
    show_log
    return 1
  fi
  say "PASS: $reported of $n ranks reported the cut within ${took} s:"
  grep -m1 "FAIL rank" "$LOG" | cut -c1-200
  sed -n '/hooprun: an operation timed out/,$p' "$LOG" | grep '^hooprun:' || true
}

# The checker on canned logs: the log of a real 2 hosts x 2 ranks run (testdata/) passes, and
# each way a run can be wrong fails with the right complaint.
case_selftest() {
  # The canned log is an all-tcp run (as with HOOP_TRANSPORT=tcp); the hook cases switch to shm.
  local INTRA_HOST_TRANSPORT=tcp
  local good="$HERE/testdata/2x2_sweep.log" tmp failures=0 subnet MUTATED
  # The fixture's subnet: the address rank 0 dialled first, less its last number.
  subnet=$(grep -m1 -o ' at 10\.231\.[0-9]*\.' "$good" | sed 's/^ at //; s/\.$//')
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/hoop-multihost-selftest.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT

  expect() { # pass|fail NAME LOGFILE [WANTED COMPLAINT]
    local want=$1 name=$2 file=$3 pattern=${4:-} out got=pass
    out=$(check_log "$file" 4 2 "$subnet") || got=fail
    if [[ $got != "$want" ]]; then
      say "FAIL: $name: checker said $got, want $want"
      [[ -n $out ]] && echo "$out"
      failures=$((failures + 1))
    elif [[ -n $pattern ]] && ! grep -q -- "$pattern" <<<"$out"; then
      say "FAIL: $name: rejected, but without '$pattern':"
      echo "$out"
      failures=$((failures + 1))
    else
      say "ok: $name ($want${pattern:+: $(grep -m1 -- "$pattern" <<<"$out" | sed 's/^  - //')})"
    fi
  }
  mutate() { # NAME SED-SCRIPT: the good log changed by SED-SCRIPT, in $MUTATED
    MUTATED="$tmp/$1.log"
    sed -e "$2" "$good" >"$MUTATED"
    if cmp -s "$good" "$MUTATED"; then
      say "FAIL: mutation $1 changed nothing (has the log format changed?)"
      failures=$((failures + 1))
    fi
  }

  expect pass "real 2x2 log" "$good"
  mutate local_size '/rank 3 of 4, local rank/s/local rank 1 of 2/local rank 1 of 4/'
  expect fail "wrong local size" "$MUTATED" "local rank 1 of 4, want 1 of 2"
  mutate local_rank '/rank 2 of 4, local rank/s/local rank 0 of 2/local rank 1 of 2/'
  expect fail "wrong local rank" "$MUTATED" "local rank 1 of 2, want 0 of 2"
  mutate no_ok '/^\[3\] OK rank/d'
  expect fail "missing OK line" "$MUTATED" "rank 3 printed 'OK rank 3 of 4' 0 times"
  # shellcheck disable=SC2016 # sed's $a (append after the last line)
  mutate fail_line '$a [1] FAIL rank 1: allreduce int32 sum count=7: element 3'
  expect fail "a FAIL line" "$MUTATED" "rank 1 failed"
  mutate wrong_host 's/^\[2\] h1:/[2] h0:/'
  expect fail "rank on the wrong host" "$MUTATED" "rank 2 ran on host 'h0', want h1"
  mutate cross_shm '/^\[1\].*connected to rank 2 (host h1/s/over tcp/over shm/'
  expect fail "cross-host connection over shm" "$MUTATED" "over shm, want tcp"
  mutate loopback "/connected to rank 3 /s/at ${subnet//./\\.}\\.2:/at 127.0.0.1:/"
  expect fail "dialled over loopback" "$MUTATED" "want h1's address"
  mutate unpaired '/^\[3\].*accepted rank 0 /d'
  expect fail "unpaired connection" "$MUTATED" "never logged accepting it"
  mutate no_ready '/^\[0\].*communicator ready/d'
  expect fail "missing communicator ready" "$MUTATED" "rank 0 logged 'communicator ready' 0 times"
  # shellcheck disable=SC2016 # sed's $a
  mutate host_count '$a [2] h1:30155:2 hoop INFO COLL allreduce uses ring (first at 0 bytes, 4 ranks on 1 host(s))'
  expect fail "hoop counts one host" "$MUTATED" "counts 4 ranks on 1 host(s), want 4 on 2"
  # The shm hook: when within-host connections must be shm, the all-tcp log fails, and a log whose
  # within-host lines say shm passes.
  INTRA_HOST_TRANSPORT=shm expect fail "hook: within a host must be shm, log says tcp" "$good" \
    "over tcp, want shm"
  mutate intra_shm '
    /^\[[01]\] h0:.*rank [01] (host h0/s/over tcp/over shm/
    /^\[[23]\] h1:.*rank [23] (host h1/s/over tcp/over shm/'
  INTRA_HOST_TRANSPORT=shm expect pass "hook: shm within, tcp across" "$MUTATED"
  expect fail "shm within while the hook says tcp" "$MUTATED" "over shm, want tcp"
  ((failures == 0)) || return 1
  say "PASS: checker self-test"
}

main() {
  (($# >= 1)) || {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
  }
  local what=$1
  shift
  case $what in
    selftest) case_selftest ;;
    run) case_run "$@" ;;
    shaped) case_shaped "$@" ;;
    one-identity) case_one_identity "$@" ;;
    rank-fails) case_rank_fails "$@" ;;
    link-cut) case_link_cut "$@" ;;
    *) echo "unknown case '$what'" >&2; exit 2 ;;
  esac
}

main "$@"
