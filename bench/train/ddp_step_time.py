"""DistributedDataParallel step time on a torch.distributed backend: a small ResNet-like network
(several gradient buckets) trained on synthetic images, the median step over the timed steps.

Run one process per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (torchrun, or
hooprun with MASTER_ADDR/MASTER_PORT), the hoop package on PYTHONPATH:

  ddp_step_time.py --backend hoop|gloo [--steps 30] [--warmup 5] [--batch 16]

Rank 0 prints one line: backend, ranks, median and quartiles of the step time in milliseconds.
(bench/train/run_ddp_step_time.sh runs it on both backends, and on an earlier hoop backend.)
"""

import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist


class Block(torch.nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = torch.nn.BatchNorm2d(channels)
        self.norm2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.norm1(self.conv1(x)))
        return torch.relu(x + self.norm2(self.conv2(y)))


def network(classes=10):
    layers = [torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU()]
    for channels in (32, 64, 128):
        if channels != 32:
            layers += [torch.nn.Conv2d(channels // 2, channels, 3, stride=2, padding=1)]
        layers += [Block(channels), Block(channels)]
    layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 256),
               torch.nn.ReLU(), torch.nn.Linear(256, classes)]
    return torch.nn.Sequential(*layers)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="hoop")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    import hoop.torch  # noqa: F401  (registers "hoop"; here, so network() imports without hoop)

    rank = int(os.environ.get("RANK", os.environ.get("HOOP_RANK", "0")))
    size = int(os.environ.get("WORLD_SIZE", os.environ.get("HOOP_SIZE", "1")))
    torch.set_num_threads(1)
    dist.init_process_group(args.backend, rank=rank, world_size=size)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(network(), bucket_cap_mb=1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, 32, 32)
    labels = torch.randint(0, 10, (args.batch,))
    times = []
    for step in range(args.warmup + args.steps):
        dist.barrier()
        began = time.perf_counter()
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(images), labels).backward()
        optimizer.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - began)
    # The slowest rank's step is the job's step.
    slowest = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if rank == 0:
        ms = sorted(t * 1000 for t in slowest.tolist())
        q = statistics.quantiles(ms, n=4)
        params = sum(p.numel() for p in model.parameters())
        print(
            "backend {} ranks {} params {} steps {}: step median {:.1f} ms (q1 {:.1f}, q3 {:.1f})".format(
                args.backend, size, params, len(ms),
                statistics.median(ms), q[0], q[2]
            ),
            flush=True,
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
