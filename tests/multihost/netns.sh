#!/usr/bin/env bash
# Several "hosts" on one machine for hoop's multi-host tests: one network namespace per host,
# each with a veth link to a bridge that lives in a separate "switch" namespace. Nothing is
# created in, or routed through, the root namespace: every interface is made inside the
# namespaces (`ip -n SW link add ... peer ... netns HOST`), so the only trace in the root
# namespace is the namespace names under /run/netns.
#
#   netns.sh up NAME NHOSTS [RAILS]  create NAME-sw and NAME-h0 .. NAME-h<N-1>; with RAILS > 1,
#                                    each host has veth0 .. veth<RAILS-1>, one per rail
#   netns.sh down NAME               stop what still runs in them and delete them all
#   netns.sh addr NAME HOST [RAIL]   print HOST's address (HOST: hI, NAME-hI or its address),
#                                    on rail RAIL (default 0)
#   netns.sh hostlist NAME SLOTS     print "-H" text: ADDR0:SLOTS,ADDR1:SLOTS,...
#   netns.sh netem NAME HOST SPEC    shape HOST's link both ways, e.g. "delay 2ms rate 200mbit"
#   netns.sh exec NAME HOST CMD...   run CMD in HOST's network namespace and a UTS namespace
#                                    of its own whose hostname is hI
#   netns.sh rsh NAME HOST SCRIPT    HOOP_RSH mode: like `ssh HOST SCRIPT` (see below)
#
# Addresses: host i is 10.231.K.(i+1)/24 on its interface veth0, where K (1..254) comes from a
# hash of NAME. Rail r (RAILS > 1) is a bridge of its own, br<r>, and a subnet of its own:
# host i's veth<r> is 10.(231+r).K.(i+1)/24, so each rail's traffic stays on its wire. Each set has its own switch, so two sets never share a wire even when K
# collides; K only keeps addresses of concurrent runs apart in logs. Hosts are named by their
# addresses on hooprun's command line (-H 10.231.K.1:2,10.231.K.2:2): no name resolution needed.
#
# rsh mode is what hooprun runs for a remote rank when HOOP_RSH="/path/netns.sh rsh NAME":
#   /path/netns.sh rsh NAME 10.231.K.2 'cd ...; read -r HOOP_SECRET && ... exec env ... prog'
# The script runs under `sh -c` in that host's namespaces with stdin passed through (the secret
# line) and, like a fresh ssh login, with a clean environment: only PATH, HOME, USER, LOGNAME,
# SHELL, LANG, LC_ALL and TERM survive, so variables a rank needs must travel with hooprun -x.
# Every step execs (ip netns exec, unshare, sh, env), so the process hooprun signals is the rank.
set -euo pipefail

readonly SWITCH_SUFFIX=sw
readonly HOST_IF=veth0

die() {
  echo "netns.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

check_name() {
  [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$ ]] ||
    die "bad set name '$1' (letters, digits, '_', '.', '-'; at most 40 characters)"
}

# The third octet of the set's addresses: 1..254 from the name's CRC.
subnet_octet() {
  local crc
  crc=$(printf '%s' "$1" | cksum | cut -d' ' -f1)
  echo $((crc % 254 + 1))
}

