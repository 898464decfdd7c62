#!/usr/bin/env bash
# Runs hoop's RDMA tests on a real verbs device without RDMA hardware: Debian 12's own kernel,
# whose rdma_rxe module is Soft-RoCE (a verbs device over an Ethernet interface, driven by the
# same rdma-core userspace as a RoCE NIC), booted under QEMU with a minimal Debian root, and the
# binaries of BUILD_DIR run inside it unchanged. tools/rdma-guest/README.md describes the guest.
#
#   tools/rdma-check.sh [--smoke] [--timeout SECONDS] [BUILD_DIR]     (BUILD_DIR: build/)
#
#   --smoke     run tools/rdma-guest/smoke.sh (verbs tools across the two simulated hosts and a
#               host-built program) instead of tests/transport/rdma/guest_suite.sh; the smoke
#               suite also runs when guest_suite.sh does not exist
#   --suite F   run F (a script, as a path in the source tree) instead
#   --timeout   the limit on the whole run, preparation included (default HOOP_RDMA_TIMEOUT or
#               720): past it QEMU is killed and the run fails
#
# Exits with the guest suite's status; 2 for a wrong call or a host that cannot run the guest,
# 3 when the guest ended without reporting a status (QEMU failed or the guest crashed), 124 when
# the time limit ran out.
#
# Needs root on Debian 12: it installs qemu-system-x86 with apt-get, downloads Debian's kernel
# package (whatever linux-image-amd64 depends on), busybox-static and the root's packages, and
# unpacks them into a cache (HOOP_RDMA_CACHE, default ~/.cache/hoop-rdma-guest) so later runs
# on the same machine boot at once. The guest runs on TCG (software emulation): it needs no
# /dev/kvm, and is 10-100 times slower than the host, so the suites assert results, never speed.
set -euo pipefail

started=$(date +%s)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
readonly started source_dir
readonly guest_tools="$source_dir/tools/rdma-guest"
# The guest root: what a minimal Debian system needs to run scripts (the Essential set and
# mount, procps, iproute2, kmod, util-linux's unshare), the verbs userspace and its tools, and
# the run-time libraries hoop's binaries load. Their dependencies are added by apt.
readonly root_packages=(
  base-files base-passwd bash bsdutils coreutils dash debianutils diffutils findutils grep gzip
  hostname libc-bin mawk ncurses-bin sed sysvinit-utils tar util-linux mount procps
  iproute2 kmod rdma-core libibverbs1 ibverbs-providers ibverbs-utils perftest
  libstdc++6 libgcc-s1 libhwloc15
)
# Loaded by the initramfs to mount the root over 9p and make the overlay on it.
readonly boot_modules=(virtio_pci 9pnet_virtio 9p overlay)

