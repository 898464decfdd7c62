#!/usr/bin/env bash
# Runs the Horovod-style Python example under slurm_test.sh (the rest of the arguments), skipped
# (exit 77) where Python lacks torch or the dataset is not installed.
#   python_example.sh SLURM_TEST_SH DIR MPI N EXPECT PYTHON EXAMPLE [ARGS...]
set -u
python=$6
if ! "$python" -c "import torch" 2> /dev/null; then
  echo "SKIP: $python cannot import torch (Debian: python3-torch)"
  exit 77
fi
if [[ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]]; then
  echo "SKIP: the example needs Fashion-MNIST (Debian: dataset-fashion-mnist)"
  exit 77
fi
exec "$@"
