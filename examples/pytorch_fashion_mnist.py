"""Fashion-MNIST with hoop.torch: Horovod's PyTorch MNIST example, with `import hoop.torch as
hvd` as the only change from a Horovod script (and Debian's dataset instead of torchvision).

    build/bin/hooprun -np 2 /usr/bin/python3 examples/pytorch_fashion_mnist.py --epochs 2
(with PYTHONPATH=build/python)
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data.distributed

import hoop.torch as hvd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_data  # noqa: E402
from fashion_mnist_data import step_summary  # noqa: E402

parser = argparse.ArgumentParser(description="PyTorch Fashion-MNIST Example")
parser.add_argument("--batch-size", type=int, default=64, help="input batch size for training")
parser.add_argument("--test-batch-size", type=int, default=1000, help="input batch size for testing")
parser.add_argument("--epochs", type=int, default=2, help="number of epochs to train")
parser.add_argument("--lr", type=float, default=0.01, help="learning rate")
parser.add_argument("--momentum", type=float, default=0.5, help="SGD momentum")
parser.add_argument("--seed", type=int, default=42, help="random seed")
parser.add_argument("--log-interval", type=int, default=100, help="batches between log lines")
parser.add_argument("--fp16-allreduce", action="store_true", help="fp16 compression in allreduce")
parser.add_argument("--batches-per-epoch", type=int, default=0, help="stop an epoch early (0: all)")
parser.add_argument("--test-batches", type=int, default=0, help="test on this many batches (0: all)")
parser.add_argument("--data-dir", default=fashion_mnist_data.DEFAULT_DIR)
parser.add_argument("--checkpoint", default="", help="rank 0 saves the model here after each epoch")
parser.add_argument("--timing", action="store_true", help="print the median time per step")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def metric_average(value, name):
    tensor = torch.tensor(value)
    return hvd.allreduce(tensor, name=name).item()


def train(epoch, model, optimizer, train_loader, train_sampler, args, step_times):
    model.train()
    train_sampler.set_epoch(epoch)
    for batch_idx, (data, target) in enumerate(train_loader):
        if args.batches_per_epoch and batch_idx >= args.batches_per_epoch:
            break
        start, start_cpu = time.perf_counter(), time.process_time()
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        step_times.append((time.perf_counter() - start, time.process_time() - start_cpu))
        if batch_idx % args.log_interval == 0 and hvd.rank() == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(train_sampler),
                    100.0 * batch_idx / len(train_loader),
                    loss.item(),
                ),
                flush=True,
            )


def test(model, test_loader, test_sampler, args):
    model.eval()
    test_loss, test_accuracy, seen = 0.0, 0.0, 0
    with torch.no_grad():
        for batch_idx, (data, target) in enumerate(test_loader):
            if args.test_batches and batch_idx >= args.test_batches:
                break
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.data.max(1, keepdim=True)[1]
            test_accuracy += pred.eq(target.data.view_as(pred)).float().sum().item()
            seen += len(data)
    test_loss /= max(seen, 1)
    test_accuracy /= max(seen, 1)
    # Each rank saw its own shard: average the metrics over ranks.
    test_loss = metric_average(test_loss, "avg_loss")
    test_accuracy = metric_average(test_accuracy, "avg_accuracy")
    if hvd.rank() == 0:
        print(
            "\nTest set: Average loss: {:.4f}, Accuracy: {:.2f}%\n".format(
                test_loss, 100.0 * test_accuracy
            ),
            flush=True,
        )
    return test_accuracy


def main():
    args = parser.parse_args()
    started = time.perf_counter()

    hvd.init()
    torch.manual_seed(args.seed)
    # One intra-op thread per rank: the ranks of a host share its cores.
    torch.set_num_threads(1)

    train_dataset = fashion_mnist_data.load("train", args.data_dir)
    test_dataset = fashion_mnist_data.load("t10k", args.data_dir)
    # Each rank reads its own 1/size of the data.
    train_sampler = torch.utils.data.distributed.DistributedSampler(
        train_dataset, num_replicas=hvd.size(), rank=hvd.rank()
    )
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, sampler=train_sampler
    )
    test_sampler = torch.utils.data.distributed.DistributedSampler(
        test_dataset, num_replicas=hvd.size(), rank=hvd.rank(), shuffle=False
    )
    test_loader = torch.utils.data.DataLoader(
        test_dataset, batch_size=args.test_batch_size, sampler=test_sampler
    )

    model = Net()
    # The effective batch is size() times larger: scale the learning rate with it.
    optimizer = optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=args.momentum)

    # Start every rank from rank 0's weights and optimizer state.
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(
        optimizer, named_parameters=model.named_parameters(), compression=compression
    )

    step_times = []
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        train(epoch, model, optimizer, train_loader, train_sampler, args, step_times)
        accuracy = test(model, test_loader, test_sampler, args)
        # Only rank 0 writes checkpoints, so ranks do not overwrite each other.
        if args.checkpoint and hvd.rank() == 0:
            torch.save({"epoch": epoch, "model": model.state_dict()}, args.checkpoint)

    if hvd.rank() == 0:
        elapsed = time.perf_counter() - started
        line = "ranks {} epochs {} accuracy {:.2f}% total {:.1f} s".format(
            hvd.size(), args.epochs, 100.0 * accuracy, elapsed
        )
        if args.timing and step_times:
            line += " " + step_summary(step_times)
        print(line, flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
