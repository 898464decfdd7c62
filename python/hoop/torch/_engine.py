"""hoop.torch's collectives on hoop's training engine (include/hoop/train.hpp).

The engine negotiates named requests between ranks in the background, so ranks may submit them
in any order (gradient hooks fire in whatever order autograd reaches the parameters), and it
packs ready allreduces into one fusion buffer (HOOP_FUSION_THRESHOLD bytes, every
HOOP_CYCLE_TIME ms). HOOP_TORCH_ENGINE=0 runs the same API on the C API directly instead
(requests then run in submission order, which must be the same on every rank).
"""

import itertools
import os

import torch

from hoop import _hoop
from hoop.torch._direct import DirectRunner
from hoop.torch._types import hoop_dtype

_TORCH_DTYPES = {
    _hoop.dtype.int8: torch.int8,
    _hoop.dtype.uint8: torch.uint8,
    _hoop.dtype.int32: torch.int32,
    _hoop.dtype.int64: torch.int64,
    _hoop.dtype.float16: torch.float16,
    _hoop.dtype.bfloat16: torch.bfloat16,
    _hoop.dtype.float32: torch.float32,
    _hoop.dtype.float64: torch.float64,
}


def make_runner(communicator):
    if os.environ.get("HOOP_TORCH_ENGINE", "1") == "0":
        return DirectRunner(communicator)
    return EngineRunner(communicator)


class _EngineFuture:
    """One engine handle seen as a future: done() polls, result() waits (once) and converts."""

    def __init__(self, engine, handle, convert):
        self._engine = engine
        self._handle = handle
        self._convert = convert
        self._finished = False
        self._value = None

    def done(self):
        return self._finished or self._engine.poll(self._handle)

    def result(self):
        if not self._finished:
            self._engine.wait(self._handle)  # raises HoopError, releasing the handle
            self._finished = True
            self._value = self._convert()
        return self._value


class EngineRunner:
    def __init__(self, communicator):
        self._communicator = communicator  # the engine borrows it: keep it alive
        self._engine = _hoop.Engine(communicator.handle())
        self._size = communicator.size()
        self._rank = communicator.rank()
        self._internal_names = itertools.count()

    def close(self):
        self._engine.close()

    def stats(self):
        return self._engine.stats()

    def _future(self, handle, convert):
        return _EngineFuture(self._engine, handle, convert)

    def allreduce(self, name, source, output, op, prescale, postscale):
        handle = self._engine.allreduce(
            name,
            source.data_ptr(),
            output.data_ptr(),
            output.numel(),
            hoop_dtype(output, name),
            op,
            prescale,
            postscale,
        )
        return self._future(handle, lambda: output)

    def grouped_allreduce(self, name, sources, outputs, op, prescale, postscale):
        # Submitted together, so the ranks agree on them in one cycle and fuse them.
        requests = [
            (
                "{}.{}".format(name, i),
                s.data_ptr(),
                o.data_ptr(),
                o.numel(),
                hoop_dtype(o, name),
            )
            for i, (s, o) in enumerate(zip(sources, outputs))
        ]
        handles = self._engine.grouped_allreduce(requests, op, prescale, postscale)
        futures = [self._future(h, lambda: None) for h in handles]
        return _Group(futures, outputs)

    def broadcast(self, name, tensor, root):
        handle = self._engine.broadcast(
            name, tensor.data_ptr(), tensor.numel(), hoop_dtype(tensor, name), root
        )
        return self._future(handle, lambda: tensor)

    def allgather(self, name, tensor):
        dtype = hoop_dtype(tensor, name)
        row_shape = tuple(tensor.shape[1:]) if tensor.dim() > 0 else ()
        handle = self._engine.allgather(name, tensor.data_ptr(), tensor.numel(), dtype)

        def convert():
            data, _ = self._engine.take_gathered(handle)
            flat = torch.from_numpy(data).view(_TORCH_DTYPES[dtype])
            return flat.reshape((-1,) + row_shape)

        # take_gathered needs the handle's buffer: the engine released the handle in wait().
        return self._future(handle, convert)

    def alltoall(self, name, send, recv, count_per_rank):
        handle = self._engine.alltoall(
            name, send.data_ptr(), recv.data_ptr(), count_per_rank, hoop_dtype(send, name)
        )
        return self._future(handle, lambda: recv)

    def alltoallv(self, name, tensor, splits):
        """splits[j] rows to rank j; the future gives (output, rows received from each rank)."""
        dtype = hoop_dtype(tensor, name)
        row_shape = tuple(tensor.shape[1:])
        row_elements = 1
        for d in row_shape:
            row_elements *= d
        send_counts = [s * row_elements for s in splits]
        handle = self._engine.alltoallv(name, tensor.data_ptr(), send_counts, dtype)

        def convert():
            data, counts = self._engine.take_gathered(handle)
            flat = torch.from_numpy(data).view(_TORCH_DTYPES[dtype])
            rows = [c // row_elements if row_elements else 0 for c in counts]
            return flat.reshape((-1,) + row_shape), torch.tensor(rows, dtype=torch.int64)

        return self._future(handle, convert)

    def reducescatter(self, name, send, recv, recv_count, op):
        handle = self._engine.reducescatter(
            name, send.data_ptr(), recv.data_ptr(), recv_count, hoop_dtype(send, name), op
        )
        return self._future(handle, lambda: recv)

    def barrier(self, name):
        return self._future(self._engine.barrier(name), lambda: None)

    def join(self):
        return self._engine.join()

    def gather_counts(self, count):
        counts = torch.tensor([count], dtype=torch.int64)
        name = "hoop.torch.counts.{}".format(next(self._internal_names))
        return self.allgather(name, counts).result().tolist()


class _Group:
    def __init__(self, futures, outputs):
        self._futures = futures
        self._outputs = outputs

    def done(self):
        return all(f.done() for f in self._futures)

    def result(self):
        for f in self._futures:
            f.result()
        return self._outputs
