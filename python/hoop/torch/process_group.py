"""The torch.distributed backend "hoop".

How it plugs into torch 1.13: `torch.distributed.Backend.register_backend("hoop", creator)`
makes `init_process_group("hoop")` call `creator(store, rank, size, timeout)`, which returns a
Python subclass of `torch._C._distributed_c10d.ProcessGroup`. The C++ ProcessGroup class has a
pybind11 trampoline, so calls that start in C++ (DistributedDataParallel's reducer, its
parameter checks, `_broadcast_coalesced`) reach the Python methods below too.

Each method runs its collective to completion on the calling thread (hoop releases the GIL while
it waits) and returns a Work already finished. A Work written in Python is not enough in 1.13:
the C++ side calls the base class's wait(), which would block forever, so the Work comes from
`_create_work_from_future` over a completed torch.futures.Future holding the outputs - that is
also what DDP's default communication hook reads the reduced gradients from. Running
synchronously costs the overlap of gradient communication with backward computation that an
asynchronous backend gets; on CPU ranks that share cores it matters little, and it keeps the
backend small and its errors on the caller's stack.

Rendezvous uses the store torch gives us: rank 0 creates a hoop unique id and publishes it, the
others read it, and all join with hoopCommInitRank. This communicator is separate from the one
behind hoop.init() / hoop.torch, so both can be used in one program.
"""

from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, ReduceOp, _create_work_from_future

from hoop import _hoop
from hoop._runtime import error
from hoop.torch._types import hoop_dtype

BACKEND_NAME = "hoop"
_UNIQUE_ID_KEY = "hoop_unique_id"

_OPS = {
    ReduceOp.SUM: _hoop.op.sum,
    ReduceOp.PRODUCT: _hoop.op.prod,
    ReduceOp.MIN: _hoop.op.min,
    ReduceOp.MAX: _hoop.op.max,
}
if hasattr(ReduceOp, "AVG"):
    _OPS[ReduceOp.AVG] = _hoop.op.avg


