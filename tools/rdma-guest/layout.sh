#!/bin/bash
# Makes the guest's verbs devices and its two simulated hosts, and writes what a suite needs to
# know about them to /run/rdma-guest/env (sourced before the suite runs; README.md lists it).
#
# One host: rxe0, Soft-RoCE on eth0 (a virtio card whose only peer is an empty hub, so every
# packet stays in the guest), for ranks that all run in the initial network namespace.
#
# Two hosts, A and B:
#   control   network namespaces <set>-h0 (A) and <set>-h1 (B) made by tests/multihost/netns.sh,
#             each with veth0 on a bridge, its own hostname (h0, h1) and address: hoop's TCP
#             (bootstrap, control plane) runs there, and HOOP_RSH=`netns.sh rsh <set>` starts
#             ranks in them for hooprun -H
#   RoCE      rxea and rxeb on the two ends of one veth pair (roce-a, roce-b) in the initial
#             namespace; A's processes use rxea, B's rxeb. rxe in this kernel sends from the
#             initial namespace only, which is why the devices cannot live in the hosts'
#             namespaces; policy routing makes the kernel send each end's packets for the other
#             end out of the veth instead of delivering them locally, so RoCE traffic between
#             A and B really crosses the link, and taking it down cuts it.
set -euo pipefail
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

# The index of DEVICE's RoCE v2 GID for IPv4 ADDR. The kernel fills the GID table shortly after
# the address or the device appears, so this waits for it (up to 10 s).
gid_index() {
  local device=$1 addr=$2 wanted index gid type tries
  local octets
  IFS=. read -r -a octets <<<"$addr"
  wanted=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${octets[@]}")
  for ((tries = 0; tries < 100; tries++)); do
    for ((index = 0; index < 16; index++)); do
      read -r gid <"/sys/class/infiniband/$device/ports/1/gids/$index" 2>/dev/null || continue
      [[ $gid == "$wanted" ]] || continue
      read -r type <"/sys/class/infiniband/$device/ports/1/gid_attrs/types/$index" 2>/dev/null || continue
      [[ $type == "RoCE v2" ]] && echo "$index" && return 0
    done
    sleep 0.1
  done
  echo "layout: $device has no RoCE v2 GID for $addr" >&2
  return 1
}

# Waits until DEVICE's port is ACTIVE (it follows its netdev's carrier).
wait_active() {
  local tries state
  for ((tries = 0; tries < 100; tries++)); do
    read -r state <"/sys/class/infiniband/$1/ports/1/state" 2>/dev/null || state=""
    [[ $state == *ACTIVE* ]] && return 0
    sleep 0.1
  done
  echo "layout: $1's port is not ACTIVE (${state:-no state})" >&2
  return 1
}

modprobe -a virtio_net veth bridge rdma_rxe rdma_ucm
ip link set lo up

# ---- One host: rxe0 on eth0. ----
[[ -d /sys/class/net/eth0 ]] || {
  echo "layout: no eth0 (QEMU's virtio network card)" >&2
  exit 1
}
ip addr add "$single_addr/24" dev eth0
ip link set eth0 up
rdma link add rxe0 type rxe netdev eth0
wait_active rxe0
rxe0_gid=$(gid_index rxe0 "$single_addr")
say "rxe0 on eth0 ($single_addr), RoCE v2 GID index $rxe0_gid"

# ---- Two hosts: RoCE link in the initial namespace. ----
ip link add roce-a type veth peer name roce-b
ip addr add "$roce_a_addr/24" dev roce-a
ip addr add "$roce_b_addr/24" dev roce-b
ip link set roce-a up
ip link set roce-b up
for interface in all roce-a roce-b; do
  # Packets from one end arrive at the other with a source address of this same machine.
  sysctl -qw "net.ipv4.conf.$interface.accept_local=1" "net.ipv4.conf.$interface.rp_filter=0"
done
# Locally sent packets for the other end's address go out of the veth (tables 101, 102)
# instead of being looked up in the local table first, which would deliver them internally.
ip rule add pref 100 lookup local
ip rule del pref 0
ip route add "$roce_b_addr" dev roce-a src "$roce_a_addr" table 101
ip rule add pref 10 iif lo to "$roce_b_addr" lookup 101
ip route add "$roce_a_addr" dev roce-b src "$roce_b_addr" table 102
ip rule add pref 11 iif lo to "$roce_a_addr" lookup 102
rdma link add rxea type rxe netdev roce-a
rdma link add rxeb type rxe netdev roce-b
wait_active rxea
wait_active rxeb
rxea_gid=$(gid_index rxea "$roce_a_addr")
rxeb_gid=$(gid_index rxeb "$roce_b_addr")
say "rxea on roce-a ($roce_a_addr, GID index $rxea_gid) <-> rxeb on roce-b ($roce_b_addr," \
  "GID index $rxeb_gid)"

# ---- Two hosts: their namespaces and control network. ----
"$netns_sh" up "$set_name" 2
# Host i of a set is .(i+1) of the set's subnet (netns.sh); one call instead of one per host.
subnet=$("$netns_sh" subnet "$set_name")
host_a_addr=${subnet%.0/24}.1
host_b_addr=${subnet%.0/24}.2
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
  q HOOP_RSH "$netns_sh rsh $set_name"
} >"$env_dir/env"
rdma link show