log() { echo "rdma-check [+$(($(date +%s) - started))s]: $*"; }
die() {
  local status=$1
  shift
  echo "rdma-check: error: $*" >&2
  exit "$status"
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

suite_choice=auto
time_limit=${HOOP_RDMA_TIMEOUT:-720}
build_dir=""
while (($# > 0)); do
  case $1 in
    --smoke) suite_choice=tools/rdma-guest/smoke.sh ;;
    --suite)
      (($# >= 2)) || usage
      suite_choice=$2
      shift
      ;;
    --timeout)
      (($# >= 2)) || usage
      time_limit=$2
      shift
      ;;
    --timeout=*) time_limit=${1#--timeout=} ;;
    -h | --help) usage ;;
    -*) echo "rdma-check: unknown option $1" >&2 && usage ;;
    *)
      [[ -z $build_dir ]] || usage
      build_dir=$1
      ;;
  esac
  shift
done
if ! [[ $time_limit =~ ^[0-9]+$ ]] || ((time_limit < 60)); then
  die 2 "the time limit must be whole seconds, at least 60 (got '$time_limit')"
fi
readonly deadline=$((started + time_limit))
guest_cpus=${HOOP_RDMA_GUEST_CPUS:-2}
guest_memory=${HOOP_RDMA_GUEST_MEMORY:-4096}
[[ $guest_cpus =~ ^[1-9][0-9]?$ ]] || die 2 "HOOP_RDMA_GUEST_CPUS must be 1..99"
if ! [[ $guest_memory =~ ^[0-9]+$ ]] || ((guest_memory < 512)); then
  die 2 "HOOP_RDMA_GUEST_MEMORY must be MiB, at least 512"
fi
qemu=${HOOP_RDMA_QEMU:-qemu-system-x86_64}

# ---- The host: root, Debian 12, a build of hoop. ----
[[ $(id -u) -eq 0 ]] ||
  die 2 "needs root: it installs packages with apt-get, builds the guest root with chroot and" \
    "exports it to QEMU with its owners kept (run it with sudo)"
# shellcheck disable=SC1091 # the host's, not ours
[[ -r /etc/os-release ]] && os_id=$(. /etc/os-release && echo "${ID:-}:${VERSION_ID:-}")
[[ ${os_id:-} == debian:12 ]] ||
  die 2 "needs Debian 12 (the guest's root and kernel come from its archive, and the binaries" \
    "built here must match the guest's C library); this host is '${os_id:-unknown}'"
requested_build_dir=${build_dir:-$source_dir/build}
build_dir=$(cd "$requested_build_dir" 2>/dev/null && pwd) ||
  die 2 "no build directory '$requested_build_dir' (cmake --preset ci && cmake --build --preset ci)"
[[ -d $build_dir/bin ]] || die 2 "$build_dir has no bin/: build hoop first (cmake --build --preset ci)"

if [[ $suite_choice != auto ]]; then
  suite=${suite_choice#./}
  [[ -f $source_dir/$suite ]] || die 2 "no suite $source_dir/$suite"
elif [[ -f $source_dir/tests/transport/rdma/guest_suite.sh ]]; then
  suite=tests/transport/rdma/guest_suite.sh
else
  suite=tools/rdma-guest/smoke.sh
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_update() {
  ((apt_updated)) && return 0
  log "apt-get update"
  apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null || die 2 "apt-get update failed"
  apt_updated=1
}

if ! command -v "$qemu" >/dev/null; then
  if [[ -z ${HOOP_RDMA_QEMU:-} ]]; then
    apt_update
    log "apt-get install qemu-system-x86"
    apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends qemu-system-x86 \
      >/dev/null || die 2 "could not install qemu-system-x86"
  fi
  command -v "$qemu" >/dev/null || die 2 "QEMU ('$qemu') is not installed"
fi
if ! command -v xz >/dev/null; then
  apt_update
  apt-get install -y -q -o DPkg::Lock::Timeout=300 --no-install-recommends xz-utils >/dev/null ||
    die 2 "could not install xz-utils"
fi

cache_root=${HOOP_RDMA_CACHE:-${HOME:-/root}/.cache/hoop-rdma-guest}
# The key names what goes into the guest, not the kernel's version: a hit then needs no apt at
# all. A guest older than this is made again, with the kernel Debian ships by then.
readonly cache_days=30
cache_key() {
  {
    echo "packages ${root_packages[*]}"
    echo "modules ${boot_modules[*]}"
    # The recipe itself: any change to how the guest is made makes a new one.
    declare -f download_closure unpack_deb module_load_order build_guest
    cat "$guest_tools/initramfs-init"
  } | sha256sum | cut -c1-16
}

# ---- The guest's root, kernel and initramfs, made once per key. ----

# Downloads PACKAGES and everything they depend on into DIR, as apt resolves them for an empty
# system: the status file it reads lists nothing installed.
download_closure() {
  local dir=$1
  shift
  mkdir -p "$dir/archives/partial" "$dir/cache"
  : >"$dir/status"
  apt-get -q -y --download-only --no-install-recommends \
    -o Dir::State::status="$dir/status" -o Dir::Cache="$dir/cache" \
    -o Dir::Cache::archives="$dir/archives" -o Debug::NoLocking=1 \
    -o APT::Sandbox::User=root -o Acquire::Languages=none \
    install "$@" >"$dir/apt.log" 2>&1 || {
    tail -20 "$dir/apt.log" >&2
    die 2 "apt-get could not download the guest root's packages ($dir/apt.log)"
  }
}

# Whether FILE is an ELF object (a program, a library, an uncompressed kernel).
is_elf() {
  local magic
  IFS= read -r -N4 magic <"$1" 2>/dev/null && [[ $magic == $'\x7fELF' ]]
}

# Unpacks a .deb into ROOT without running its maintainer scripts. The root's /bin, /sbin, /lib
# are links into /usr (Debian 12's merged /usr): tar must follow them, not replace them.
unpack_deb() {
  dpkg-deb --fsys-tarfile "$1" | tar -x --keep-directory-symlink -C "$2"
}

# The modules of LIST and what they depend on, dependencies first, as paths under the modules
# directory (from its modules.dep).
module_load_order() {
  local dir=$1
  shift
  awk -v want="$*" '
    function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); return p }
    function visit(m,   n, parts, i) {
      if (m in seen) return
      seen[m] = 1
      n = split(deps[m], parts, " ")
      for (i = 1; i <= n; i++) visit(base(parts[i]))
      print path[m]
    }
    {
      sub(/:$/, "", $1); m = base($1); path[m] = $1; deps[m] = ""
      for (i = 2; i <= NF; i++) deps[m] = deps[m] " " $i
      byname[m] = 1
    }
    END {
      n = split(want, w, " ")
      for (i = 1; i <= n; i++) {
        if (!(w[i] in byname)) { print "missing module " w[i] > "/dev/stderr"; exit 1 }
        visit(w[i])
      }
    }' "$dir/modules.dep"
}

