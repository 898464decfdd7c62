"""The "hoop" torch.distributed backend's asynchronous Work, and every call it serves.

Launched once per rank by test_torch_async.py (RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set
by the test or by torchrun) with the modes to run in turn; each rank checks its own results and
prints one line per check it passed.

  every_call  every torch.distributed call, exact (dist_backend.py).
  overlap     a Work is still pending while its caller goes on: rank 0 checks is_completed() is
              False before it lets rank 1 join the call, then the result is exact.
  ddp         DistributedDataParallel with several gradient buckets ends where one process
              training on the whole batch ends (to the model's float tolerance), every rank
              bitwise alike.
  gloo        DDP on "hoop" ends where DDP on "gloo" ends (ddp_compare.py).
  timeout     rank 1 never joins; rank 0's wait(0.5 s) raises, then wait() raises once the
              group's 2 s timeout ended the call.
  close       closing a group with a call in flight aborts it after HOOP_TORCH_CLOSE_TIMEOUT.
  killed      the last rank dies; the others' wait() raises naming it.
"""

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import ddp_compare
import dist_backend
import hoop
import hoop.torch  # noqa: F401  (registers the "hoop" backend)

STEPS = 3
BATCH = 6


def model():
    torch.manual_seed(11)
    # Wide enough layers that DDP with a small bucket cap makes one bucket per layer or so.
    return torch.nn.Sequential(
        torch.nn.Linear(16, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 4),
    )


def batches(size):
    generator = torch.Generator().manual_seed(5)
    for _ in range(STEPS):
        yield (
            torch.randn(size * BATCH, 16, generator=generator),
            torch.randint(0, 4, (size * BATCH,), generator=generator),
        )


def train(net, rank, size, whole):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for inputs, labels in batches(size):
        if not whole:
            mine = slice(rank * BATCH, (rank + 1) * BATCH)
            inputs, labels = inputs[mine], labels[mine]
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(net(inputs), labels).backward()
        optimizer.step()


