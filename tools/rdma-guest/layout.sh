#!/bin/bash
# Makes the guest's verbs devices and its two simulated hosts, and writes what a suite needs to
# know about them to /run/rdma-guest/env (sourced before the suite runs; README.md lists it).
#
# One host: rxe0, Soft-RoCE on eth0 (a virtio card whose only peer is an empty hub, so every
# packet stays in the guest), for ranks that all run in the initial network namespace.
#
# Two hosts, A and B:
#   control   network namespaces rdma-h0 (A) and rdma-h1 (B), a set as tests/multihost/netns.sh
#             makes them (its exec, rsh and down work on it): veth0 on a bridge, an address
#             each; run there with their own hostnames (h0, h1), hoop's TCP (bootstrap, control
#             plane) goes between them, and HOOP_RSH (bin/hosts-rsh) starts ranks in them for
#             hooprun -H
#   RoCE      rxea and rxeb on the two ends of one veth pair (roce-a, roce-b) in the initial
#             namespace; A's processes use rxea, B's rxeb. rxe in this kernel sends from the
#             initial namespace only, which is why the devices cannot live in the hosts'
#             namespaces; policy routing makes the kernel send each end's packets for the other
#             end out of the veth instead of delivering them locally, so RoCE traffic between
#             A and B really crosses the link, and taking it down cuts it.
#
# Every process costs a lot under emulation: the links, addresses and routes of a namespace are
# made by one ip process (-batch), the devices by one rdma process, and nothing forks a subshell.
set -euo pipefail
# It rewires routing: never anywhere but in the guest, whose PID 1 is init.sh.
if [[ $(tr '\0' ' ' </proc/1/cmdline) != *tools/rdma-guest/init.sh* ]]; then
  echo "layout.sh: runs only inside the guest of tools/rdma-check.sh" >&2
  exit 2
fi
# Each step with the time it started, for a layout that got slow: out/layout.trace.
exec 9>/share/out/layout.trace
BASH_XTRACEFD=9
PS4='+ ${EPOCHREALTIME} '
set -x

readonly env_dir=/run/rdma-guest
readonly set_name=rdma
readonly netns_sh=/share/src/tests/multihost/netns.sh
readonly single_addr=10.233.0.1
readonly roce_a_addr=10.233.1.1 roce_b_addr=10.233.1.2

say() { echo "layout: $*"; }

# Sets the variable named RESULT to the index of DEVICE's RoCE v2 GID for IPv4 ADDR. The kernel
# fills the GID table shortly after the address or the device appears, so this waits for it (up
# to 10 s).
gid_index() { # RESULT DEVICE ADDR
  local device=$2 addr=$3 wanted index gid type tries octets
  IFS=. read -r -a octets <<<"$addr"
  printf -v wanted '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${octets[@]}"
  for ((tries = 0; tries < 100; tries++)); do
    for ((index = 0; index < 16; index++)); do
      read -r gid <"/sys/class/infiniband/$device/ports/1/gids/$index" 2>/dev/null || continue
      [[ $gid == "$wanted" ]] || continue
      read -r type <"/sys/class/infiniband/$device/ports/1/gid_attrs/types/$index" 2>/dev/null || continue
      if [[ $type == "RoCE v2" ]]; then
        printf -v "$1" '%s' "$index"
        return 0
      fi
    done
    sleep 0.1
  done
  echo "layout: $device has no RoCE v2 GID for $addr" >&2
  return 1
}

# Waits until DEVICE's port is ACTIVE (it follows its netdev's carrier).
wait_active() {
  local tries state=""
  for ((tries = 0; tries < 100; tries++)); do
    read -r state <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || state=""
    [[ $state == *ACTIVE* ]] && return 0
    sleep 0.1
  done
  echo "layout: $1's port is not ACTIVE (${state:-no state})" >&2
  return 1
}

modprobe -a virtio_net veth bridge rdma_rxe rdma_ucm
[[ -d /sys/class/net/eth0 ]] || {
  echo "layout: no eth0 (QEMU's virtio network card)" >&2
  exit 1
}

