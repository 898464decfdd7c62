#!/bin/bash
# The guest's own check that its layout works (tools/rdma-check.sh --smoke, or when hoop's RDMA
# suite is absent): the verbs devices are up, RDMA crosses the link between the two simulated
# hosts (and stops when it is cut), and programs built on the host run here, hooprun included.
# Prints one "PASS name" or "FAIL name" line per check and exits with the number of failures.
set -uo pipefail

failures=0
passes=0
work=$(mktemp -d)

result() { # NAME STATUS
  if (($2 == 0)); then
    echo "PASS $1"
    passes=$((passes + 1))
  else
    echo "FAIL $1"
    failures=$((failures + 1))
  fi
}

# Starts SERVER... in the background on host A, waits for it to listen on PORT, runs the client
# command line in CLIENT_ARGS on host B against A's address, and reports both ends.
across_hosts() { # NAME PORT CLIENT_ARGS SERVER...
  local name=$1 port=$2 client=$3 server_pid status=0 tries
  shift 3
  on-host a timeout 120 "$@" -p "$port" >"$work/$name.server" 2>&1 &
  server_pid=$!
  for ((tries = 0; tries < 300; tries++)); do
    ip netns exec "$HOST_A_NETNS" ss -Hltn "sport = :$port" | grep -q . && break
    sleep 0.2
  done
  # shellcheck disable=SC2086 # the client's arguments are words
  on-host b timeout 120 $client -p "$port" "$HOST_A_ADDR" >"$work/$name.client" 2>&1 || status=1
  # A client that failed leaves the server waiting for it: no need to wait out its time-out.
  ((status == 0)) || kill "$server_pid" 2>/dev/null
  wait "$server_pid" || status=1
  ((status == 0)) || {
    echo "--- $name server:" && cat "$work/$name.server"
    echo "--- $name client:" && cat "$work/$name.client"
  }
  return "$status"
}

roce_packets() { cat "/sys/class/net/$HOST_B_ROCE_IF/statistics/rx_packets"; }

echo "== devices"
for device in "$RDMA_DEVICE" "$HOST_A_DEVICE" "$HOST_B_DEVICE"; do
  ibv_devinfo -d "$device" >"$work/devinfo" 2>&1
  grep -E 'hca_id|transport|state|link_layer' "$work/devinfo"
  grep -q PORT_ACTIVE "$work/devinfo" && grep -q 'link_layer:.*Ethernet' "$work/devinfo"
  result "devinfo-$device" $?
done

echo "== ibv_rc_pingpong from host B (rxeb) to host A (rxea), over the RoCE link"
before=$(roce_packets)
pingpong_a="ibv_rc_pingpong -d $HOST_A_DEVICE -g $HOST_A_GID_INDEX -n 100"
pingpong_b="ibv_rc_pingpong -d $HOST_B_DEVICE -g $HOST_B_GID_INDEX -n 100"
# shellcheck disable=SC2086 # command lines as words
across_hosts rc-pingpong 18600 "$pingpong_b" $pingpong_a
status=$?
grep -h 'iters in' "$work/rc-pingpong.client"
after=$(roce_packets)
echo "$HOST_B_ROCE_IF received $((after - before)) packets"
# 100 round trips of a ping-pong are at least 100 packets each way, all through the veth.
((status == 0 && after - before >= 100))
result rc-pingpong-across-hosts $?

echo "== ib_write_bw from host B to host A, briefly"
# shellcheck disable=SC2086 # command lines as words
across_hosts write-bw 18601 "ib_write_bw -F -d $HOST_B_DEVICE -x $HOST_B_GID_INDEX -s 65536 -n 200" \
  ib_write_bw -F -d "$HOST_A_DEVICE" -x "$HOST_A_GID_INDEX" -s 65536 -n 200
status=$?
grep -h -A1 '#bytes' "$work/write-bw.client"
result ib-write-bw-across-hosts "$status"

echo "== the RoCE link cut: a ping-pong must fail; restored: it must pass again"
hosts-link down roce
# shellcheck disable=SC2086 # command lines as words
across_hosts cut-pingpong 18602 "$pingpong_b" $pingpong_a >/dev/null 2>&1
cut_status=$?
grep -h -i -m1 'error\|failed' "$work/cut-pingpong.client" "$work/cut-pingpong.server"
hosts-link up roce
((cut_status != 0))
result rc-pingpong-fails-with-link-down $?
# shellcheck disable=SC2086 # command lines as words
across_hosts again-pingpong 18603 "$pingpong_b" $pingpong_a
result rc-pingpong-after-link-up $?

echo "== a program built on the host: hoop-topo"
"$HOOP_BUILD/bin/hoop-topo" >"$work/topo" 2>&1
status=$?
head -3 "$work/topo"
((status == 0)) && grep -q '^machine' "$work/topo"
result host-built-hoop-topo $?

worker=$HOOP_BUILD/tests/core/hoop_test_worker
if [[ -x $HOOP_BUILD/bin/hooprun && -x $worker ]]; then
  echo "== hooprun: 2 ranks on each simulated host (HOOP_RSH=hosts-rsh), barrier suite over TCP"
  on-host a "$HOOP_BUILD/bin/hooprun" --timeout 240 -np 4 -H "$HOST_A_ADDR:2,$HOST_B_ADDR:2" \
    -x "HOOP_SOCKET_IFNAME==$HOSTS_IFNAME" "$worker" --init env --suite barrier \
    >"$work/hooprun" 2>&1
  status=$?
  tail -5 "$work/hooprun"
  ((status == 0 && $(grep -c 'OK rank [0-3] of 4' "$work/hooprun") == 4))
  result hooprun-across-hosts $?
else
  echo "SKIP hooprun-across-hosts: build hooprun and hoop_test_worker for it"
fi

rm -rf "$work"
echo "$passes passed, $failures failed"
exit "$failures"