def check_ddp(rank, size):
    reference = model()
    train(reference, rank, size, whole=True)
    local = model()
    ddp = torch.nn.parallel.DistributedDataParallel(local, bucket_cap_mb=0.01)
    train(ddp, rank, size, whole=False)
    for a, b in zip(local.parameters(), reference.parameters()):
        if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
            raise AssertionError("DDP differs from the whole batch by {}".format((a - b).abs().max()))
    flat = torch.cat([p.detach().reshape(-1) for p in local.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(size)]
    dist.all_gather(gathered, flat)
    if not all(torch.equal(g, flat) for g in gathered):
        raise AssertionError("ranks disagree after DDP")
    print("rank {}: ddp matches the whole batch".format(rank))


def check_overlap(rank, size):
    store = dist.distributed_c10d._get_default_store()
    t = torch.full((1000,), float(rank + 1))
    if rank == 0:
        # Rank 1 does not call until rank 0 says so: the Work cannot have ended before that.
        work = dist.all_reduce(t, async_op=True)
        pending = not work.is_completed()
        store.set("joined", "go")
        work.wait()
        if not pending:
            raise AssertionError("the allreduce ended before rank 1 had called it")
        print("rank 0: work pending while the caller went on")
    else:
        if rank == 1:
            store.get("joined")
        dist.all_reduce(t)
    expected = torch.full((1000,), float(size * (size + 1) // 2))
    if not torch.equal(t, expected):
        raise AssertionError("allreduce gave {}".format(t[:4]))
    print("rank {}: overlapped allreduce exact".format(rank))


def expect_failure(work, *fragments, timeout=timedelta(0)):
    try:
        work.wait(timeout)
    except (RuntimeError, hoop.HoopError) as e:
        message = str(e)
        missing = [f for f in fragments if f not in message]
        if missing:
            raise AssertionError("message {!r} lacks {}".format(message, missing))
        return message
    raise AssertionError("wait() returned instead of raising")


def check_killed(rank, size):
    """Last in a job: the last rank dies; the others' wait() raises naming it."""
    t = torch.ones(4096)
    dist.all_reduce(t)  # everyone connected
    if rank == size - 1:
        os._exit(9)
    began = time.monotonic()
    message = expect_failure(dist.all_reduce(t, async_op=True), "rank {}".format(size - 1))
    print("rank {}: wait raised after {:.1f} s: {}".format(rank, time.monotonic() - began, message))


def hold_rank_one(store, key, rank):
    """Rank 1 stays out of rank 0's call, alive (so rank 0 sees a silent peer, not a dead one),
    until rank 0 has checked what it checks and calls release_rank_one."""
    if rank == 1:
        store.get(key)
        store.set(key + " seen", "1")


def release_rank_one(store, key):
    # Rank 0 holds the store: it stays until rank 1 has read the key.
    store.set(key, "1")
    store.get(key + " seen")


def check_timeout(rank, size):
    """A group with a 2 s timeout: rank 0's wait(0.5 s) raises while the call goes on, then the
    group's timeout ends the call and wait() raises."""
    group = dist.new_group(timeout=timedelta(seconds=2))
    store = dist.distributed_c10d._get_default_store()
    if rank == 0:
        began = time.monotonic()
        work = dist.all_reduce(torch.ones(8), group=group, async_op=True)
        expect_failure(work, "wait() timed out after 0.5 s", timeout=timedelta(seconds=0.5))
        message = expect_failure(work, "allreduce")
        waited = time.monotonic() - began
        release_rank_one(store, "timeout checked")
        if waited > 5:
            raise AssertionError("wait() took {:.1f} s for a 2 s timeout".format(waited))
        print("rank 0: timed out after {:.1f} s: {}".format(waited, message))
    else:
        hold_rank_one(store, "timeout checked", rank)


def check_close(rank, size):
    """Closing a group with a call in flight (the peer never joins, the group's timeout is a
    minute) waits HOOP_TORCH_CLOSE_TIMEOUT, then aborts the call: its wait() raises."""
    close_seconds = float(os.environ["HOOP_TORCH_CLOSE_TIMEOUT"])
    group = dist.new_group(timeout=timedelta(seconds=60))
    store = dist.distributed_c10d._get_default_store()
    if rank == 0:
        work = dist.all_reduce(torch.ones(8), group=group, async_op=True)
        began = time.monotonic()
        group.shutdown()  # what torch 2's destroy_process_group calls; 1.13 runs it on collection
        closed = time.monotonic() - began
        message = expect_failure(work, "allreduce", "rank 0", "closed")
        release_rank_one(store, "close checked")
        if not close_seconds * 0.9 <= closed <= close_seconds + 4:
            raise AssertionError(
                "close took {:.1f} s with HOOP_TORCH_CLOSE_TIMEOUT={}".format(closed, close_seconds)
            )
        print("rank 0: closed after {:.1f} s, the call aborted: {}".format(closed, message))
    else:
        hold_rank_one(store, "close checked", rank)


def main():
    # One launch runs several modes in turn (each rank pays a torch import): "every_call"
    # (dist_backend.py), "overlap", "ddp", "gloo" (ddp_compare.py), "timeout", "close", and
    # "killed", which must come last.
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)
    dist.init_process_group("hoop", rank=rank, world_size=size, timeout=timedelta(seconds=60))
    checks = {
        "every_call": dist_backend.check_every_call,
        "overlap": check_overlap,
        "ddp": check_ddp,
        "gloo": ddp_compare.compare_with_gloo,
        "timeout": check_timeout,
        "close": check_close,
        "killed": check_killed,
    }
    for mode in sys.argv[1:]:
        checks[mode](rank, size)
    print("rank {}: every mode passed".format(rank))
    sys.stdout.flush()
    os._exit(0)  # skip teardown: "killed", "timeout" and "close" leave failed groups behind


if __name__ == "__main__":
    main()
