#!/usr/bin/env bash
# Runs Horovod's own PyTorch examples on hoop.torch with their import changed, from a copy of
# Horovod's examples/pytorch (fetched for the run, never kept in this repository):
#   bench/compare/horovod_examples.sh EXAMPLES_DIR [ranks] [workdir]
# pytorch_mnist.py: one epoch on Fashion-MNIST (fashion_mnist_as_mnist.sh); it also says
# `import horovod` (only for horovod.run, its --num-proc mode), which has to go where Horovod is
# not installed. pytorch_synthetic_benchmark.py: a small torchvision model and few batches
# (its defaults, ResNet-50 on 32 images of 224x224, take minutes per step on a few CPU cores).
# Needs Debian's python3-torchvision and python3-filelock. Run from the repository root after
# building; HOOP_EXAMPLE_ARGS_MNIST / HOOP_EXAMPLE_ARGS_SYNTHETIC replace the arguments below.
set -euo pipefail
examples=${1:?usage: $0 EXAMPLES_DIR [ranks] [workdir]}
ranks=${2:-2}
work=${3:-$(mktemp -d /tmp/hoop-horovod-examples.XXXXXX)}
export PYTHONPATH=$PWD/build/python HOOP_SOCKET_IFNAME==lo OMP_NUM_THREADS=1
mkdir -p "$work"
data=$(dirname "$(dirname "$(bench/compare/fashion_mnist_as_mnist.sh "$work/data")")")
for script in pytorch_mnist.py pytorch_synthetic_benchmark.py; do
  sed -e 's/^import horovod\.torch as hvd$/import hoop.torch as hvd/' -e '/^import horovod$/d' \
    "$examples/$script" >"$work/$script"
  echo "== $script: lines changed"
  diff "$examples/$script" "$work/$script" || true
done
read -r -a mnist_args <<<"${HOOP_EXAMPLE_ARGS_MNIST:---epochs 1}"
read -r -a synthetic_args <<<"${HOOP_EXAMPLE_ARGS_SYNTHETIC:---model mobilenet_v3_small \
--batch-size 8 --num-warmup-batches 2 --num-batches-per-iter 3 --num-iters 3}"
echo "== pytorch_mnist.py on $ranks ranks"
build/bin/hooprun -np "$ranks" /usr/bin/python3 "$work/pytorch_mnist.py" --data-dir "$data" \
  "${mnist_args[@]}"
echo "== pytorch_synthetic_benchmark.py on $ranks ranks"
build/bin/hooprun -np "$ranks" /usr/bin/python3 "$work/pytorch_synthetic_benchmark.py" \
  "${synthetic_args[@]}"
