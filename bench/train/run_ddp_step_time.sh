#!/usr/bin/env bash
# DDP step time on hoop's torch backend against Gloo's, and against an earlier hoop backend given
# by its file (for a before/after), each run in turn for several rounds, one line per run.
#   bench/train/run_ddp_step_time.sh [ranks] [rounds] [old_process_group.py] [extra args...]
# Run from the repository root after building (build/bin/hooprun, build/python).
set -euo pipefail
ranks=${1:-2}
rounds=${2:-2}
old=${3:-}
shift $(( $# < 3 ? $# : 3 ))
export PYTHONPATH=$PWD/build/python HOOP_SOCKET_IFNAME==lo OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1
port=29700
run() {
  port=$((port + 1))
  MASTER_PORT=$port build/bin/hooprun -np "$ranks" /usr/bin/python3 \
    bench/train/ddp_step_time.py "$@" | grep "step median"
}
for _ in $(seq "$rounds"); do
  run --backend hoop "$@"
  run --backend gloo "$@"
  if [[ -n "$old" ]]; then run --backend-file "$old" "$@"; fi
done
