#!/usr/bin/env bash
# Jobs under OpenMPI's mpirun with no hoop variable and no -x: the ranks find the root and the
# job secret through mpirun's PMIx server.
#   mpirun_test.sh PROBE ranks N [PROBE ARGS...]
#                                   N ranks run every collective exactly; the log names PMIx
#   mpirun_test.sh PROBE concurrent two jobs at once: each completes on its own root
#   mpirun_test.sh PROBE stranger   processes without the job's secret are refused at its root
#   mpirun_test.sh PROBE root-fails rank 0 cannot start the root: every rank fails at once, saying why
#   mpirun_test.sh PROBE unloadable libpmix hidden from the ranks: each fails, saying what to do
# Exit 77 (skipped) where mpirun is not installed.
set -u
probe=$1
mode=$2
if ! command -v mpirun > /dev/null; then
  echo "SKIP: mpirun is not installed (Debian: openmpi-bin)"
  exit 77
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hoop-launch-mpirun.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export HOOP_DEBUG=INFO HOOP_INIT_TIMEOUT=30
# Root is allowed in containers and CI; more ranks than cores on small machines.
mpirun_job() { mpirun --allow-run-as-root --oversubscribe "$@"; }

failed=0
rounds=1  # communicators each rank creates
check() {  # check LOG N: every rank OK, nothing wrong, every rank found the root through PMIx
  local log=$1 n=$2 r
  for ((r = 0; r < n; ++r)); do
    if ! grep -q "^OK rank $r of $n\$" "$log"; then
      echo "FAIL: rank $r of $n did not finish OK ($log)"
      failed=1
    fi
  done
  if grep -q "WRONG" "$log"; then
    echo "FAIL: wrong results"
    failed=1
  fi
  local found
  found=$(grep -c "found through PMIx" "$log")
  if [[ $found -ne $((n * rounds)) ]]; then
    echo "FAIL: $found of $n ranks x $rounds rounds say they found the root through PMIx"
    failed=1
  fi
}
root_of() {  # the address rank 0 of LOG serves the rendezvous at
  sed -n 's/.*serves the rendezvous at \([^,]*\),.*/\1/p' "$1" | head -n 1
}

case $mode in
  ranks)
    n=$3
    [[ ${4:-} == --rounds ]] && rounds=$5
    mpirun_job -np "$n" "$probe" "${@:4}" > "$scratch/job.log" 2>&1
    status=$?
    [[ $status -eq 0 ]] || { echo "FAIL: mpirun exited $status"; failed=1; }
    check "$scratch/job.log" "$n"
    ;;
  concurrent)
    # Both jobs hold their ranks for a second, so their rendezvous overlap.
    mpirun_job -np 2 "$probe" --hold 1 > "$scratch/a.log" 2>&1 &
    first=$!
    mpirun_job -np 2 "$probe" --hold 1 > "$scratch/b.log" 2>&1
    status_b=$?
    wait $first
    status_a=$?
    [[ $status_a -eq 0 && $status_b -eq 0 ]] || { echo "FAIL: jobs exited $status_a, $status_b"; failed=1; }
    check "$scratch/a.log" 2
    check "$scratch/b.log" 2
    root_a=$(root_of "$scratch/a.log")
    root_b=$(root_of "$scratch/b.log")
    if [[ -z $root_a || $root_a == "$root_b" ]]; then
      echo "FAIL: the jobs' roots are '$root_a' and '$root_b'"
      failed=1
    fi
    ;;
  stranger)
    # Ranks 1 and 2 join 8 seconds late: rank 0's root is open to strangers meanwhile, even on a
    # loaded machine.
    mpirun_job -np 3 "$probe" --hold 8 > "$scratch/job.log" 2>&1 &
    job=$!
    root=""
    for _ in $(seq 1 300); do
      root=$(root_of "$scratch/job.log")
      [[ -n $root ]] && break
      sleep 0.05
    done
    if [[ -z $root ]]; then
      echo "FAIL: rank 0 never said where it serves the rendezvous"
      failed=1
    else
      # A process of another job (its own secret) and one with none, both claiming rank 1.
      for secret in 0123456789abcdef0123456789abcdef ""; do
        if env -u OMPI_COMM_WORLD_RANK HOOP_RANK=1 HOOP_SIZE=3 HOOP_ROOT_ADDR="$root" \
          ${secret:+HOOP_SECRET=$secret} HOOP_INIT_TIMEOUT=2 "$probe" > "$scratch/stranger.log" 2>&1; then
          echo "FAIL: a stranger (secret '${secret}') joined the job"
          cat "$scratch/stranger.log"
          failed=1
        fi
      done
    fi
    wait $job
    status=$?
    [[ $status -eq 0 ]] || { echo "FAIL: the job exited $status"; failed=1; }
    check "$scratch/job.log" 3
    refused=$(grep -c "rendezvous refused .*did not present this job's secret" "$scratch/job.log")
    if [[ -n $root && $refused -lt 2 ]]; then
      echo "FAIL: the root refused $refused strangers, not 2"
      failed=1
    fi
    ;;
  root-fails)
    # No interface matches: rank 0 publishes why instead of a root, and no rank waits for one.
    start=$SECONDS
    # mpirun would kill the other rank as soon as one exits with an error, before it says why;
    # told not to, it reports success for the job, so the ranks' own words are what count.
    HOOP_SOCKET_IFNAME==nosuch0 mpirun_job --mca orte_abort_on_non_zero_status 0 -np 2 "$probe" \
      > "$scratch/job.log" 2>&1
    ! grep -q "^OK rank" "$scratch/job.log" || { echo "FAIL: a rank ran without a root"; failed=1; }
    told=$(grep -c "failed: .*rank 0 could not start the rendezvous: HOOP_SOCKET_IFNAME" "$scratch/job.log")
    [[ $told -eq 2 ]] || { echo "FAIL: $told of 2 ranks said why rank 0 has no root"; failed=1; }
    (( SECONDS - start < 20 )) || { echo "FAIL: the ranks waited $((SECONDS - start)) s"; failed=1; }
    ;;
  unloadable)
    # Each rank in a mount namespace where libpmix is an empty file; mpirun itself keeps it.
    library=$(ldconfig -p | awk '/libpmix\.so\.2 /{print $NF; exit}')
    [[ -n $library ]] || { echo "SKIP: libpmix.so.2 is not installed"; exit 77; }
    library=$(readlink -f "$library")
    if ! unshare -m sh -c 'mount --bind /dev/null "$0"' "$library" 2> /dev/null; then
      echo "SKIP: cannot hide libpmix in a mount namespace here (unshare -m, mount --bind)"
      exit 77
    fi
    mpirun_job -np 2 unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$library" \
      "$probe" > "$scratch/job.log" 2>&1
    status=$?
    [[ $status -ne 0 ]] || { echo "FAIL: the job succeeded without libpmix"; failed=1; }
    told=$(grep -c "failed: .*(OpenMPI): a PMIx server started this process but libpmix cannot be loaded: .*HOOP_ROOT_ADDR" "$scratch/job.log")
    [[ $told -eq 2 ]] || { echo "FAIL: $told of 2 ranks said libpmix is missing and what to set"; failed=1; }
    ;;
  *)
    echo "usage: $0 PROBE ranks N | concurrent | stranger | root-fails | unloadable"
    exit 2
    ;;
esac
if [[ $failed -ne 0 ]]; then
  echo "---- job output"
  cat "$scratch"/*.log
  exit 1
fi
echo "PASS: mpirun $mode ${3:-}"
