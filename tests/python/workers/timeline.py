"""Writes a timeline on every rank (HOOP_TIMELINE set by the test): named engine allreduces and
a torch.distributed allreduce on the C API, then a clean hoop.shutdown(); then a timeline started
from Python into argv[1], one more call, and an abort of that call's communicator."""

import os
import sys

import torch
import torch.distributed as dist

import hoop.torch as hvd
from hoop import _hoop


def main():
    restarted = sys.argv[1]
    rank, size = int(os.environ["HOOP_RANK"]), int(os.environ["HOOP_SIZE"])
    hvd.init()
    for _ in range(2):
        hvd.allreduce(torch.ones(256), name="grad.weight", op=hvd.Sum)
        hvd.allreduce(torch.ones(16), name="grad.bias", op=hvd.Sum)
    dist.init_process_group("hoop", init_method="env://", rank=rank, world_size=size)
    dist.all_reduce(torch.ones(1024))
    hvd.shutdown()
    # hoop.torch's start_timeline needs hoop.init(); the torch backend's rank serves here.
    _hoop.timeline_start(str(restarted), rank)
    dist.all_reduce(torch.ones(8))
    dist.distributed_c10d._get_default_group()._comm.abort()
    print("rank {}: timeline written".format(rank))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
