#!/usr/bin/env bash
# DDP step time on hoop's torch backend against Gloo's, and against an earlier hoop backend given
# by its file (for a before/after), each run in turn for several rounds, one line per run.
#   bench/train/run_ddp_step_time.sh [ranks] [rounds] [old_process_group.py] [extra args...]
# The workload is bench/train/ddp_step_time.py's ResNet-like network, or with HOOP_DDP_WORKLOAD=mlp
# examples/ddp_fashion_mnist.py's MLP; the extra args go to that script. The earlier backend runs
# from a copy of build/python with its file in place, so the two hoop backends share one build.
# Run from the repository root after building (build/bin/hooprun, build/python).
set -euo pipefail
ranks=${1:-2}
rounds=${2:-2}
old=${3:-}
shift $(($# < 3 ? $# : 3))
export HOOP_SOCKET_IFNAME='=lo' OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1
case ${HOOP_DDP_WORKLOAD:-resnet} in
  resnet) script=bench/train/ddp_step_time.py ;;
  mlp) script=examples/ddp_fashion_mnist.py ;;
  *) echo "HOOP_DDP_WORKLOAD must be resnet or mlp" >&2 && exit 2 ;;
esac
work=$(mktemp -d /tmp/hoop-ddp-step.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [[ -n "$old" ]]; then
  cp -rL build/python "$work/python-old"
  cp "$old" "$work/python-old/hoop/torch/process_group.py"
fi
port=29700
run() { # label, PYTHONPATH, backend
  port=$((port + 1))
  MASTER_PORT=$port PYTHONPATH=$2 build/bin/hooprun -np "$ranks" /usr/bin/python3 "$script" \
    --backend "$3" "${args[@]}" 2>&1 | grep -E "step median|median step" | sed "s/^/$1: /"
}
args=("$@")
for _ in $(seq "$rounds"); do
  run "hoop" "$PWD/build/python" hoop
  run "gloo" "$PWD/build/python" gloo
  if [[ -n "$old" ]]; then run "hoop, earlier backend" "$work/python-old" hoop; fi
done