build_guest() {
  local out=$1 work="$1/work" kver=${kernel_pkg#linux-image-}
  rm -rf "$out"
  mkdir -p "$work" "$out/root"
  log "downloading the guest root's packages, $kernel_pkg and busybox-static"
  download_closure "$work/apt" "${root_packages[@]}"
  (cd "$work" && apt-get -q -o APT::Sandbox::User=root download "$kernel_pkg" busybox-static \
    >"$work/download.log" 2>&1) || {
    tail -20 "$work/download.log" >&2
    die 2 "apt-get could not download $kernel_pkg and busybox-static"
  }

  log "unpacking $(find "$work/apt/archives" -name '*.deb' | wc -l) packages and the kernel"
  local root="$out/root" dir
  for dir in bin sbin lib lib64; do
    mkdir -p "$root/usr/$dir"
    ln -s "usr/$dir" "$root/$dir"
  done
  # The kernel and the parts of its modules a guest with virtio devices, 9p, network namespaces
  # and Soft-RoCE can need: a sixth of them, and so far less to write. On the other core
  # meanwhile.
  local modules='./lib/modules/*'
  dpkg-deb --fsys-tarfile "$work"/linux-image-*.deb |
    tar -x --keep-directory-symlink -C "$root" --wildcards './boot/vmlinuz-*' \
      "$modules/modules.*" "$modules/kernel/net/*" \
      "$modules/kernel/drivers/net/"{veth,virtio_net,net_failover,dummy,ifb,macvlan,tun}.ko \
      "$modules/kernel/drivers/infiniband/*" "$modules/kernel/drivers/virtio/*" \
      "$modules/kernel/fs/9p/*" "$modules/kernel/fs/netfs/*" "$modules/kernel/fs/fscache/*" \
      "$modules/kernel/fs/overlayfs/*" "$modules/kernel/fs/configfs/*" "$modules/kernel/lib/*" "$modules/kernel/crypto/*" \
      "$modules/kernel/arch/*" &
  local kernel_unpack=$!
  local deb
  for deb in "$work"/apt/archives/*.deb; do unpack_deb "$deb" "$root"; done
  wait "$kernel_unpack" || die 2 "could not unpack $kernel_pkg"
  mkdir -p "$work/busybox"
  unpack_deb "$work"/busybox-static_*.deb "$work/busybox"

  # What the maintainer scripts would have done, as far as the guest needs it.
  cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
  cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
  ln -sf mawk "$root/usr/bin/awk"
  ln -sf which.debianutils "$root/usr/bin/which"
  ln -sf ../proc/self/mounts "$root/etc/mtab"
  echo guest >"$root/etc/hostname"
  chroot "$root" /sbin/ldconfig
  log "depmod"
  chroot "$root" /sbin/depmod "$kver"
  mkdir -p "$root/share"

  log "making the initramfs"
  local initramfs="$work/initramfs" module
  mkdir -p "$initramfs"/{bin,dev,proc,sys,newroot,modules}
  cp "$work/busybox/bin/busybox" "$initramfs/bin/"
  : >"$initramfs/modules/order"
  for module in $(module_load_order "$root/lib/modules/$kver" "${boot_modules[@]}"); do
    cp "$root/lib/modules/$kver/$module" "$initramfs/modules/"
    basename "$module" >>"$initramfs/modules/order"
  done
  install -m 755 "$guest_tools/initramfs-init" "$initramfs/init"
  (cd "$initramfs" && find . | "$work/busybox/bin/busybox" cpio -o -H newc 2>/dev/null) |
    gzip -1 >"$out/initrd.gz"
  # The kernel uncompressed: QEMU starts an ELF kernel with a PVH entry point directly, which
  # saves decompressing it under emulation at every boot (seconds). Debian's image is xz inside
  # a bzImage; the compressed one stays the fallback.
  local image="$root/boot/vmlinuz-$kver" offset
  offset=$(LC_ALL=C grep -abo $'\xfd7zXZ' "$image" | head -1 | cut -d: -f1)
  # (Through a file: xz stops reading at the stream's end, which would break a pipe.)
  if [[ -n $offset ]] && tail -c +$((offset + 1)) "$image" >"$work/kernel.xz" &&
    xz -dc --single-stream <"$work/kernel.xz" >"$out/vmlinux" 2>/dev/null && is_elf "$out/vmlinux"; then
    ln -s vmlinux "$out/kernel-image"
  else
    rm -f "$out/vmlinux"
    cp "$image" "$out/vmlinuz"
    ln -s vmlinuz "$out/kernel-image"
  fi
  rm -rf "$work"
  echo "$kver" >"$out/kernel"
  touch "$out/ready"
}

guest="$cache_root/$(cache_key)"
mkdir -p "$cache_root"
exec {cache_lock}>"$cache_root/lock"
flock "$cache_lock"
if [[ -f $guest/ready && -n $(find "$guest/ready" -mtime -"$cache_days") ]]; then
  log "guest root, kernel and initramfs from the cache ($guest, $(<"$guest/kernel"))"
else
  apt_update
  # The kernel is the one Debian 12 ships now: the package linux-image-amd64 depends on.
  kernel_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ {print $2; exit}')
  [[ -n $kernel_pkg ]] || die 2 "apt knows no linux-image-amd64 (is Debian's archive in its sources?)"
  log "building the guest root in $guest"
  build_guest "$guest"
  log "removing older guests"
  # Other keys are of no use any more: each is a few hundred MB.
  find "$cache_root" -mindepth 1 -maxdepth 1 -type d ! -name "$(basename "$guest")" -exec rm -rf {} +
  log "guest root ready"
fi
flock -u "$cache_lock"

# ---- The share: hoop's binaries, the libraries the guest root lacks, and the run's files. ----
run_dir="$build_dir/rdma-check"
share="$run_dir/share"
rm -rf "$run_dir"
mkdir -p "$share/build/lib" "$share/src" "$share/out"

# The build as it is, less its objects and archives and the TensorFlow environment (venv: over a
# gigabyte the guest never runs): every program, test and library keeps its place, so the paths
# compiled into the tests (helper programs, RPATH) hold once the guest mounts the copy where the
# build is on this host. Hard links make the copy free where the file system allows. The
# libraries' version links (libhoop.so.0, libnccl.so.2) come too: without them the programs'
# RUNPATH finds nothing, and the loader takes whatever the guest's system directories hold (for
# libnccl.so.2, possibly NCCL's own, copied there for another program below).
copy_build() { # CP_OPTION: -l (hard links) or -p (copies)
  (cd "$build_dir" && find . \( -name CMakeFiles -o -path ./rdma-check -o -path ./venv \) -prune -o \
    \( -type f -o -type l \) ! -name '*.o' ! -name '*.a' ! -name '.ninja_*' -print0 |
    xargs -0 -r cp -P --parents "$1" -t "$share/build")
}
copy_build -l 2>/dev/null || copy_build -p || die 2 "could not copy $build_dir to $share/build"
elf_files=()
file_count=0
while IFS= read -r -d '' file; do
  file_count=$((file_count + 1))
  [[ -x $file || $file == *.so* ]] && is_elf "$file" && elf_files+=("$file")
done < <(find "$share/build" -type f -print0)
((${#elf_files[@]} > 0)) || die 2 "$build_dir has no programs"
# Libraries the programs load that the guest root does not have, found by ldd here (one ldd for
# all: it is a script, slow to start).
while read -r lib; do
  name=${lib##*/}
  [[ -e $guest/root/usr/lib/x86_64-linux-gnu/$name || -e $share/build/lib/$name ]] ||
    cp -L "$lib" "$share/build/lib/"
done < <(ldd "${elf_files[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
log "shared $file_count files of $build_dir (${#elf_files[@]} programs and libraries);" \
  "added $(find "$share/build/lib" -type f | wc -l) libraries the guest lacks"

# What the guest's init reads (tools/rdma-guest/init.sh).
cat >"$share/guest.env" <<EOF
deadline=$deadline
suite=$suite
host_build_dir=$build_dir
host_source_dir=$source_dir
EOF

# ---- Boot. ----
remaining=$((deadline - $(date +%s)))
((remaining > 30)) || die 124 "the time limit ($time_limit s) ran out before the guest could boot"
log "booting Debian's $(<"$guest/kernel") on TCG ($guest_cpus vCPUs, $guest_memory MiB)," \
  "suite $suite, at most $remaining s; the guest's network card has no way out (QEMU warns" \
  "that its hub is not connected)"
# Every 9p export but the run's own files is read-only: the guest cannot change the cache, the
# build or the source tree. The network card's only peer is an empty hub: nothing leaves QEMU.
# shellcheck disable=SC2054 # QEMU's options are comma-separated lists
qemu_command=(
  "$qemu" -machine q35,accel=tcg -cpu max -smp "$guest_cpus" -m "$guest_memory"
  -nodefaults -no-user-config -display none -serial stdio -no-reboot
  -kernel "$guest/kernel-image" -initrd "$guest/initrd.gz"
  -append "console=ttyS0 loglevel=4 panic=-1 mitigations=off edd=off"
  -fsdev "local,id=root,path=$guest/root,security_model=passthrough,readonly=on"
  -device virtio-9p-pci,fsdev=root,mount_tag=root
  -fsdev "local,id=share,path=$share,security_model=none"
  -device virtio-9p-pci,fsdev=share,mount_tag=share
  -fsdev "local,id=build,path=$share/build,security_model=none,readonly=on"
  -device virtio-9p-pci,fsdev=build,mount_tag=build
  -fsdev "local,id=src,path=$source_dir,security_model=none,readonly=on"
  -device virtio-9p-pci,fsdev=src,mount_tag=src
  -netdev hubport,id=net0,hubid=0 -device virtio-net-pci,netdev=net0
)
guest_start=$(date +%s)
qemu_pid=""
# shellcheck disable=SC2317 # called by the traps
stop_qemu() {
  [[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null
  return 0
}
trap stop_qemu EXIT
trap 'stop_qemu; exit 130' INT TERM
# The guest's console, line by line with the seconds since boot, to this script's stdout (the CI
# log) and to out/console.log.
mkfifo "$run_dir/console"
while IFS= read -r line; do
  printf '[guest %4ds] %s\n' $(($(date +%s) - guest_start)) "${line%$'\r'}"
done <"$run_dir/console" | tee "$share/out/console.log" &
console_pid=$!
timeout -k 10 "$remaining" "${qemu_command[@]}" </dev/null >"$run_dir/console" 2>&1 &
qemu_pid=$!
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=""
wait "$console_pid" || true
log "QEMU exited ($qemu_status) after $(($(date +%s) - guest_start)) s"

if [[ -f $share/out/status ]]; then
  status=$(<"$share/out/status")
  [[ $status =~ ^[0-9]+$ ]] || die 3 "the guest reported a status that is not a number: '$status'"
  if ((status == 0)); then
    log "PASS: $suite in the guest (logs in $share/out)"
  else
    log "FAIL: $suite in the guest exited $status (logs in $share/out)"
  fi
  exit "$status"
fi
if ((qemu_status == 124 || qemu_status == 137)); then
  die 124 "the guest did not finish within the time limit ($time_limit s in all): QEMU killed"
fi
die 3 "the guest ended without reporting the suite's status (QEMU exited $qemu_status;" \
  "its messages are above)"
