#!/usr/bin/env bash
# hoop-validate on simulated hosts: network namespaces made by tests/multihost/netns.sh, every
# host's link shaped by an htb qdisc on its veth0 so that a healthy link has a known rate, and one
# fault put in per case. Each case checks the exit status, what report.json blames (and what it
# does not), the report against docs/validate-report.schema.json and the heatmaps (check_report.py).
#
#   validate_test.sh healthy HOSTS SLOTS      exit 0, no outlier, no blame
#   validate_test.sh slow-link HOSTS SLOTS    h1 <-> h2 at a tenth: exit 1, that link alone blamed
#   validate_test.sh slow-host HOSTS SLOTS    every link of h1 at a tenth: exit 1, h1 blamed, no link
#   validate_test.sh link-down HOSTS SLOTS    h2's link goes down mid-run: exit 2 within the
#                                             time-out, the bisection and a slack, the failure
#                                             reported and the bisection isolating h2, no hang
#   validate_test.sh slow-nic HOSTS 2         two NICs (rails) per host, local rank i on veth<i>:
#                                             h1's veth1 at a tenth both ways: exit 1, that NIC
#                                             alone blamed, not h1
#   validate_test.sh lossy-link HOSTS SLOTS   h1 and h2 drop a tenth of the packets between them
#                                             (iptables statistic): within a bounded time, exit 1
#                                             with that link blamed, or exit 2 with the failure
#                                             naming ranks of h1 or h2 alone
#   validate_test.sh corrupt HOSTS SLOTS      rank 1 flips a byte of what it sends
#                                             (HOOP_TEST_FLIP_BYTE): exit 2, the rank blamed with
#                                             the offset, bisection isolates its host
#   validate_test.sh local 1 SLOTS            one host, no namespaces (runs without root): outputs
#                                             valid, not failed
#   validate_test.sh local-corrupt 1 SLOTS    the same with rank 1 flipping a byte: exit 2, the
#                                             rank blamed with the offset
#   validate_test.sh time HOSTS SLOTS         prints how long --quick takes (bench/RESULTS.md)
#
# Environment: HOOPRUN, HOOP_VALIDATE (paths; CTest sets them), HOOP_VALIDATE_KEEP=DIR copies the
# outputs of the run to DIR. Exit 0 pass, 1 fail, 77 skipped (not root, no namespaces).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
readonly NETNS="$HERE/../multihost/netns.sh"
readonly CHECK="$HERE/check_report.py"
readonly SKIP=77
# A healthy link's rate, and a slow one's: a tenth. Low enough that the shaping, not two shared
# CPUs, sets what a link does.
readonly BASE_MBIT=100
readonly SLOW_MBIT=10
readonly FLIP_OFFSET=1000
# The share of packets a lossy link drops each way.
readonly DROP_PROBABILITY=0.1

say() { echo "validate: $*"; }

require_namespaces() {
  local why="" probe="hoopval-$$-probe"
  if [[ $(id -u) != 0 ]]; then
    why="not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"
  elif ! command -v ip >/dev/null || ! command -v tc >/dev/null || ! command -v unshare >/dev/null; then
    why="'ip' or 'tc' (iproute2) or 'unshare' (util-linux) is missing"
  elif ! ip netns add "$probe" 2>/dev/null; then
    why="'ip netns add' is not permitted here"
  else
    if ! ip -n "$probe" link add p0 type veth peer name p1 2>/dev/null; then
      why="no veth links here"
    elif ! ip netns exec "$probe" tc qdisc add dev p0 root handle 1: htb default 10 2>/dev/null; then
      why="no htb qdisc in this kernel"
    fi
    ip netns del "$probe" 2>/dev/null || true
  fi
  if [[ -n $why ]]; then
    echo "SKIP: hoop-validate's namespace tests need network namespaces: $why"
    exit "$SKIP"
  fi
}

SET=""
OUT=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [[ -n $SET ]] && { "$NETNS" down "$SET" || status=1; }
  if [[ -n $OUT ]]; then
    if [[ -n ${HOOP_VALIDATE_KEEP:-} ]]; then
      mkdir -p "$HOOP_VALIDATE_KEEP" && cp -r "$OUT"/. "$HOOP_VALIDATE_KEEP"/
    fi
    rm -rf "$OUT"
  fi
  exit "$status"
}

