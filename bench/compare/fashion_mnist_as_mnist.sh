#!/usr/bin/env bash
# Lays Debian's Fashion-MNIST (dataset-fashion-mnist, /usr/share/datasets/fashion-mnist) out the
# way torchvision's datasets.MNIST reads MNIST, so that Horovod's pytorch_mnist.py trains on it
# with --data-dir DIR and downloads nothing: DIR/MNIST/raw/ holds the four files unpacked (the
# two datasets share names and format; torchvision looks for the unpacked names).
#   bench/compare/fashion_mnist_as_mnist.sh DIR
set -euo pipefail
source_dir=${HOOP_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
target=${1:?usage: $0 DIR}/MNIST/raw
mkdir -p "$target"
for name in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
  t10k-labels-idx1-ubyte; do
  if [[ ! -f $source_dir/$name.gz ]]; then
    echo "$source_dir/$name.gz missing: install dataset-fashion-mnist" >&2
    exit 1
  fi
  [[ -f $target/$name ]] || gunzip -c "$source_dir/$name.gz" >"$target/$name"
done
echo "$target"
