"""Writes a timeline on every rank (HOOP_TIMELINE set by the test): named engine allreduces, a
torch.distributed allreduce on the C API, then a clean shutdown or an abort (argv[1]). Also
start_timeline/stop_timeline into argv[2]."""

import os
import sys

import torch
import torch.distributed as dist

import hoop.torch as hvd
from hoop import _runtime


def main():
    ending, second_path = sys.argv[1], sys.argv[2]
    rank, size = int(os.environ["HOOP_RANK"]), int(os.environ["HOOP_SIZE"])
    hvd.init()
    for step in range(2):
        hvd.allreduce(torch.ones(256), name="grad.weight", op=hvd.Sum)
        hvd.allreduce(torch.ones(16), name="grad.bias", op=hvd.Sum)
    dist.init_process_group("hoop", init_method="env://", rank=rank, world_size=size)
    t = torch.ones(1024)
    dist.all_reduce(t)
    if ending == "abort":
        _runtime.communicator().abort()
        os._exit(0)
    hvd.start_timeline(second_path)
    hvd.allreduce(torch.ones(8), name="after.restart", op=hvd.Sum)
    hvd.stop_timeline()
    dist.destroy_process_group()
    hvd.shutdown()
    print("rank {}: timeline written".format(rank))


if __name__ == "__main__":
    main()
