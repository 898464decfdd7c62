#!/usr/bin/env bash
# Runs hoop-perf and the peer baselines (OpenMPI over TCP, OpenMPI over shared memory, Gloo with
# each of its allreduce algorithms) in one go on this host, over loopback only, and prints a
# side-by-side markdown table per rank count. See bench/compare/README.md.
#
#   bench/compare/run.sh [options] [BUILD_DIR] [RANKS]
#
#   BUILD_DIR            build tree holding bin/ (default: build)
#   RANKS                rank counts, e.g. "2 4" (default)
#   --build DIR          same as BUILD_DIR
#   --ranks "2 4"        same as RANKS
#   --sizes "SPEC ..."   size ranges, each b:e:f[:n[:w]] (bytes, K/M/G suffixes; n timed
#                        iterations, w warm-ups). Default: "8:2M:4 8M:32M:4:10:2 64M:256M:2:5:1",
#                        that is 8 B .. 32 MiB by x4, then 64, 128, 256 MiB with fewer iterations.
#   --quick              smoke run: "8:8K:32:10:2 1M:1M:2:10:2", 0.05 s minimum per size
#   --peers "LIST"       subset of: mpi_tcp mpi_shm gloo hoop hoop_tcp hoop_shm (default: all;
#                        hoop = hoop over tcp and over its default shared memory)
#   --gloo-algos "LIST"  Gloo variants, each ALGO or ALGO:MODE (MODE async, sync, busypoll;
#                        async when left out; sync/busypoll only for the classic algorithms).
#                        Default: ring ring_chunked halving_doubling bcube new_ring new_bcube
#                        ring:sync halving_doubling:sync ring:busypoll halving_doubling:busypoll
#                        (sync/busypoll stop at 2 MiB: sync pairs deadlock on large messages)
#   --out DIR            results directory (default: bench/compare/out/<date>-<time>)
#   --min-sec S          minimum seconds per size for the peer benches (default 0.2)
#   --max-sec S          cap on timed seconds per size for the peer benches (default 5)
#   --job-timeout S      kill one benchmark job after S seconds (default 300)
#   --quiet-wait S       before each job wait up to S seconds for the machine to go quiet (no
#                        other runnable task for 1 s); default 0: do not wait
#   --bind core|none     core: every program's ranks run on one core each, in turn when they
#                        outnumber the cores (hooprun --bind-to core; mpirun --map-by
#                        core:OVERSUBSCRIBE --bind-to core:overload-allowed; Gloo's ranks through
#                        taskset on CPU rank mod nproc). Default none: placement left to the kernel
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/../.." && pwd)

build=build
ranks="2 4"
sizes="8:2M:4 8M:32M:4:10:2 64M:256M:2:5:1"
peers="mpi_tcp mpi_shm gloo hoop"
gloo_algos="ring ring_chunked halving_doubling bcube new_ring new_bcube ring:sync"
gloo_algos+=" halving_doubling:sync ring:busypoll halving_doubling:busypoll"
out=""
min_sec=0.2
max_sec=5
job_timeout=300
quiet_wait=0
bind=none
positional=()

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --quick) sizes="8:8K:32:10:2 1M:1M:2:10:2"; min_sec=0.05; shift ;;
    --peers) peers=$2; shift 2 ;;
    --gloo-algos) gloo_algos=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --min-sec) min_sec=$2; shift 2 ;;
    --max-sec) max_sec=$2; shift 2 ;;
    --job-timeout) job_timeout=$2; shift 2 ;;
    --quiet-wait) quiet_wait=$2; shift 2 ;;
    --bind) bind=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} > 0)) && build=${positional[0]}