# Sets named hoopval-<pid>; one whose test died (a CTest time-out) is removed by the next.
reap_stale_sets() {
  local ns pid
  for ns in $(ip netns list | awk '{print $1}'); do
    if [[ $ns =~ ^hoopval-([0-9]+)-sw$ ]] && ! kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; then
      pid=${BASH_REMATCH[1]}
      say "removing set hoopval-$pid left by a test that died"
      "$NETNS" down "hoopval-$pid" || true
    fi
  done
}

# Egress of one interface: class 10 (the default) at the healthy rate, class 20 at the slow one
# for the destinations a case sends there.
shape() { # NAMESPACE DEVICE
  ip netns exec "$1" tc qdisc add dev "$2" root handle 1: htb default 10
  ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:10 htb rate "${BASE_MBIT}mbit" quantum 30000
  ip netns exec "$1" tc class add dev "$2" parent 1: classid 1:20 htb rate "${SLOW_MBIT}mbit" quantum 30000
}

# What hooprun starts on every host: hoop-validate on veth0, or with rails each rank on the NIC
# of its rail (local rank i on veth<i>, HOOP_SOCKET_IFNAME set per rank).
PROGRAM=()

start_set() { # HOSTS SLOTS [RAILS]
  local rails=${3:-1}
  require_namespaces
  : "${HOOPRUN:?set HOOPRUN to the hooprun binary}" "${HOOP_VALIDATE:?set HOOP_VALIDATE}"
  reap_stale_sets
  SET="hoopval-$$"
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/hoopval-$$.XXXXXX")
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  "$NETNS" up "$SET" "$1" "$rails"
  local h r
  for ((h = 0; h < $1; h++)); do
    for ((r = 0; r < rails; r++)); do shape "$SET-h$h" "veth$r"; done
  done
  if ((rails == 1)); then
    PROGRAM=(-x HOOP_SOCKET_IFNAME==veth0 "$HOOP_VALIDATE")
  else
    # shellcheck disable=SC2016 # expanded by each rank's shell, not this one
    PROGRAM=(sh -c 'HOOP_SOCKET_IFNAME="=veth$HOOP_LOCAL_RANK" exec "$0" "$@"' "$HOOP_VALIDATE")
  fi
  # What a healthy link gives each pair: the rate shared by the ranks on one NIC, less the headers.
  local slots=$((($2 + rails - 1) / rails))
  awk -v mbit="$BASE_MBIT" -v slots="$slots" 'BEGIN {
    printf "# one way per pair: %d Mbit/s shared by %d rank(s), 95%% of it past the headers\n", mbit, slots
    printf "tcp bandwidth %.6f\n", mbit / 8 / 1000 / slots * 0.95 }' >"$OUT/expect.txt"
  # The rest are floors, not figures: shared memory and round trips on CPUs that every test and
  # build of the machine shares move by 4x and more from one second to the next, and the faults
  # these cases put in are on the shaped links.
  printf '%s\n' "shm bandwidth 0.02" "shm latency 200" "tcp latency 2000" >>"$OUT/expect.txt"
}

slow_towards() { # FROM-HOST TO-HOST: FROM sends to TO at the slow rate
  local to
  to=$("$NETNS" addr "$SET" "h$2")
  ip netns exec "$SET-h$1" tc filter add dev veth0 parent 1: protocol ip prio 1 u32 \
    match ip dst "$to/32" flowid 1:20
}

# Runs hoop-validate on every host; its output in $OUT/log, its status in STATUS.
STATUS=0
validate() { # SLOTS NRANKS ARGS...
  local slots=$1 n=$2 hosts
  shift 2
  hosts=$("$NETNS" hostlist "$SET" "$slots")
  say "hooprun -np $n -H $hosts hoop-validate $*"
  STATUS=0
  HOOP_RSH="$NETNS rsh $SET" "$NETNS" exec "$SET" h0 "$HOOPRUN" --timeout 120 -np "$n" -H "$hosts" \
    -x HOOP_INIT_TIMEOUT=20 "${EXTRA_X[@]}" "${PROGRAM[@]}" \
    --out "$OUT/report" --expect "$OUT/expect.txt" --bytes 64K "$@" >"$OUT/log" 2>&1 </dev/null &
  VALIDATE_PID=$!
}
EXTRA_X=(-x HOOP_TIMEOUT=10)

finish() {
  wait "$VALIDATE_PID" || STATUS=$?
}

show() {
  say "---- hoop-validate output ----"
  sed 's/^/  /' "$OUT/log"
  say "------------------------------"
}

FAILED=0
problem() {
  say "FAIL: $*"
  FAILED=1
}

