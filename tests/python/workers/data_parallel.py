"""N ranks with batch B each train the same model as 1 rank with batch N*B.

Every rank also trains a local reference on the whole N*B batch (no communication), so the
check needs no second job: after each step the distributed model must match the reference to
fp32 rounding (the gradient sum runs in another order), and every rank's parameters must be
bitwise identical to every other rank's (compared through a hash of their bytes).
Usage: data_parallel.py sgd|adam [steps] (or train_and_compare(kind, steps) from collectives.py,
after its checks, in the same job). With adam each rank also accumulates two backward
passes per step (backward_passes_per_step=2) and steps through synchronize() +
skip_synchronize(), Horovod's gradient-clipping pattern.
"""

import copy
import hashlib
import sys

import torch

import hoop.torch as hvd

BATCH = 8


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(
        torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)
    )


def make_optimizer(kind, params, scale):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    return torch.optim.Adam(params, lr=0.01)


def parameter_hash(model):
    digest = hashlib.sha256()
    for p in model.parameters():
        digest.update(p.detach().numpy().tobytes())
    return digest.hexdigest()


def train_and_compare(kind, steps):
    hvd.init()
    torch.set_num_threads(1)
    rank, size = hvd.rank(), hvd.size()

    model = make_model()
    reference = copy.deepcopy(model)
    # Ranks start from different weights; broadcast_parameters must fix that.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(rank)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    passes = 2 if kind == "adam" else 1
    optimizer = hvd.DistributedOptimizer(
        make_optimizer(kind, model.parameters(), size),
        named_parameters=model.named_parameters(),
        backward_passes_per_step=passes,
    )
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)
    reference_optimizer = make_optimizer(kind, reference.parameters(), 1)
    loss_fn = torch.nn.CrossEntropyLoss()

    generator = torch.Generator().manual_seed(99)
    for step in range(steps):
        inputs = torch.randn(size * BATCH, 10, generator=generator)
        labels = torch.randint(0, 3, (size * BATCH,), generator=generator)
        mine = slice(rank * BATCH, (rank + 1) * BATCH)

        # SGD clears gradients to None (a step then starts with no gradient at all).
        optimizer.zero_grad(set_to_none=(kind == "sgd"))
        if passes == 1:
            loss_fn(model(inputs[mine]), labels[mine]).backward()
            optimizer.step()
        else:
            # Two halves of this rank's batch; each loss is half the weight of the batch mean.
            half = BATCH // 2
            for start in (rank * BATCH, rank * BATCH + half):
                part = slice(start, start + half)
                (loss_fn(model(inputs[part]), labels[part]) / 2).backward()
            optimizer.synchronize()
            with optimizer.skip_synchronize():
                optimizer.step()

        reference_optimizer.zero_grad()
        loss_fn(reference(inputs), labels).backward()
        reference_optimizer.step()

        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            if not torch.allclose(p, q, rtol=1e-5, atol=1e-6):
                raise AssertionError(
                    "step {} {}: differs from the 1-rank reference by {}".format(
                        step, name, (p - q).abs().max().item()
                    )
                )
        hashes = hvd.allgather_object(parameter_hash(model))
        if len(set(hashes)) != 1:
            raise AssertionError("step {}: ranks hold different parameters: {}".format(step, hashes))
    print("rank {} of {}: {} {} steps match".format(rank, size, kind, steps))


if __name__ == "__main__":
    train_and_compare(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
