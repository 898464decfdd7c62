"""Horovod API pieces a script may call: the build queries, SyncBatchNorm (statistics of the whole
job's batch), allgather_object/broadcast_object (run on 2 ranks)."""

import torch

import hoop
import hoop.torch as hvd


def main():
    try:
        hvd.mpi_threads_supported()
    except hoop.HoopError as e:
        assert "not initialized" in str(e), str(e)
    else:
        raise AssertionError("mpi_threads_supported before init did not raise")
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    assert hvd.mpi_threads_supported() is False and hvd.mpi_enabled() is False
    assert hvd.gloo_enabled() is False and hvd.nccl_built() == 0 and hvd.mpi_built() is False
    assert hvd.is_homogeneous()

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
    hvd.shutdown()
    print("rank {}: horovod api ok".format(rank))


if __name__ == "__main__":
    main()