expect_status() {
  ((STATUS == $1)) || problem "exit status $STATUS, want $1"
}

check_report() { # ARGS for check_report.py
  local out
  if ! out=$(python3 "$CHECK" "$OUT/report" "$@" 2>&1); then
    problem "report check:"
    printf '    %s\n' "${out//$'\n'/$'\n'    }"
  else
    printf '  %s\n' "${out//$'\n'/$'\n'  }"
  fi
}

# The end of most cases: the run's status and what its report must say.
judge() { # WANT-STATUS CHECK-ARGS...
  finish
  expect_status "$1"
  shift
  check_report "$@"
  conclude
}

conclude() {
  if ((FAILED)); then
    show
    exit 1
  fi
  say "PASS"
  grep -E '^\[0\] (outliers|blame|  (link|host|rank|failure) |verdict)' "$OUT/log" || true
}

case_healthy() {
  local hosts=$1 slots=$2
  start_set "$hosts" "$slots"
  validate "$slots" $((hosts * slots)) --quick
  judge 0 --verdict healthy --no-outliers --no-blame
}

case_slow_link() {
  local hosts=$1 slots=$2
  start_set "$hosts" "$slots"
  slow_towards 1 2
  slow_towards 2 1
  # --full: the slow pair is measured whatever the matchings.
  validate "$slots" $((hosts * slots)) --quick --full
  judge 1 --verdict degraded --only-blame "link:h1 <-> h2"
}

case_slow_host() {
  local hosts=$1 slots=$2 h
  start_set "$hosts" "$slots"
  for ((h = 0; h < hosts; h++)); do
    ((h == 1)) && continue
    slow_towards 1 "$h"
    slow_towards "$h" 1
  done
  validate "$slots" $((hosts * slots)) --quick --full
  judge 1 --verdict degraded --only-blame "host:h1"
}

case_link_down() {
  # After the job fails (within a time-out or two), the bisection: at most two levels for four
  # hosts, each test waiting at most twice the time-out.
  local hosts=$1 slots=$2 timeout=3 slack=25 bisecting=12
  EXTRA_X=(-x "HOOP_TIMEOUT=$timeout")
  start_set "$hosts" "$slots"
  # A burn-in long enough to be cut in the middle; it would end on its own only after 60 s.
  validate "$slots" $((hosts * slots)) --burn-in 60s --no-collectives --timeout "$timeout"
  sleep 4
  ip -n "$SET-h2" link set veth0 down
  local cut=$SECONDS
  say "h2's link is down"
  finish
  local took=$((SECONDS - cut))
  say "hoop-validate ended ${took} s after the cut with status $STATUS"
  expect_status 2
  local limit=$((timeout * 2 + bisecting + slack))
  ((took <= limit)) || problem "it took ${took} s after the cut (limit $limit s)"
  check_report --verdict failed --failure --bisected h2
  conclude
}

case_corrupt() {
  local hosts=$1 slots=$2
  EXTRA_X=(-x HOOP_TIMEOUT=10 -x "HOOP_TEST_FLIP_BYTE=1:$FLIP_OFFSET")
  start_set "$hosts" "$slots"
  validate "$slots" $((hosts * slots)) --quick
  judge 2 --verdict failed --corrupt-rank 1 --offset "$FLIP_OFFSET" --bisected "$(host_of_rank 1 "$slots")"
}

case_slow_nic() {
  local hosts=$1 slots=$2
  ((slots == 2)) || { echo "slow-nic runs two ranks per host, one per rail" >&2; exit 2; }
  start_set "$hosts" "$slots" 2
  # h1's second NIC at a tenth both ways: its own egress, and the switch's port towards it.
  ip netns exec "$SET-h1" tc class change dev veth1 parent 1: classid 1:10 htb \
    rate "${SLOW_MBIT}mbit" quantum 30000
  shape "$SET-sw" p1r1
  ip netns exec "$SET-sw" tc class change dev p1r1 parent 1: classid 1:10 htb \
    rate "${SLOW_MBIT}mbit" quantum 30000
  validate "$slots" $((hosts * slots)) --quick --full
  judge 1 --verdict degraded --only-blame "nic:h1 veth1 (rail 1)"
}

