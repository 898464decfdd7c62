#!/usr/bin/env bash
# One Horovod script on Horovod 0.28.1 (horovod_build.sh's venv, Gloo controller) and on
# hoop.torch with its import changed (training engine on, then off), in turn for several rounds;
# prints each run's images per second.
#   bench/compare/horovod_vs_hoop.sh SCRIPT [ranks] [rounds] [script args...]
# SCRIPT: Horovod's pytorch_synthetic_benchmark.py (fetched for the run, not kept here) or
# bench/compare/horovod_synthetic.py (which takes --hoop instead of a changed copy). Run from the
# repository root after building; HOROVOD_VENV names the venv (default /tmp/hoop-horovod-venv).
set -euo pipefail
script=${1:?usage: $0 SCRIPT [ranks] [rounds] [args...]}
ranks=${2:-2}
rounds=${3:-3}
shift $(($# < 3 ? $# : 3))
venv=${HOROVOD_VENV:-/tmp/hoop-horovod-venv}
export HOOP_SOCKET_IFNAME='=lo' OMP_NUM_THREADS=1
work=$(mktemp -d /tmp/hoop-horovod-vs.XXXXXX)
trap 'rm -rf "$work"' EXIT
hoop_script=("$script" --hoop)
if ! grep -q -- '--hoop' "$script"; then
  # Not hoop.py: the script's folder comes first on sys.path and would hide the hoop package.
  sed 's/^import horovod\.torch as hvd$/import hoop.torch as hvd/' "$script" >"$work/on_hoop.py"
  hoop_script=("$work/on_hoop.py")
fi
# Prints a run's figure, or the end of its output when it printed none (a failed run).
total() {
  local label=$1 log="$work/run.log"
  cat >"$log"
  grep -E "Total img/sec|img/sec per rank" "$log" | sed "s/^/$label: /" ||
    { echo "$label: no figure; the run's last lines:"; tail -n 15 "$log"; }
}
for round in $(seq "$rounds"); do
  echo "round $round, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$venv/bin/horovodrun" -np "$ranks" -H "localhost:$ranks" --gloo "$venv/bin/python" \
    "$script" "$@" 2>&1 | total "horovod" || true
  PYTHONPATH=$PWD/build/python build/bin/hooprun -np "$ranks" /usr/bin/python3 \
    "${hoop_script[@]}" "$@" 2>&1 | total "hoop engine" || true
  HOOP_TORCH_ENGINE=0 PYTHONPATH=$PWD/build/python build/bin/hooprun -np "$ranks" \
    /usr/bin/python3 "${hoop_script[@]}" "$@" 2>&1 | total "hoop engine off" || true
done
