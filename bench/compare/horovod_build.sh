#!/usr/bin/env bash
# Builds Horovod 0.28.1 (the last release; it supports torch up to 2.0, so Debian's torch 1.13)
# from the Python package index into a virtual environment that sees Debian's torch, CPU only,
# with its Gloo controller and no MPI, TensorFlow or MXNet: the peer that hoop.torch is measured
# beside (bench/RESULTS.md). Slow (Horovod compiles its C++ core and a copy of Gloo); not part of
# the README's build. Needs Debian's libtorch-dev beside python3-torch (torch's C++ headers;
# python3-torch ships none): without it the build stops at
#   horovod/torch/mpi_ops_v2.cc:26:10: fatal error: torch/extension.h: No such file or directory
#   bench/compare/horovod_build.sh [venv-dir]      (default /tmp/hoop-horovod-venv)
# Then: <venv>/bin/horovodrun -np 2 -H localhost:2 --gloo <venv>/bin/python script.py
set -euo pipefail
venv=${1:-/tmp/hoop-horovod-venv}
/usr/bin/python3 -m venv --system-site-packages "$venv"
# --no-build-isolation: the build must see Debian's torch (its headers and libraries), not a
# fresh one the isolated build would download.
export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 \
  HOROVOD_WITHOUT_MPI=1 HOROVOD_WITH_GLOO=1 HOROVOD_CPU_OPERATIONS=GLOO \
  MAKEFLAGS=-j"${JOBS:-2}"
"$venv/bin/pip" install --no-build-isolation --no-cache-dir "horovod[pytorch]==0.28.1"
"$venv/bin/python" -c 'import horovod.torch as hvd; print("horovod", hvd.__version__ if hasattr(hvd, "__version__") else "", "gloo built:", hvd.gloo_built())'
