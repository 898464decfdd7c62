"""DistributedDataParallel on "hoop" ends where DDP on "gloo" ends (same data, same seed); run
by dist_async.py on the default process group, "hoop"."""

import torch
import torch.distributed as dist

import hoop.torch  # noqa: F401  (registers the "hoop" backend)

STEPS = 4
BATCH = 8


def train(process_group, rank, size):
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    with torch.no_grad():  # different starting points: DDP's broadcast must align them
        for p in model.parameters():
            p.add_(0.01 * rank)
    ddp = torch.nn.parallel.DistributedDataParallel(model, process_group=process_group)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(3)
    for _ in range(STEPS):
        inputs = torch.randn(size * BATCH, 12, generator=generator)
        labels = torch.randint(0, 4, (size * BATCH,), generator=generator)
        mine = slice(rank * BATCH, (rank + 1) * BATCH)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(ddp(inputs[mine]), labels[mine]).backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


def compare_with_gloo(rank, size):
    if dist.get_backend() != "hoop":
        raise AssertionError("backend is {}".format(dist.get_backend()))
    gloo = dist.new_group(backend="gloo")
    on_hoop = train(None, rank, size)
    on_gloo = train(gloo, rank, size)
    for a, b in zip(on_hoop, on_gloo):
        if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
            raise AssertionError("hoop and gloo differ by {}".format((a - b).abs().max().item()))
    # Every rank ends bitwise identical on hoop.
    flat = torch.cat([p.reshape(-1) for p in on_hoop])
    gathered = [torch.empty_like(flat) for _ in range(size)]
    dist.all_gather(gathered, flat)
    if not all(torch.equal(g, flat) for g in gathered):
        raise AssertionError("ranks disagree after DDP on hoop")
    print("rank {} of {}: ddp on hoop matches gloo".format(rank, size))