((${#positional[@]} > 1)) && ranks=${positional[1]}
((${#positional[@]} > 2)) && { echo "run.sh: too many arguments" >&2; exit 2; }

# Resolve the build dir from the caller's directory, falling back to the repo root.
if [[ ! -d $build && -d $repo_root/$build ]]; then build=$repo_root/$build; fi
[[ -d $build ]] || { echo "run.sh: build dir '$build' not found" >&2; exit 2; }
build=$(cd "$build" && pwd)
bin=$build/bin
# A tree made by pack.sh carries the shared libraries its programs need.
[[ -d $build/lib ]] && export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# ... and the OpenMPI that pack-openmpi.sh copied beside them, ahead of any on this machine.
# shellcheck source=/dev/null
[[ -f $build/openmpi/env.sh ]] && source "$build/openmpi/env.sh"

[[ -n $out ]] || out=$script_dir/out/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Other work on the machine shows up as outliers: keep the load average beside every job.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# So does a virtual machine's host moving the guest's CPUs (a cache line's round trip between
# two CPUs can change several times over and back; bench/compare/README.md): keep it too.
round_trip() {
  [[ -x $bin/hoop-cacheline-rtt ]] || { echo "n/a"; return; }
  "$bin/hoop-cacheline-rtt" --trips 50000 --repeats 3 2>/dev/null |
    sed -n 's/.*: \([0-9]*\) ns median.*/\1 ns/p; s/.*only one CPU.*/n\/a (one CPU)/p'
}

# /proc/loadavg's 4th field is runnable/total tasks right now; 1 runnable is this check itself.
# Waits until ten samples over one second all see nothing else runnable, or quiet_wait passes.
wait_quiet() {
  ((quiet_wait > 0)) || return 0
  local deadline=$((SECONDS + quiet_wait)) busy i
  while ((SECONDS < deadline)); do
    busy=0
    for ((i = 0; i < 10; ++i)); do
      read -r _ _ _ running _ </proc/loadavg
      ((${running%/*} > 1)) && busy=1
      sleep 0.1
    done
    ((busy == 0)) && return 0
  done
  echo "# machine still busy after ${quiet_wait}s of waiting (loadavg $(loadavg)); running anyway" >&2
}

has_peer() { [[ " $peers " == *" $1 "* ]]; }
note() { echo "# $*" | tee -a "$out/notes.txt" >&2; }

# "64M" -> 67108864
to_bytes() {
  local v=$1 n=${1%[KkMmGg]}
  case "$v" in
    *[Kk]) echo $((n << 10)) ;;
    *[Mm]) echo $((n << 20)) ;;
    *[Gg]) echo $((n << 30)) ;;
    *) echo "$v" ;;
  esac
}

# Each range b:e:f[:n[:w]] -> "b e f n w" with defaults n=20 w=5.
ranges=()
for spec in $sizes; do
  IFS=: read -r b e f n w <<<"$spec"
  [[ -n ${b:-} && -n ${e:-} ]] || { echo "run.sh: bad size range '$spec'" >&2; exit 2; }
  f=${f:-2}
  ((f >= 2)) || f=2  # a one-size range ("64M:64M:1") still needs a factor the benches accept
  ranges+=("$(to_bytes "$b") $(to_bytes "$e") $f ${n:-20} ${w:-5}")
done

[[ $bind == none || $bind == core ]] || { echo "run.sh: --bind '$bind': give core or none" >&2; exit 2; }
mpirun_common=(mpirun --oversubscribe --allow-run-as-root --bind-to none --mca pml ob1)
hooprun_bind=()
if [[ $bind == core ]]; then
  mpirun_common=(mpirun --allow-run-as-root --map-by core:OVERSUBSCRIBE
    --bind-to core:overload-allowed --mca pml ob1)
  hooprun_bind=(--bind-to core)
fi
# shellcheck disable=SC2054  # the commas belong to MCA values
mpi_tcp_args=(--mca btl self,tcp --mca btl_tcp_if_include lo)
# shellcheck disable=SC2054
mpi_shm_args=(--mca btl self,vader)

# Gloo ranks run under timeout(1), which leaves our process group: stop them if we are stopped.
gloo_pids=()
stop_gloo() {
  ((${#gloo_pids[@]})) && kill "${gloo_pids[@]}" 2>/dev/null
  return 0
}
trap 'stop_gloo; exit 130' INT TERM

# ---- what this run is --------------------------------------------------------------------
{
  echo "# hoop peer comparison"
  echo "date: $(date -Is)"
  echo "host: $(uname -n) $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "commit: $(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "build: $build"
  echo "ranks: $ranks; sizes: $sizes; peers: $peers; gloo algos: $gloo_algos"
  echo "peer benches: -m $min_sec -M $max_sec; job timeout ${job_timeout}s; quiet wait ${quiet_wait}s"
  echo "binding: $bind"
  echo "HOOP_* env: $(env | grep '^HOOP_' | tr '\n' ' ' || true)"
  command -v mpirun >/dev/null && echo "mpirun: $(mpirun --version 2>/dev/null | head -1)"
} >"$out/run-info.txt"
cp /dev/null "$out/notes.txt"

# ---- result parsing: every peer is normalized to "bytes time_us busbw" rows -----------------
# Peer benches print "bytes count median_us algbw busbw" rows; '#' lines are comments.
peer_rows() { awk '!/^#/ && NF >= 5 && $1 ~ /^[0-9]+$/ { print $1, $3, $5 }' "$@"; }
# hoop-perf (nccl-tests layout): size count type redop root time algbw busbw #wrong time algbw
# busbw #wrong. Out-of-place and in-place: "bytes oop_us oop_busbw ip_us ip_busbw wrong".
# hooprun prefixes each line with "[rank] ": keep rank 0's lines and drop the prefix.
hoop_rows() {
  awk '$1 ~ /^\[[0-9]+\]$/ { if ($1 != "[0]") next; $1 = ""; $0 = $0 }
       $1 !~ /^#/ && NF >= 13 && $1 ~ /^[0-9]+$/ { print $1, $6, $8, $10, $12, $9 + $13 }' "$@"
}

# Runs one command with the job timeout; output to $1 (stdout) and $1.err.
run_job() {
  local log=$1
  shift
  echo "+ $*" >>"$out/commands.txt"
  wait_quiet
  echo "# loadavg before: $(loadavg); cache line round trip: $(round_trip)" >>"$log"
  local rc=0
  timeout --kill-after=10 "$job_timeout" "$@" >>"$log" 2>>"$log.err" || rc=$?
  return $rc
}

run_mpi() {  # name np extra-mca-args...
  local name=$1 np=$2
  shift 2
  local log=$dir/$name.txt
  : >"$log"
  [[ -x $bin/mpi_allreduce_bench ]] || { note "np=$np $name: $bin/mpi_allreduce_bench not built (MPI not found at configure time); skipped"; return; }
  command -v mpirun >/dev/null || { note "np=$np $name: mpirun not on PATH; skipped"; return; }
  for r in "${ranges[@]}"; do
    read -r b e f n w <<<"$r"
    echo "[np=$np] $name $b..$e x$f" >&2
    run_job "$log" "${mpirun_common[@]}" "$@" -np "$np" "$bin/mpi_allreduce_bench" \
      -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -m "$min_sec" -M "$max_sec" ||
      note "np=$np $name: range $b..$e failed (exit $?), see $log.err"
  done
  peer_rows "$log" >"$dir/$name.rows"
}

run_gloo() {  # np
  local np=$1
  [[ -x $bin/gloo_allreduce_bench ]] || { note "np=$np gloo: $bin/gloo_allreduce_bench not built (Gloo not found at configure time); skipped"; return; }
  local variant algo mode
  for variant in $gloo_algos; do
    algo=${variant%%:*}
    mode=async
    [[ $variant == *:* ]] && mode=${variant#*:}
    local log=$dir/gloo_${algo}_$mode.txt
    : >"$log"
    for r in "${ranges[@]}"; do
      read -r b e f n w <<<"$r"
      # The bench stops sync/busypoll sweeps above 2 MiB (--sync-max): skip whole ranges there.
      [[ $mode != async && $b -gt $((2 << 20)) ]] && continue
      echo "[np=$np] gloo $algo ($mode) $b..$e x$f" >&2
      local store
      store=$(mktemp -d "$dir/gloo-store.XXXXXX")
      local args=(--algo "$algo" --mode "$mode" -b "$b" -e "$e" -f "$f" -n "$n" -w "$w" -m "$min_sec"
        -M "$max_sec" --host 127.0.0.1 --timeout "$job_timeout")
      echo "+ RANK=0..$((np - 1)) WORLD_SIZE=$np GLOO_STORE_DIR=<fresh dir> $bin/gloo_allreduce_bench ${args[*]}" >>"$out/commands.txt"
      wait_quiet
      echo "# loadavg before: $(loadavg); cache line round trip: $(round_trip)" >>"$log"
      local pids=() rank
      for ((rank = 0; rank < np; ++rank)); do
        local dest=/dev/null
        ((rank == 0)) && dest=$log
        local pin=()
        [[ $bind == core ]] && pin=(taskset -c $((rank % $(nproc))))
        RANK=$rank WORLD_SIZE=$np GLOO_STORE_DIR=$store \
          timeout --kill-after=10 "$job_timeout" "${pin[@]}" "$bin/gloo_allreduce_bench" "${args[@]}" \
          >>"$dest" 2>>"$log.err" &
        pids+=($!)
      done
      gloo_pids=("${pids[@]}")
      local failed=0 pid
      for pid in "${pids[@]}"; do wait "$pid" || failed=$?; done
      gloo_pids=()
      ((failed == 0)) || note "np=$np gloo $algo ($mode): range $b..$e failed (exit $failed), see $log.err"
      rm -rf "$store"
    done
    peer_rows "$log" >"$dir/gloo_${algo}_$mode.rows"
  done
  # Gloo's best per size: the variant with the lowest median time ("ring", "ring/sync", ...).
  for variant in $gloo_algos; do
    algo=${variant%%:*}
    mode=async
    [[ $variant == *:* ]] && mode=${variant#*:}
    local label=$algo
    [[ $mode == async ]] || label=$algo/$mode
    if [[ -f $dir/gloo_${algo}_$mode.rows ]]; then
      awk -v a="$label" '{ print $1, $2, $3, a }' "$dir/gloo_${algo}_$mode.rows"
    fi
  done | sort -k1,1n -k2,2g | awk '!seen[$1]++' >"$dir/gloo_best.rows"
}

# hoop-perf --csv (documented in bench/perf/README.md) -> "bytes median_us busbw ip_median_us
# ip_busbw wrong": per-iteration medians of the slowest rank (-a 3), the peers' statistic.
hoop_csv_rows() {  # np csv...
  local np=$1
  shift
  awk -F, -v np="$np" '
    FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      bytes = $col["size_bytes"]; t = $col["oop_median_us"]; ti = $col["ip_median_us"]
      factor = 2 * (np - 1) / np
      bw = t > 0 ? bytes / t / 1000 * factor : 0
      bwi = ti > 0 ? bytes / ti / 1000 * factor : 0
      print bytes, t, bw, ti, bwi, $col["oop_wrong"] + $col["ip_wrong"]
    }' "$@"
}

run_hoop() {  # np transport
  local np=$1 transport=$2
  local log=$dir/hoop_$transport.txt
  : >"$log"
  if [[ ! -x $bin/hoop-perf || ! -x $bin/hooprun ]]; then
    note "np=$np hoop: $bin/hoop-perf or $bin/hooprun not built yet; hoop columns left empty"
    return
  fi
  local csvs=() k=0
  for r in "${ranges[@]}"; do
    read -r b e f n w <<<"$r"
    echo "[np=$np] hoop over $transport $b..$e x$f" >&2
    local csv=$dir/hoop_${transport}_$k.csv
    k=$((k + 1))
    # -a 3: the slowest rank's time per iteration, as the peer benches report; -m: at least as
    # many seconds a size as the peer benches, so quick sizes are judged on as many calls.
    HOOP_TRANSPORT=$transport run_job "$log" "$bin/hooprun" "${hooprun_bind[@]}" -np "$np" "$bin/hoop-perf" allreduce \
      -b "$b" -e "$e" -f "$f" -d float -n "$n" -w "$w" -m "$min_sec" -a 3 --csv "$csv" ||
      note "np=$np hoop: range $b..$e over $transport failed (exit $?), see $log.err"
    [[ -f $csv ]] && csvs+=("$csv")
  done
  if ((${#csvs[@]})); then hoop_csv_rows "$np" "${csvs[@]}" >"$dir/hoop_$transport.rows"; fi
  [[ -f $dir/hoop_$transport.rows ]] || : >"$dir/hoop_$transport.rows"
  awk '$6 != 0 { bad = 1 } END { exit bad }' "$dir/hoop_$transport.rows" ||
    note "np=$np hoop: hoop-perf reported wrong results over $transport, see $log"
}

# ---- the side-by-side table -----------------------------------------------------------------
human() {
  awk -v b="$1" 'BEGIN {
    if (b >= 1073741824 && b % 1073741824 == 0) printf "%d GiB", b / 1073741824;
    else if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB", b / 1048576;
    else if (b >= 1024 && b % 1024 == 0) printf "%d KiB", b / 1024;
    else printf "%d B", b }'
}

table() {  # np
  local np=$1
  echo
  echo "### allreduce float32 sum, $np ranks (median us of the slowest rank; busbw GB/s)"
  echo
  echo "load average at start / end of this rank count: $load_start / $(loadavg)"
  echo "cache line round trip between two CPUs at start / end: $trip_start / $(round_trip)"
  echo
  echo "| size | hoop-tcp us | hoop-tcp busbw | MPI-tcp us | MPI-tcp busbw | hoop-tcp/MPI-tcp | Gloo best us | Gloo algo | Gloo busbw | hoop-tcp in-place/Gloo | hoop-shm us | hoop-shm busbw | MPI-shm us | MPI-shm busbw | hoop-shm/MPI-shm |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  local f
  for f in hoop_tcp hoop_shm mpi_tcp mpi_shm gloo_best; do
    [[ -f $dir/$f.rows ]] || : >"$dir/$f.rows"
  done
  awk '
    function t(v) { return v == "" ? "-" : sprintf("%.1f", v) }
    function bw(v) { return v == "" ? "-" : sprintf("%.3f", v) }
    function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }
    FILENAME ~ /hoop_tcp.rows$/ { ht[$1] = $2; hbw[$1] = $3; hip[$1] = $4; sz[$1] = 1 }
    FILENAME ~ /hoop_shm.rows$/ { hs[$1] = $2; hsbw[$1] = $3; sz[$1] = 1 }
    FILENAME ~ /mpi_tcp.rows$/ { tcp_t[$1] = $2; tcp_bw[$1] = $3; sz[$1] = 1 }
    FILENAME ~ /mpi_shm.rows$/ { shm_t[$1] = $2; shm_bw[$1] = $3; sz[$1] = 1 }
    FILENAME ~ /gloo_best.rows$/ { g_t[$1] = $2; g_bw[$1] = $3; g_a[$1] = $4; sz[$1] = 1 }
    END {
      n = 0
      for (s in sz) list[++n] = s + 0
      for (i = 2; i <= n; i++) { v = list[i]; for (j = i - 1; j >= 1 && list[j] > v; j--) list[j + 1] = list[j]; list[j + 1] = v }
      for (i = 1; i <= n; i++) {
        s = list[i]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s,
          t(ht[s]), bw(hbw[s]), t(tcp_t[s]), bw(tcp_bw[s]), ratio(ht[s], tcp_t[s]),
          t(g_t[s]), (s in g_a ? g_a[s] : "-"), bw(g_bw[s]), ratio(hip[s], g_t[s]),
          t(hs[s]), bw(hsbw[s]), t(shm_t[s]), bw(shm_bw[s]), ratio(hs[s], shm_t[s])
      }
    }' "$dir/hoop_tcp.rows" "$dir/hoop_shm.rows" "$dir/mpi_tcp.rows" "$dir/mpi_shm.rows" \
    "$dir/gloo_best.rows" |
    while IFS= read -r line; do
      # First column: bytes -> human size.
      local bytes=${line#| }
      bytes=${bytes%% *}
      echo "| $(human "$bytes") ${line#| "$bytes" }"
    done
}

summary=$out/summary.md
cat "$out/run-info.txt" >"$summary"
for np in $ranks; do
  dir=$out/np$np
  mkdir -p "$dir"
  load_start=$(loadavg)
  trip_start=$(round_trip)
  has_peer mpi_tcp && run_mpi mpi_tcp "$np" "${mpi_tcp_args[@]}"
  has_peer mpi_shm && run_mpi mpi_shm "$np" "${mpi_shm_args[@]}"
  has_peer gloo && run_gloo "$np"
  if has_peer hoop || has_peer hoop_tcp; then run_hoop "$np" tcp; fi
  if has_peer hoop || has_peer hoop_shm; then run_hoop "$np" shm; fi
  table "$np" | tee -a "$summary"
done
{
  echo
  echo "ratios are hoop time / peer time (below 1: hoop is faster). hoop-tcp is hoop with"
  echo "HOOP_TRANSPORT=tcp, hoop-shm with its default (shared memory within a host). hoop/MPI uses"
  echo "hoop's out-of-place time (MPI_Allreduce is out-of-place here); hoop/Gloo uses hoop's"
  echo "in-place time (Gloo reduces in place). Gloo best = lowest median over: $gloo_algos"
  echo "(ALGO/MODE: Gloo TCP pairs in sync or busy-poll mode; no suffix: the default async mode)."
  if [[ -s $out/notes.txt ]]; then
    echo
    echo "notes:"
    sed 's/^# /- /' "$out/notes.txt"
  fi
} | tee -a "$summary"
echo
echo "results: $out (summary.md, commands.txt, np*/ raw outputs)"
