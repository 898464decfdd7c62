"""Writes a timeline on every rank (HOOP_TIMELINE set by the test): named engine allreduces, one
whose shapes differ between the ranks (it fails on both), and a torch.distributed allreduce on
the C API, then a clean hoop.shutdown(). Then a timeline started from Python into argv[1]: one
allreduce on both ranks, one that rank 0 starts alone, and an abort of the communicator while
that call is in flight; the test reads the files as the abort left them."""

import os
import sys
import time

import torch
import torch.distributed as dist

import hoop
import hoop.torch as hvd
from hoop import _hoop


def main():
    restarted = sys.argv[1]
    rank, size = int(os.environ["HOOP_RANK"]), int(os.environ["HOOP_SIZE"])
    hvd.init()
    for _ in range(2):
        hvd.allreduce(torch.ones(256), name="grad.weight", op=hvd.Sum)
        hvd.allreduce(torch.ones(16), name="grad.bias", op=hvd.Sum)
    try:
        hvd.allreduce(torch.ones(4 + rank), name="grad.mismatched", op=hvd.Sum)
    except hoop.HoopError:
        pass
    else:
        raise AssertionError("an allreduce with different shapes on the ranks did not fail")
    dist.init_process_group("hoop", init_method="env://", rank=rank, world_size=size)
    dist.all_reduce(torch.ones(1024))
    hvd.shutdown()

    # hoop.torch's start_timeline needs hoop.init(); the torch backend's rank serves here.
    _hoop.timeline_start(str(restarted), rank)
    dist.all_reduce(torch.ones(8))
    store = dist.distributed_c10d._get_default_store()
    comm = dist.distributed_c10d._get_default_group()._comm
    if rank == 0:
        # Rank 1 never joins this call: it is in flight when the communicator is aborted.
        work = dist.all_reduce(torch.ones(16), async_op=True)
        time.sleep(0.5)
        comm.abort()
        try:
            work.wait()
        except (RuntimeError, hoop.HoopError):
            pass
        else:
            raise AssertionError("the allreduce in flight did not fail when aborted")
        store.set("aborted", "1")
        store.get("rank 1 aborted")  # rank 0 holds the store: it stays until rank 1 is done
    else:
        store.get("aborted")
        comm.abort()
        store.set("rank 1 aborted", "1")
    print("rank {}: timeline written".format(rank))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