# Host indexes of an existing set, in order.
host_indexes() {
  local ns
  ip netns list | awk '{print $1}' | while read -r ns; do
    if [[ $ns == "$1"-h* && ${ns#"$1"-h} =~ ^[0-9]+$ ]]; then echo "${ns#"$1"-h}"; fi
  done | sort -n
}

# HOST given as hI, NAME-hI or the host's address: prints I.
host_index() {
  local name=$1 host=$2 k index
  k=$(subnet_octet "$name")
  if [[ $host =~ ^h([0-9]+)$ ]]; then
    index=${BASH_REMATCH[1]}
  elif [[ $host == "$name"-h* && ${host#"$name"-h} =~ ^[0-9]+$ ]]; then
    index=${host#"$name"-h}
  elif [[ $host =~ ^10\.231\.$k\.([0-9]+)$ ]] && ((BASH_REMATCH[1] >= 1)); then
    index=$((BASH_REMATCH[1] - 1))
  else
    die "'$host' is not a host of set '$name' (use hI, $name-hI or 10.231.$k.(I+1))"
  fi
  index=$((10#$index))
  ip netns list | awk '{print $1}' | grep -qx -- "$name-h$index" ||
    die "set '$name' has no host h$index (is it up?)"
  echo "$index"
}

# The switch's port of host I on rail R: p<I> on rail 0, p<I>r<R> on the others.
switch_port() { if (($2 == 0)); then echo "p$1"; else echo "p$1r$2"; fi; }

cmd_up() {
  local name=$1 nhosts=$2 rails=${3:-1} k i r sw ns port
  check_name "$name"
  if ! [[ $nhosts =~ ^[0-9]+$ ]] || ((nhosts < 1 || nhosts > 253)); then
    die "NHOSTS must be 1..253"
  fi
  if ! [[ $rails =~ ^[0-9]+$ ]] || ((rails < 1 || rails > 8)); then
    die "RAILS must be 1..8"
  fi
  k=$(subnet_octet "$name")
  sw="$name-$SWITCH_SUFFIX"
  if ip netns list | awk '{print $1}' | grep -qx -- "$sw"; then
    die "set '$name' already exists (netns.sh down $name)"
  fi
  # On failure (set -e), take down whatever part was built.
  UP_NAME=$name
  trap 'if [[ -n ${UP_NAME:-} ]]; then cmd_down "$UP_NAME" >/dev/null 2>&1 || true; fi' EXIT
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  for ((r = 0; r < rails; r++)); do
    ip -n "$sw" link add "br$r" type bridge
    ip -n "$sw" link set "br$r" up
  done
  for ((i = 0; i < nhosts; i++)); do
    ns="$name-h$i"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    for ((r = 0; r < rails; r++)); do
      port=$(switch_port "$i" "$r")
      # Both ends are born in their namespaces: nothing passes through the root namespace.
      ip -n "$sw" link add "$port" type veth peer name "veth$r" netns "$ns"
      ip -n "$sw" link set "$port" master "br$r"
      ip -n "$sw" link set "$port" up
      ip -n "$ns" addr add "10.$((231 + r)).$k.$((i + 1))/24" dev "veth$r"
      ip -n "$ns" link set "veth$r" up
    done
  done
  # The bridge forwards once its ports leave the listening state (no STP: at once) and the veth
  # carriers are up; wait for that so that the first connection does not race it.
  for ((i = 0; i < nhosts; i++)); do
    for ((r = 0; r < rails; r++)); do
      local tries=0
      until ip -n "$name-h$i" -o link show "veth$r" | grep -q 'state UP'; do
        ((++tries < 200)) || die "$name-h$i: veth$r did not come up"
        sleep 0.01
      done
    done
  done
  UP_NAME=
}

cmd_down() {
  local name=$1 ns pids pid tries
  check_name "$name"
  local all=()
  for i in $(host_indexes "$name"); do all+=("$name-h$i"); done
  if ip netns list | awk '{print $1}' | grep -qx -- "$name-$SWITCH_SUFFIX"; then
    all+=("$name-$SWITCH_SUFFIX")
  fi
  # Processes still inside (ranks of a failed run) would keep a namespace alive after its name
  # is gone: stop them by pid, politely first.
  for sig in TERM KILL; do
    pids=()
    for ns in "${all[@]}"; do
      while read -r pid; do [[ -n $pid ]] && pids+=("$pid"); done < <(ip netns pids "$ns" 2>/dev/null)
    done
    ((${#pids[@]} == 0)) && break
    kill "-$sig" "${pids[@]}" 2>/dev/null || true
    for ((tries = 0; tries < 100; tries++)); do
      local alive=0
      for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
      ((alive)) || break
      sleep 0.02
    done
  done
  # Deleting the switch namespace deletes every port and, with them, their veth peers.
  local status=0
  for ns in "${all[@]}"; do ip netns del "$ns" || status=1; done
  return "$status"
}

cmd_addr() {
  local index rail=${3:-0}
  [[ $rail =~ ^[0-7]$ ]] || die "RAIL must be 0..7"
  index=$(host_index "$1" "$2")
  echo "10.$((231 + rail)).$(subnet_octet "$1").$((index + 1))"
}

cmd_hostlist() {
  local name=$1 slots=$2 k list="" i
  k=$(subnet_octet "$name")
  for i in $(host_indexes "$name"); do list+="${list:+,}10.231.$k.$((i + 1)):$slots"; done
  [[ -n $list ]] || die "set '$name' has no hosts (is it up?)"
  echo "$list"
}

# tc spec for the kernel at hand: netem when the kernel has it. Many minimal kernels build without
# sch_netem: then the rate part becomes a token bucket (tbf) on both ends of the link, and the
# delay part a netfilter queue in the host's namespace whose packets hoop-delay-queue (path in
# HOOP_DELAY_QUEUE) holds for the delay, each way, before letting them go.
cmd_netem() {
  local name=$1 host=$2 spec=$3 index rate="" delay="" dev ns
  index=$(host_index "$name" "$host")
  local words
  read -r -a words <<<"$spec"
  for ((i = 0; i < ${#words[@]}; i++)); do
    [[ ${words[i]} == rate ]] && rate=${words[i + 1]:-}
    [[ ${words[i]} == delay ]] && delay=${words[i + 1]:-}
  done
  local netem=1
  for end in "$name-h$index:$HOST_IF" "$name-$SWITCH_SUFFIX:p$index"; do
    ns=${end%%:*}
    dev=${end#*:}
    if ip netns exec "$ns" tc qdisc replace dev "$dev" root netem "${words[@]}" 2>/dev/null; then
      continue
    fi
    netem=0
    [[ -n $rate || -n $delay ]] || die "this kernel has no netem qdisc and '$spec' has no rate or delay"
    if [[ -n $rate ]]; then
      ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" burst 64kb latency 400ms ||
        die "neither netem nor tbf could shape $ns $dev"
    fi
  done
  ((netem)) || [[ -z $delay ]] || delay_with_queue "$name-h$index" "$delay"
}

# DELAY ("2ms", "500us", "1s") as microseconds.
delay_microseconds() {
  [[ $1 =~ ^([0-9]+)(us|ms|s)$ ]] || die "delay '$1' is not a number with us, ms or s"
  case ${BASH_REMATCH[2]} in
    us) echo "${BASH_REMATCH[1]}" ;;
    ms) echo $((BASH_REMATCH[1] * 1000)) ;;
    s) echo $((BASH_REMATCH[1] * 1000000)) ;;
  esac
}

# Every packet in or out of the host's link goes through queue 0, held there for DELAY by a
# hoop-delay-queue inside the namespace (which `down` stops with everything else in it).
# --queue-bypass: should it be gone, packets pass undelayed rather than vanish.
delay_with_queue() { # NAMESPACE DELAY
  local ns=$1 micros
  micros=$(delay_microseconds "$2")
  [[ -n ${HOOP_DELAY_QUEUE:-} && -x ${HOOP_DELAY_QUEUE:-} ]] ||
    die "this kernel has no netem qdisc; a delay needs HOOP_DELAY_QUEUE (hoop-delay-queue, built with libnetfilter-queue-dev)"
  command -v iptables >/dev/null || die "this kernel has no netem qdisc; a delay needs iptables"
  ip netns exec "$ns" iptables -A OUTPUT -o "$HOST_IF" -j NFQUEUE --queue-num 0 --queue-bypass
  ip netns exec "$ns" iptables -A INPUT -i "$HOST_IF" -j NFQUEUE --queue-num 0 --queue-bypass
  ip netns exec "$ns" "$HOOP_DELAY_QUEUE" 0 "$micros" 900 </dev/null >/dev/null 2>&1 &
  disown
  # It must hold the queue before the first packet, or that packet would bypass the delay.
  local tries
  for ((tries = 0; tries < 100; tries++)); do
    # shellcheck disable=SC2016 # awk's own $1, not the shell's
    ip netns exec "$ns" awk '$1 == 0 {found = 1} END {exit !found}' \
      /proc/net/netfilter/nfnetlink_queue 2>/dev/null && break
    sleep 0.02
  done
  ((tries < 100)) || die "hoop-delay-queue did not bind queue 0 in $ns"
  echo "netns.sh: no netem in this kernel: $ns delays its link ${2} each way through an NFQUEUE" >&2
}

# Leaves the shaping in place only to be listed: `netns.sh qdisc NAME HOST`.
cmd_qdisc() {
  local index
  index=$(host_index "$1" "$2")
  ip netns exec "$1-h$index" tc qdisc show dev "$HOST_IF"
  ip netns exec "$1-$SWITCH_SUFFIX" tc qdisc show dev "p$index"
  if command -v iptables >/dev/null; then
    ip netns exec "$1-h$index" iptables -L -v -n -x | awk '/NFQUEUE/ {print "nfqueue:", $0}'
  fi
}

cmd_exec() {
  local name=$1 host=$2 index
  shift 2
  (($# > 0)) || die "exec: no command"
  index=$(host_index "$name" "$host")
  # shellcheck disable=SC2016 # $1 and $@ are the inner shell's
  exec ip netns exec "$name-h$index" unshare --uts -- \
    sh -c 'hostname "$1" || exit 1; shift; exec "$@"' netns-exec "h$index" "$@"
}

cmd_rsh() {
  local name=$1 host=$2 script=$3 index keep=() var
  index=$(host_index "$name" "$host")
  for var in PATH HOME USER LOGNAME SHELL LANG LC_ALL TERM; do
    [[ -n ${!var:-} ]] && keep+=("$var=${!var}")
  done
  # shellcheck disable=SC2016 # $1 and $@ are the inner shell's
  exec ip netns exec "$name-h$index" unshare --uts -- \
    sh -c 'hostname "$1" || exit 1; shift; exec "$@"' netns-rsh "h$index" \
    env -i "${keep[@]}" sh -c "$script"
}

main() {
  (($# >= 1)) || usage
  local cmd=$1
  shift
  case $cmd in
    up) (($# == 2 || $# == 3)) || usage; cmd_up "$@" ;;
    down) (($# == 1)) || usage; cmd_down "$@" ;;
    addr) (($# == 2 || $# == 3)) || usage; cmd_addr "$@" ;;
    hostlist) (($# == 2)) || usage; cmd_hostlist "$@" ;;
    netem) (($# == 3)) || usage; cmd_netem "$@" ;;
    qdisc) (($# == 2)) || usage; cmd_qdisc "$@" ;;
    exec) (($# >= 3)) || usage; cmd_exec "$@" ;;
    rsh)
      # ssh takes the remote command as several words and joins them with blanks; so do we.
      (($# >= 3)) || usage
      local name=$1 host=$2
      shift 2
      cmd_rsh "$name" "$host" "$*"
      ;;
    subnet) (($# == 1)) || usage; echo "10.231.$(subnet_octet "$1").0/24" ;;
    -h | --help | help) usage ;;
    *) usage ;;
  esac
}

main "$@"