def _completed(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _create_work_from_future(future)


def _hoop_op(reduce_op, operation):
    op = _OPS.get(reduce_op)
    if op is None:
        raise error("hoop backend {}: reduce op {} is not supported".format(operation, reduce_op))
    return op


class _Contiguous:
    """A contiguous stand-in for a tensor, copied back on exit when the original was not."""

    def __init__(self, tensor, operation, copy_back=True):
        self.original = tensor
        self.tensor = tensor if tensor.is_contiguous() else tensor.contiguous()
        self.copy_back = copy_back and self.tensor is not tensor
        self.dtype = hoop_dtype(self.tensor, operation)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.copy_back and exc[0] is None:
            self.original.copy_(self.tensor)

    @property
    def ptr(self):
        return self.tensor.data_ptr()


class ProcessGroupHoop(ProcessGroup):
    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        if rank == 0:
            unique_id = _hoop.Communicator.create_unique_id()
            store.set(_UNIQUE_ID_KEY, unique_id)
        else:
            unique_id = store.get(_UNIQUE_ID_KEY)
        self._comm = _hoop.Communicator.from_unique_id(size, unique_id, rank)
        self._rank = rank
        self._size = size

    def getBackendName(self):
        return BACKEND_NAME

    def _get_backend_name(self):
        return BACKEND_NAME

    def shutdown(self):
        self._comm.destroy()

    # --- collectives -----------------------------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "allreduce")
        for t in tensors:
            with _Contiguous(t, "allreduce") as c:
                self._comm.allreduce(c.ptr, c.ptr, c.tensor.numel(), c.dtype, op)
        return _completed(tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts):
        root = opts.rootRank
        for t in tensors:
            with _Contiguous(t, "broadcast") as c:
                self._comm.broadcast(c.ptr, c.ptr, c.tensor.numel(), c.dtype, root)
        return _completed(tensors)

    def reduce(self, tensors, opts):
        op = _hoop_op(opts.reduceOp, "reduce")
        for t in tensors:
            with _Contiguous(t, "reduce") as c:
                self._comm.reduce(c.ptr, c.ptr, c.tensor.numel(), c.dtype, op, opts.rootRank)
        return _completed(tensors)

    def _allgather_into(self, output, tensor):
        with _Contiguous(tensor, "allgather", copy_back=False) as c:
            if output.numel() != c.tensor.numel() * self._size:
                raise error(
                    "hoop backend allgather: output holds {} elements, expected {} x {}".format(
                        output.numel(), self._size, c.tensor.numel()
                    )
                )
            with _Contiguous(output, "allgather") as out:
                self._comm.allgather(c.ptr, out.ptr, c.tensor.numel(), c.dtype)

    def allgather(self, output_tensors, input_tensors, opts=None):
        for outputs, tensor in zip(output_tensors, input_tensors):
            flat = torch.empty((self._size,) + tuple(tensor.shape), dtype=tensor.dtype)
            self._allgather_into(flat, tensor)
            for r, out in enumerate(outputs):
                out.copy_(flat[r])
        return _completed(output_tensors)

    def _allgather_base(self, output, tensor, opts=None):
        self._allgather_into(output, tensor)
        return _completed([output])

    def _reduce_scatter_into(self, output, flat_input, op):
        with _Contiguous(output, "reduce_scatter") as out, _Contiguous(
            flat_input, "reduce_scatter", copy_back=False
        ) as c:
            if c.tensor.numel() != out.tensor.numel() * self._size:
                raise error(
                    "hoop backend reduce_scatter: input holds {} elements, expected {} x {}".format(
                        c.tensor.numel(), self._size, out.tensor.numel()
                    )
                )
            self._comm.reduce_scatter(c.ptr, out.ptr, out.tensor.numel(), c.dtype, op)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "reduce_scatter")
        for output, inputs in zip(output_tensors, input_tensors):
            flat = torch.cat([t.reshape(-1) for t in inputs])
            self._reduce_scatter_into(output, flat, op)
        return _completed(output_tensors)

    def _reduce_scatter_base(self, output, tensor, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "reduce_scatter")
        self._reduce_scatter_into(output, tensor, op)
        return _completed([output])

    def alltoall_base(self, output, tensor, output_split_sizes, input_split_sizes, opts=None):
        if not output_split_sizes and not input_split_sizes:
            with _Contiguous(tensor, "alltoall", copy_back=False) as c, _Contiguous(
                output, "alltoall"
            ) as out:
                if c.tensor.numel() % self._size or c.tensor.numel() != out.tensor.numel():
                    raise error(
                        "hoop backend alltoall: {} input and {} output elements do not split "
                        "into {} equal blocks".format(
                            c.tensor.numel(), out.tensor.numel(), self._size
                        )
                    )
                self._comm.alltoall(c.ptr, out.ptr, c.tensor.numel() // self._size, c.dtype)
            return _completed([output])
        inputs = self._split_rows(tensor, input_split_sizes)
        outputs = self._split_rows(output, output_split_sizes)
        self._exchange(outputs, inputs)
        return _completed([output])

    def alltoall(self, output_tensors, input_tensors, opts=None):
        self._exchange(list(output_tensors), list(input_tensors))
        return _completed(output_tensors)

    def _split_rows(self, tensor, split_sizes):
        if not split_sizes:
            split_sizes = [tensor.shape[0] // self._size] * self._size
        return list(torch.split(tensor, list(split_sizes)))

    def _exchange(self, outputs, inputs):
        """outputs[i] from rank i, inputs[j] to rank j: all sends and receives in one group."""
        sends, recvs, keep = [], [], []
        for peer in range(self._size):
            source = inputs[peer].contiguous()
            target = outputs[peer]
            if peer == self._rank:
                target.copy_(source)
                continue
            staging = target if target.is_contiguous() else torch.empty_like(target).contiguous()
            sends.append((source.data_ptr(), source.numel(), hoop_dtype(source, "alltoall"), peer))
            recvs.append(
                (staging.data_ptr(), staging.numel(), hoop_dtype(staging, "alltoall"), peer)
            )
            keep.append((source, target, staging))
        self._comm.send_recv(sends, recvs)
        for _, target, staging in keep:
            if staging is not target:
                target.copy_(staging)

    def barrier(self, opts=None):
        self._comm.barrier()
        return _completed([])

    # --- point to point ---------------------------------------------------------------------------

    def send(self, tensors, dst_rank, tag=0):
        for t in tensors:
            with _Contiguous(t, "send", copy_back=False) as c:
                self._comm.send_recv([(c.ptr, c.tensor.numel(), c.dtype, dst_rank)], [])
        return _completed(tensors)

    def recv(self, tensors, src_rank, tag=0):
        for t in tensors:
            with _Contiguous(t, "recv") as c:
                self._comm.send_recv([], [(c.ptr, c.tensor.numel(), c.dtype, src_rank)])
        return _completed(tensors)


def _create_process_group(store, rank, size, timeout=timedelta(minutes=30)):
    return ProcessGroupHoop(store, rank, size, timeout)


def register():
    """Makes "hoop" a torch.distributed backend name (done when hoop.torch is imported)."""
    if not hasattr(dist.Backend, BACKEND_NAME.upper()):
        dist.Backend.register_backend(BACKEND_NAME, _create_process_group)
