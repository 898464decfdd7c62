"""Process sets and process groups: collectives on two disjoint sets at the same time, exact, and
a call on a set this rank is not in refused; then the Horovod API pieces a script may call (the
build queries, SyncBatchNorm, allgather_object/broadcast_object). Run on 4 ranks under hooprun,
with MASTER_ADDR and MASTER_PORT for torch.distributed."""

import os

import torch
import torch.distributed as dist

import hoop
import hoop.torch as hvd


def expect(actual, expected, what):
    if not torch.equal(actual, expected):
        raise AssertionError("{}: got {} expected {}".format(what, actual, expected))


def horovod_api(rank, size):
    try:
        hvd.mpi_threads_supported()
    except hoop.HoopError as e:
        assert "not initialized" in str(e), str(e)
    else:
        raise AssertionError("mpi_threads_supported before init did not raise")
    hvd.init()
    assert hvd.mpi_threads_supported() is False and hvd.mpi_enabled() is False
    assert hvd.gloo_enabled() is False and hvd.nccl_built() == 0 and hvd.mpi_built() is False
    assert hvd.is_homogeneous()

    # SyncBatchNorm normalizes with the whole job's statistics, as BatchNorm over all of it.
    torch.manual_seed(3)
    whole = torch.randn(size * 4, 3, 5)
    mine = whole[rank * 4 : (rank + 1) * 4].clone().requires_grad_()
    synced = hvd.SyncBatchNorm(3)
    reference = torch.nn.BatchNorm1d(3)
    out = synced(mine)
    expected = reference(whole)[rank * 4 : (rank + 1) * 4]
    if not torch.allclose(out, expected, rtol=1e-4, atol=1e-5):
        raise AssertionError("SyncBatchNorm differs by {}".format((out - expected).abs().max()))
    if not torch.allclose(synced.running_mean, reference.running_mean, atol=1e-6) or not (
        torch.allclose(synced.running_var, reference.running_var, atol=1e-5)
    ):
        raise AssertionError("SyncBatchNorm running statistics differ")
    out.sum().backward()  # the gradient flows back through the shared statistics
    assert mine.grad is not None and torch.isfinite(mine.grad).all()

    assert hvd.allgather_object({"rank": rank}) == [{"rank": r} for r in range(size)]
    assert hvd.broadcast_object("from {}".format(rank), root_rank=1) == "from 1"


def horovod_sets(rank):
    evens = hvd.add_process_set([0, 2])
    odds = hvd.add_process_set(hvd.ProcessSet([1, 3]))
    mine, other = (evens, odds) if rank % 2 == 0 else (odds, evens)
    members = mine.ranks
    if not mine.included() or other.included() or mine.size() != 2:
        raise AssertionError("membership of {} and {} on rank {}".format(mine, other, rank))
    # Both sets reduce at once; each sees only its own ranks.
    summed = hvd.allreduce(torch.full((1000,), rank + 1, dtype=torch.int64), op=hvd.Sum,
                           name="set.sum", process_set=mine)
    expect(summed, torch.full((1000,), sum(r + 1 for r in members), dtype=torch.int64), "set sum")
    gathered = hvd.allgather(torch.tensor([rank]), name="set.gather", process_set=mine)
    expect(gathered, torch.tensor(members), "set allgather")
    root_value = torch.tensor([float(rank)])
    hvd.broadcast_(root_value, root_rank=1, name="set.bcast", process_set=mine)
    expect(root_value, torch.tensor([float(members[1])]), "set broadcast from set rank 1")
    whole = hvd.allreduce(torch.ones(3), op=hvd.Sum, name="whole")
    expect(whole, torch.full((3,), float(hvd.size())), "global allreduce beside the sets")
    try:
        hvd.allreduce(torch.ones(3), name="wrong.set", process_set=other)
    except hoop.HoopError as e:
        message = str(e)
        if "not in process set" not in message or "rank {}".format(rank) not in message:
            raise AssertionError("unclear refusal: {}".format(message))
    else:
        raise AssertionError("a call on a set without this rank was not refused")
    hvd.shutdown()


def torch_groups(rank, size):
    dist.init_process_group("hoop", init_method="env://", rank=rank, world_size=size)
    evens = dist.new_group([0, 2])
    odds = dist.new_group([1, 3])
    mine = evens if rank % 2 == 0 else odds
    members = [0, 2] if rank % 2 == 0 else [1, 3]
    t = torch.full((500,), rank + 1, dtype=torch.int32)
    work = dist.all_reduce(t, group=mine, async_op=True)
    work.wait()
    expect(t, torch.full((500,), sum(r + 1 for r in members), dtype=torch.int32), "group sum")
    dist.barrier()  # rank 0 holds the store: nobody leaves before every group is done with it
    dist.destroy_process_group()


def main():
    rank, size = int(os.environ["HOOP_RANK"]), int(os.environ["HOOP_SIZE"])
    torch.set_num_threads(1)
    horovod_api(rank, size)
    horovod_sets(rank)
    torch_groups(rank, size)
    print("rank {}: process sets exact".format(rank))


if __name__ == "__main__":
    main()