# ---- The initial namespace: eth0 for one host, the RoCE link of the two hosts. ----
# Packets for the other end's address leave by the veth: tables 101 and 102, looked up before
# the local table (which would deliver them internally). The receiving end accepts packets whose
# source is an address of this machine (accept_local, no rp_filter).
ip -batch - <<COMMANDS
link set lo up
addr add $single_addr/24 dev eth0
link set eth0 up
link add roce-a type veth peer name roce-b
addr add $roce_a_addr/24 dev roce-a
addr add $roce_b_addr/24 dev roce-b
link set roce-a up
link set roce-b up
rule add pref 100 lookup local
rule del pref 0
route add $roce_b_addr dev roce-a src $roce_a_addr table 101
rule add pref 10 iif lo to $roce_b_addr lookup 101
route add $roce_a_addr dev roce-b src $roce_b_addr table 102
rule add pref 11 iif lo to $roce_a_addr lookup 102
COMMANDS
sysctl -qw net.ipv4.conf.{all,roce-a,roce-b}.accept_local=1 \
  net.ipv4.conf.{all,roce-a,roce-b}.rp_filter=0
rdma -b - <<COMMANDS
link add rxe0 type rxe netdev eth0
link add rxea type rxe netdev roce-a
link add rxeb type rxe netdev roce-b
COMMANDS
for device in rxe0 rxea rxeb; do wait_active "$device"; done
rxe0_gid="" rxea_gid="" rxeb_gid=""
gid_index rxe0_gid rxe0 "$single_addr"
gid_index rxea_gid rxea "$roce_a_addr"
gid_index rxeb_gid rxeb "$roce_b_addr"
say "rxe0 on eth0 ($single_addr), RoCE v2 GID index $rxe0_gid"
say "rxea on roce-a ($roce_a_addr, GID index $rxea_gid) <-> rxeb on roce-b ($roce_b_addr," \
  "GID index $rxeb_gid)"

# ---- The two hosts: the set netns.sh's `up` would make, in four ip processes instead of
# thirty: rdma-h0 and rdma-h1 with veth0 at .1 and .2 of the set's subnet, the other ends ports
# of a bridge in rdma-sw. ----
subnet=$("$netns_sh" subnet "$set_name")
host_a_addr=${subnet%.0/24}.1
host_b_addr=${subnet%.0/24}.2
ip -batch - <<COMMANDS
netns add $set_name-sw
netns add $set_name-h0
netns add $set_name-h1
COMMANDS
ip -n "$set_name-sw" -batch - <<COMMANDS
link set lo up
link add br0 type bridge
link set br0 up
link add p0 type veth peer name veth0 netns $set_name-h0
link set p0 master br0
link set p0 up
link add p1 type veth peer name veth0 netns $set_name-h1
link set p1 master br0
link set p1 up
COMMANDS
ip -n "$set_name-h0" -batch - <<COMMANDS
link set lo up
addr add $host_a_addr/24 dev veth0
link set veth0 up
COMMANDS
ip -n "$set_name-h1" -batch - <<COMMANDS
link set lo up
addr add $host_b_addr/24 dev veth0
link set veth0 up
COMMANDS
# The bridge forwards once both carriers are up: wait, so that a first connection does not race.
for host in h0 h1; do
  for ((tries = 0; ; tries++)); do
    [[ $(ip -n "$set_name-$host" -o link show veth0) == *"state UP"* ]] && break
    ((tries < 100)) || {
      echo "layout: $set_name-$host's veth0 did not come up" >&2
      exit 1
    }
    sleep 0.05
  done
done
say "host A: namespace $set_name-h0, hostname h0, $host_a_addr on veth0, RDMA device rxea"
say "host B: namespace $set_name-h1, hostname h1, $host_b_addr on veth0, RDMA device rxeb"

mkdir -p "$env_dir"
{
  q() { printf 'export %s=%q\n' "$1" "$2"; }
  q HOOP_BUILD /share/build
  q HOOP_SOURCE /share/src
  q RDMA_GUEST_OUT /share/out
  q RDMA_DEVICE rxe0
  q RDMA_GID_INDEX "$rxe0_gid"
  q RDMA_ADDR "$single_addr"
  q RDMA_HOSTS "$set_name"
  q HOST_A_NETNS "$set_name-h0"
  q HOST_A_NAME h0
  q HOST_A_ADDR "$host_a_addr"
  q HOST_A_DEVICE rxea
  q HOST_A_GID_INDEX "$rxea_gid"
  q HOST_A_ROCE_IF roce-a
  q HOST_A_ROCE_ADDR "$roce_a_addr"
  q HOST_B_NETNS "$set_name-h1"
  q HOST_B_NAME h1
  q HOST_B_ADDR "$host_b_addr"
  q HOST_B_DEVICE rxeb
  q HOST_B_GID_INDEX "$rxeb_gid"
  q HOST_B_ROCE_IF roce-b
  q HOST_B_ROCE_ADDR "$roce_b_addr"
  q HOSTS_IFNAME veth0
  q HOOP_RSH /share/src/tools/rdma-guest/bin/hosts-rsh
} >"$env_dir/env"
rdma link show
