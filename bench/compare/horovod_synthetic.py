"""A Horovod-style synthetic training benchmark that runs unchanged on Horovod and on hoop.torch:
only the import differs (--hoop). It follows the loop of Horovod's pytorch_synthetic_benchmark.py
(warm-up batches, then iterations of several batches, images per second per iteration) but trains
the ResNet-like network of bench/train/ddp_step_time.py, so that it runs without torchvision (which
provides that script's models; Debian's python3-torchvision does, for Horovod's own script).

  <horovod-venv>/bin/horovodrun -np 2 -H localhost:2 --gloo <horovod-venv>/bin/python \\
      bench/compare/horovod_synthetic.py
  build/bin/hooprun -np 2 /usr/bin/python3 bench/compare/horovod_synthetic.py --hoop

Rank 0 prints images per second (mean and 95% interval over the iterations, per rank and total).
"""

import argparse
import os
import sys
import timeit

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from ddp_step_time import network  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--hoop", action="store_true", help="import hoop.torch instead of Horovod")
parser.add_argument("--batch-size", type=int, default=16)
parser.add_argument("--num-warmup-batches", type=int, default=3)
parser.add_argument("--num-batches-per-iter", type=int, default=5)
parser.add_argument("--num-iters", type=int, default=5)
parser.add_argument("--fp16-allreduce", action="store_true")
args = parser.parse_args()

if args.hoop:
    import hoop.torch as hvd
else:
    import horovod.torch as hvd

hvd.init()
torch.set_num_threads(1)
torch.manual_seed(0)
model = network()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size())
compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
optimizer = hvd.DistributedOptimizer(
    optimizer, named_parameters=model.named_parameters(), compression=compression
)
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
hvd.broadcast_optimizer_state(optimizer, root_rank=0)

data = torch.randn(args.batch_size, 3, 32, 32)
target = torch.randint(0, 10, (args.batch_size,))


def benchmark_step():
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(model(data), target).backward()
    optimizer.step()


timeit.timeit(benchmark_step, number=args.num_warmup_batches)
rates = []
for _ in range(args.num_iters):
    seconds = timeit.timeit(benchmark_step, number=args.num_batches_per_iter)
    rates.append(args.batch_size * args.num_batches_per_iter / seconds)
if hvd.rank() == 0:
    mean, spread = np.mean(rates), 1.96 * np.std(rates)
    print(
        "{} ranks {}: img/sec per rank {:.1f} +-{:.1f}, total {:.1f}".format(
            "hoop.torch" if args.hoop else "horovod", hvd.size(), mean, spread, hvd.size() * mean
        ),
        flush=True,
    )