case_lossy_link() {
  local hosts=$1 slots=$2 limit=60
  require_namespaces
  command -v iptables >/dev/null || { echo "SKIP: a lossy link needs iptables"; exit "$SKIP"; }
  start_set "$hosts" "$slots"
  local a b
  a=$("$NETNS" addr "$SET" h1)
  b=$("$NETNS" addr "$SET" h2)
  # Each end drops that share of what it sends to the other, and of what it receives from it.
  local ns peer
  for ns in h1 h2; do
    peer=$b
    [[ $ns == h2 ]] && peer=$a
    ip netns exec "$SET-$ns" iptables -A OUTPUT -o veth0 -d "$peer" \
      -m statistic --mode random --probability "$DROP_PROBABILITY" -j DROP ||
      { echo "SKIP: iptables cannot drop at random here (statistic match)"; exit "$SKIP"; }
    ip netns exec "$SET-$ns" iptables -A INPUT -i veth0 -s "$peer" \
      -m statistic --mode random --probability "$DROP_PROBABILITY" -j DROP
  done
  local begin=$SECONDS
  validate "$slots" $((hosts * slots)) --quick --full
  finish
  local took=$((SECONDS - begin))
  say "hoop-validate ended after ${took} s with status $STATUS"
  ((took <= limit)) || problem "it took ${took} s (limit $limit s)"
  if ((STATUS == 1)); then
    check_report --verdict degraded --only-blame "link:h1 <-> h2"
  elif ((STATUS == 2)); then
    check_report --verdict failed --failure --failure-hosts h1,h2
  else
    problem "exit status $STATUS, want 1 (the link slow) or 2 (the link failed)"
  fi
  ip netns exec "$SET-h1" iptables -L OUTPUT -v -n -x | awk '/statistic/ {print "validate: h1 dropped " $1 " packets to h2"}'
  conclude
}

# On this host alone: hooprun's own local launch, no shaping; judged against the cluster.
start_local() {
  : "${HOOPRUN:?set HOOPRUN to the hooprun binary}" "${HOOP_VALIDATE:?set HOOP_VALIDATE}"
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/hoopval-$$.XXXXXX")
  trap cleanup EXIT
  trap 'exit 130' INT TERM
}

validate_local() { # NRANKS ARGS...
  local n=$1
  shift
  say "hooprun -np $n hoop-validate $*"
  STATUS=0
  "$HOOPRUN" --timeout 120 -np "$n" -x HOOP_SOCKET_IFNAME==lo "${EXTRA_X[@]}" "$HOOP_VALIDATE" \
    --out "$OUT/report" "$@" >"$OUT/log" 2>&1 </dev/null &
  VALIDATE_PID=$!
}

case_local() {
  local slots=$2
  start_local
  validate_local "$slots" --quick
  finish
  # One host's shm pairs on CPUs other jobs share may differ: healthy or degraded, never failed.
  ((STATUS == 0 || STATUS == 1)) || problem "exit status $STATUS, want 0 or 1"
  check_report
  conclude
}

case_local_corrupt() {
  local slots=$2
  EXTRA_X=(-x HOOP_TIMEOUT=10 -x "HOOP_TEST_FLIP_BYTE=1:$FLIP_OFFSET")
  start_local
  validate_local "$slots" --quick
  judge 2 --verdict failed --corrupt-rank 1 --offset "$FLIP_OFFSET"
}

host_of_rank() { echo "h$(($1 / $2))"; }

case_time() {
  local hosts=$1 slots=$2
  start_set "$hosts" "$slots"
  local begin
  begin=$(date +%s.%N)
  # --quick as an operator runs it: its own message size, not the tests' smaller one.
  validate "$slots" $((hosts * slots)) --quick --bytes 256K
  finish
  local end
  end=$(date +%s.%N)
  grep -E '^\[0\] (hoop-validate:|verdict)' "$OUT/log" || true
  awk -v b="$begin" -v e="$end" -v h="$hosts" -v s="$slots" -v st="$STATUS" \
    'BEGIN { printf "validate: --quick on %d hosts x %d ranks: %.1f s from hooprun to exit (status %d)\n", h, s, e - b, st }'
}

main() {
  (($# == 3)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
  local name=$1
  shift
  case $name in
    healthy) case_healthy "$@" ;;
    slow-link) case_slow_link "$@" ;;
    slow-host) case_slow_host "$@" ;;
    link-down) case_link_down "$@" ;;
    corrupt) case_corrupt "$@" ;;
    slow-nic) case_slow_nic "$@" ;;
    lossy-link) case_lossy_link "$@" ;;
    time) case_time "$@" ;;
    local) case_local "$@" ;;
    local-corrupt) case_local_corrupt "$@" ;;
    *) echo "unknown case '$name'" >&2; exit 2 ;;
  esac
}

main "$@"
