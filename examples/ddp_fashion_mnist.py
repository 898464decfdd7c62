"""Fashion-MNIST with torch's DistributedDataParallel on the torch.distributed backend "hoop".

    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 build/bin/hooprun -np 2 \
        /usr/bin/python3 examples/ddp_fashion_mnist.py
    /usr/bin/python3 -m torch.distributed.run --nproc_per_node=2 examples/ddp_fashion_mnist.py
(with PYTHONPATH=build/python). --backend gloo runs the same training on torch's gloo.
"""

import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import hoop.torch  # noqa: F401  (registers the "hoop" backend)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_data  # noqa: E402
from fashion_mnist_data import step_summary  # noqa: E402
from pytorch_fashion_mnist import Net  # noqa: E402

parser = argparse.ArgumentParser(description="PyTorch DDP Fashion-MNIST on hoop")
parser.add_argument("--backend", default="hoop", help="torch.distributed backend (hoop, gloo)")
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--test-batch-size", type=int, default=1000)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--momentum", type=float, default=0.5)
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--log-interval", type=int, default=100)
parser.add_argument("--batches-per-epoch", type=int, default=0, help="stop an epoch early (0: all)")
parser.add_argument("--test-batches", type=int, default=0, help="test on this many batches (0: all)")
parser.add_argument("--data-dir", default=fashion_mnist_data.DEFAULT_DIR)
parser.add_argument("--timing", action="store_true", help="print the median time per step")


def launcher_rank_and_size():
    """torchrun sets RANK/WORLD_SIZE; under hooprun take HOOP_RANK/HOOP_SIZE."""
    for rank_var, size_var in (("RANK", "WORLD_SIZE"), ("HOOP_RANK", "HOOP_SIZE")):
        if rank_var in os.environ:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return 0, 1


def main():
    args = parser.parse_args()
    started = time.perf_counter()
    rank, size = launcher_rank_and_size()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group(args.backend, init_method="env://", rank=rank, world_size=size)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    train_dataset = fashion_mnist_data.load("train", args.data_dir)
    test_dataset = fashion_mnist_data.load("t10k", args.data_dir)
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, sampler=train_sampler
    )
    test_sampler = torch.utils.data.distributed.DistributedSampler(test_dataset, shuffle=False)
    test_loader = torch.utils.data.DataLoader(
        test_dataset, batch_size=args.test_batch_size, sampler=test_sampler
    )

    model = torch.nn.parallel.DistributedDataParallel(Net())
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * size, momentum=args.momentum)

    step_times = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_sampler.set_epoch(epoch)
        for batch_idx, (data, target) in enumerate(train_loader):
            if args.batches_per_epoch and batch_idx >= args.batches_per_epoch:
                break
            start, start_cpu = time.perf_counter(), time.process_time()
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            step_times.append((time.perf_counter() - start, time.process_time() - start_cpu))
            if batch_idx % args.log_interval == 0 and rank == 0:
                print("epoch {} batch {} loss {:.4f}".format(epoch, batch_idx, loss.item()), flush=True)

        model.eval()
        totals = torch.zeros(3, dtype=torch.float64)  # loss sum, correct, samples
        with torch.no_grad():
            for batch_idx, (data, target) in enumerate(test_loader):
                if args.test_batches and batch_idx >= args.test_batches:
                    break
                output = model(data)
                totals[0] += F.nll_loss(output, target, reduction="sum").item()
                totals[1] += (output.argmax(1) == target).sum().item()
                totals[2] += len(target)
        dist.all_reduce(totals)
        if rank == 0:
            print(
                "epoch {} test loss {:.4f} test accuracy {:.2f}%".format(
                    epoch, totals[0] / totals[2], 100.0 * totals[1] / totals[2]
                ),
                flush=True,
            )

    if rank == 0:
        line = "backend {} ranks {} epochs {} total {:.1f} s".format(
            args.backend, size, args.epochs, time.perf_counter() - started
        )
        if args.timing and step_times:
            line += " " + step_summary(step_times)
        print(line, flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
