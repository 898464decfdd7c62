#!/usr/bin/env bash
# One job step on the one-node cluster slurm_cluster.sh started in DIR, with no hoop variable:
#   slurm_test.sh DIR MPI N EXPECT PROGRAM [ARGS...]
# runs `srun --mpi=MPI -n N PROGRAM ARGS` and passes when it exits 0, every rank says it found
# the root the way MPI implies (pmix: PMIx; none: the Slurm step's first host), nothing says
# WRONG, and the output matches EXPECT; EXPECT "each-rank-ok" asks for "OK rank r of N" from
# every rank r. With EXPECT "concurrent" two such steps run at once (as two jobs), each on its
# own root. With EXPECT "stranger" (PROGRAM: the probe, run with --hold) processes without the
# step's secret knock at rank 0's root while the other ranks are held, and must be refused.
# MPI "pmix-unloadable" runs each rank under --mpi=pmix in a mount namespace where libpmix is an
# empty file: the ranks must fall back to the step's first host, saying why.
# Exit 77 (skipped, with the reason) where the cluster could not start.
set -u
dir=$1
mpi=$2
n=$3
expect=$4
shift 4
if [[ -f $dir/skipped ]]; then
  echo "SKIP: $(cat "$dir/skipped")"
  exit 77
fi
if [[ ! -f $dir/slurm.conf ]]; then
  echo "SKIP: no cluster in $dir (the launch.slurm.start fixture did not run)"
  exit 77
fi
wrap=()
if [[ $mpi == pmix-unloadable ]]; then
  mpi=pmix
  library=$(ldconfig -p | awk '/libpmix\.so\.2 /{print $NF; exit}')
  [[ -n $library ]] || { echo "SKIP: libpmix.so.2 is not installed"; exit 77; }
  library=$(readlink -f "$library")
  if ! unshare -m sh -c 'mount --bind /dev/null "$0"' "$library" 2> /dev/null; then
    echo "SKIP: cannot hide libpmix in a mount namespace here (unshare -m, mount --bind)"
    exit 77
  fi
  wrap=(unshare -m sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$library")
  unloadable=1
fi
if [[ $mpi == pmix && ! -f $dir/has-pmix ]]; then
  echo "SKIP: this Slurm has no pmix plugin (srun --mpi=list)"
  exit 77
fi
export SLURM_CONF=$dir/slurm.conf HOOP_DEBUG=INFO HOOP_INIT_TIMEOUT=30
way="found through PMIx"
[[ $mpi == none || -n ${unloadable:-} ]] && way="found through the Slurm step's first host"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/hoop-launch-srun.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
step() { srun --mpi="$mpi" -n "$n" --kill-on-bad-exit=1 --time=2 "${wrap[@]}" "$@"; }

failed=0
rounds=1  # communicators each rank creates (the probe's --rounds)
[[ ${2:-} == --rounds ]] && rounds=$3
check() {  # check LOG STATUS
  local log=$1 status=$2 r found
  [[ $status -eq 0 ]] || { echo "FAIL: srun exited $status"; failed=1; }
  if [[ $expect == each-rank-ok || $expect == concurrent || $expect == stranger ]]; then
    for ((r = 0; r < n; ++r)); do
      grep -q "^OK rank $r of $n\$" "$log" || { echo "FAIL: rank $r of $n did not finish OK"; failed=1; }
    done
  elif ! grep -Eq "$expect" "$log"; then
    echo "FAIL: the output does not match '$expect'"
    failed=1
  fi
  grep -q WRONG "$log" && { echo "FAIL: wrong results"; failed=1; }
  found=$(grep -c "$way" "$log")
  [[ $found -eq $((n * rounds)) ]] ||
    { echo "FAIL: $found of $n ranks x $rounds rounds say the root was $way"; failed=1; }
  if [[ -n ${unloadable:-} ]]; then
    found=$(grep -c "a PMIx server started this process but libpmix cannot be loaded" "$log")
    [[ $found -eq $n ]] || { echo "FAIL: $found of $n ranks say why PMIx was not used"; failed=1; }
  fi
}

if [[ $expect == concurrent ]]; then
  step "$@" > "$scratch/a.log" 2>&1 &
  first=$!
  step "$@" > "$scratch/b.log" 2>&1
  status_b=$?
  wait $first
  check "$scratch/a.log" $?
  check "$scratch/b.log" $status_b
  root_a=$(sed -n 's/.* root \([^ ]*\) found through.*/\1/p' "$scratch/a.log" | head -n 1)
  root_b=$(sed -n 's/.* root \([^ ]*\) found through.*/\1/p' "$scratch/b.log" | head -n 1)
  if [[ -z $root_a || $root_a == "$root_b" ]]; then
    echo "FAIL: the two jobs' roots are '$root_a' and '$root_b'"
    failed=1
  fi
elif [[ $expect == stranger ]]; then
  step "$@" > "$scratch/job.log" 2>&1 &
  job=$!
  root=""
  for _ in $(seq 1 300); do
    root=$(sed -n 's/.*serves the rendezvous at \([^,]*\),.*/\1/p' "$scratch/job.log" | head -n 1)
    [[ -n $root ]] && break
    sleep 0.05
  done
  [[ -n $root ]] || { echo "FAIL: rank 0 never said where it serves the rendezvous"; failed=1; }
  # Outside the step: one with another job's secret, one with none, both claiming rank 1.
  for secret in 0123456789abcdef0123456789abcdef ""; do
    [[ -n $root ]] || break
    if env -u SLURM_PROCID HOOP_RANK=1 HOOP_SIZE="$n" HOOP_ROOT_ADDR="$root" \
      ${secret:+HOOP_SECRET=$secret} HOOP_INIT_TIMEOUT=2 "$1" > "$scratch/stranger.log" 2>&1; then
      echo "FAIL: a stranger (secret '$secret') joined the step"
      failed=1
    fi
  done
  wait $job
  check "$scratch/job.log" $?
  refused=$(grep -c "rendezvous refused .*did not present this job's secret" "$scratch/job.log")
  [[ $refused -ge 2 ]] || { echo "FAIL: the root refused $refused strangers, not 2"; failed=1; }
else
  step "$@" > "$scratch/job.log" 2>&1
  check "$scratch/job.log" $?
fi
if [[ $failed -ne 0 ]]; then
  echo "---- job output"
  cat "$scratch"/*.log
  exit 1
fi
echo "PASS: srun --mpi=$mpi -n $n $(basename "$1")"
