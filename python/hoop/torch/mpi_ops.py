"""hoop.torch collectives with horovod.torch's names and semantics.

Every collective is named (a name is generated when none is given) and asynchronous underneath:
`*_async` returns an integer handle for poll() and synchronize(); the blocking forms synchronize
at once. Every collective takes `process_set=` (hoop.torch.process_sets): the ranks of that set
alone take part, and ranks and sizes (broadcast's root, the pieces of an allgather or
reducescatter) count within the set. Tensors must be contiguous CPU tensors of a dtype hoop reduces; hoop reads and writes
their memory in place and keeps them alive until the handle completes.
"""

import itertools
import threading

import torch

from hoop import _hoop, _runtime
from hoop._runtime import error
from hoop.torch._types import hoop_dtype
from hoop.torch.process_sets import global_process_set, runner_for, set_rank, set_size

# Reduction operations, as horovod.torch exports them (hoop._reduce_ops).
from hoop._reduce_ops import resolve_reduce_op
from hoop._reduce_ops import HOOP_OPS as _HOOP_OPS
from hoop._reduce_ops import Adasum, Average, Max, Min, Product, Sum  # noqa: F401

_lock = threading.Lock()
_runner = None
_handles = {}
_next_handle = itertools.count(1)
_noname = itertools.count()


def _get_runner():
    """The collective runner for the current communicator, started on first use."""
    global _runner
    with _lock:
        if _runner is None:
            communicator = _runtime.communicator()
            from hoop.torch._engine import make_runner

            _runner = make_runner(communicator)
            _runtime.on_shutdown(_stop_runner)
        return _runner


def _stop_runner():
    global _runner
    with _lock:
        runner, _runner = _runner, None
        _handles.clear()
    if runner is not None:
        runner.close()


def _auto_name(kind, name):
    return name if name is not None else "{}.noname.{}".format(kind, next(_noname))


def _reduce_op(op, average, kind):
    return resolve_reduce_op(op, average, "hoop.torch.{}".format(kind))


def _register(future, finish=None, keepalive=None):
    handle = next(_next_handle)
    _handles[handle] = (future, finish, keepalive)
    return handle


def poll(handle):
    """True when the operation behind handle has finished (synchronize() will not block)."""
    entry = _handles.get(handle)
    if entry is None:
        raise ValueError("hoop.torch.poll: unknown or already synchronized handle {}".format(handle))
    return entry[0].done()


def synchronize(handle):
    """Waits for the operation behind handle and returns its output tensor."""
    entry = _handles.pop(handle, None)
    if entry is None:
        raise ValueError(
            "hoop.torch.synchronize: unknown or already synchronized handle {}".format(handle)
        )
    future, finish, _ = entry
    result = future.result()
    return finish(result) if finish is not None else result


def _check_scaling(tensor, prescale_factor, postscale_factor, kind):
    if (prescale_factor != 1.0 or postscale_factor != 1.0) and not tensor.dtype.is_floating_point:
        raise error(
            "hoop.torch.{}: prescale/postscale factors need a floating-point tensor, got {}".format(
                kind, tensor.dtype
            )
        )


# --- allreduce ------------------------------------------------------------------------------------


def _allreduce_async(tensor, output, name, op, prescale_factor, postscale_factor, process_set):
    hoop_dtype(tensor, "allreduce")
    _check_scaling(tensor, prescale_factor, postscale_factor, "allreduce")
    runner = runner_for(process_set, "allreduce", _get_runner)
    future = runner.allreduce(
        _auto_name("allreduce", name),
        tensor,
        output,
        _HOOP_OPS[op],
        float(prescale_factor),
        float(postscale_factor),
    )
    return _register(future, lambda _: output, (tensor, output))


def allreduce_async(
    tensor,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    """Starts an allreduce into a new tensor; synchronize(handle) returns it."""
    op = _reduce_op(op, average, "allreduce_async")
    hoop_dtype(tensor, "allreduce_async")
    output = torch.empty_like(tensor, memory_format=torch.contiguous_format)
    return _allreduce_async(
        tensor, output, name, op, prescale_factor, postscale_factor, process_set
    )


def allreduce_async_(
    tensor,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    """Starts an in-place allreduce of tensor; synchronize(handle) returns tensor."""
    op = _reduce_op(op, average, "allreduce_async_")
    return _allreduce_async(
        tensor, tensor, name, op, prescale_factor, postscale_factor, process_set
    )


class _AllreduceFunction(torch.autograd.Function):
    """The gradient of an allreduce is the allreduce of the gradient with the same op."""

    @staticmethod
    def forward(ctx, tensor, name, op, prescale_factor, postscale_factor, process_set):
        ctx.op = op
        ctx.prescale_factor = prescale_factor
        ctx.postscale_factor = postscale_factor
        ctx.process_set = process_set
        return synchronize(
            allreduce_async(
                tensor,
                name=name,
                op=op,
                prescale_factor=prescale_factor,
                postscale_factor=postscale_factor,
                process_set=process_set,
            )
        )

    @staticmethod
    def backward(ctx, grad_output):
        reduced = synchronize(
            allreduce_async(
                grad_output.contiguous(),
                op=ctx.op,
                prescale_factor=ctx.prescale_factor,
                postscale_factor=ctx.postscale_factor,
                process_set=ctx.process_set,
            )
        )
        return reduced, None, None, None, None, None


def allreduce(
    tensor,
    average=None,
    name=None,
    compression=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    """Reduces tensor over all ranks (Average by default) into a new tensor; differentiable."""
    from hoop.torch.compression import Compression

    compression = compression or Compression.none
    op = _reduce_op(op, average, "allreduce")
    compressed, ctx = compression.compress(tensor)
    summed = _AllreduceFunction.apply(
        compressed, name, op, prescale_factor, postscale_factor, process_set
    )
    return compression.decompress(summed, ctx)


def allreduce_(
    tensor,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    """Reduces tensor in place and returns it."""
    return synchronize(
        allreduce_async_(
            tensor, average, name, op, prescale_factor, postscale_factor, process_set
        )
    )


# --- grouped allreduce ----------------------------------------------------------------------------


def _grouped_allreduce_async(
    tensors, outputs, name, op, prescale_factor, postscale_factor, process_set
):
    kind = "grouped_allreduce"
    if not tensors:
        raise error("hoop.torch.{}: the list of tensors is empty".format(kind))
    for t in tensors:
        hoop_dtype(t, kind)
        _check_scaling(t, prescale_factor, postscale_factor, kind)
    runner = runner_for(process_set, kind, _get_runner)
    base = _auto_name(kind, name)
    # One request per dtype, in first-appearance order (the same on every rank for equal lists).
    by_dtype = {}
    for index, t in enumerate(tensors):
        by_dtype.setdefault(t.dtype, []).append(index)
    futures = []
    for part, (dtype, indices) in enumerate(by_dtype.items()):
        futures.append(
            runner.grouped_allreduce(
                "{}.{}".format(base, part),
                [tensors[i] for i in indices],
                [outputs[i] for i in indices],
                _HOOP_OPS[op],
                float(prescale_factor),
                float(postscale_factor),
            )
        )
    return _register(_AllOf(futures), lambda _: list(outputs), (tensors, outputs))


class _AllOf:
    """Several futures seen as one."""

    def __init__(self, futures):
        self._futures = futures

    def done(self):
        return all(f.done() for f in self._futures)

    def result(self):
        return [f.result() for f in self._futures]


def grouped_allreduce_async(
    tensors,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    op = _reduce_op(op, average, "grouped_allreduce_async")
    outputs = [torch.empty_like(t, memory_format=torch.contiguous_format) for t in tensors]
    return _grouped_allreduce_async(
        tensors, outputs, name, op, prescale_factor, postscale_factor, process_set
    )


def grouped_allreduce_async_(
    tensors,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    op = _reduce_op(op, average, "grouped_allreduce_async_")
    return _grouped_allreduce_async(
        tensors, tensors, name, op, prescale_factor, postscale_factor, process_set
    )


def grouped_allreduce(
    tensors,
    average=None,
    name=None,
    compression=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    """Reduces every tensor of the list, as one fused operation per dtype; returns new tensors."""
    from hoop.torch.compression import Compression

    compression = compression or Compression.none
    op = _reduce_op(op, average, "grouped_allreduce")
    compressed = [compression.compress(t) for t in tensors]
    outputs = synchronize(
        grouped_allreduce_async(
            [c for c, _ in compressed],
            name=name,
            op=op,
            prescale_factor=prescale_factor,
            postscale_factor=postscale_factor,
            process_set=process_set,
        )
    )
    return [compression.decompress(o, ctx) for o, (_, ctx) in zip(outputs, compressed)]


def grouped_allreduce_(
    tensors,
    average=None,
    name=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    process_set=global_process_set,
):
    return synchronize(
        grouped_allreduce_async_(
            tensors, average, name, op, prescale_factor, postscale_factor, process_set
        )
    )


# --- allgather ------------------------------------------------------------------------------------


def allgather_async(tensor, name=None, process_set=global_process_set):
    """Starts gathering every rank's tensor, concatenated along the first dimension (whose length
    may differ between ranks; the other dimensions must match)."""
    hoop_dtype(tensor, "allgather")
    runner = runner_for(process_set, "allgather", _get_runner)
    future = runner.allgather(_auto_name("allgather", name), tensor)
    return _register(future, None, tensor)


class _AllgatherFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, name, process_set):
        ctx.rows = tensor.shape[0] if tensor.dim() > 0 else 1
        ctx.process_set = process_set
        return synchronize(allgather_async(tensor, name, process_set))

    @staticmethod
    def backward(ctx, grad_output):
        # Every rank's gradient for its own rows is the sum over ranks of those rows' gradients.
        summed = allreduce(grad_output.contiguous(), op=Sum, process_set=ctx.process_set)
        rows = runner_for(ctx.process_set, "allgather", _get_runner).gather_counts(ctx.rows)
        start = sum(rows[: set_rank(ctx.process_set)])
        return summed[start : start + ctx.rows], None, None


def allgather(tensor, name=None, process_set=global_process_set):
    """Every rank's tensor concatenated along dimension 0, in rank order; differentiable."""
    return _AllgatherFunction.apply(tensor, name, process_set)


# --- broadcast ------------------------------------------------------------------------------------


def _check_root(root_rank, kind, process_set):
    size = set_size(process_set)
    if not isinstance(root_rank, int) or not 0 <= root_rank < size:
        raise error("hoop.torch.{}: root_rank {} is not a rank of {}".format(kind, root_rank, size))


def broadcast_async_(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts copying root_rank's tensor into tensor on every rank."""
    hoop_dtype(tensor, "broadcast")
    runner = runner_for(process_set, "broadcast", _get_runner)
    _check_root(root_rank, "broadcast", process_set)
    future = runner.broadcast(_auto_name("broadcast", name), tensor, root_rank)
    return _register(future, lambda _: tensor, tensor)


def broadcast_async(tensor, root_rank, name=None, process_set=global_process_set):
    """Starts a broadcast into a copy of tensor; synchronize(handle) returns the copy."""
    hoop_dtype(tensor, "broadcast")
    return broadcast_async_(tensor.clone(), root_rank, name, process_set)


class _BroadcastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, root_rank, name, process_set):
        ctx.root_rank = root_rank
        ctx.process_set = process_set
        return synchronize(broadcast_async(tensor, root_rank, name, process_set))

    @staticmethod
    def backward(ctx, grad_output):
        summed = allreduce(grad_output.contiguous(), op=Sum, process_set=ctx.process_set)
        if set_rank(ctx.process_set) != ctx.root_rank:
            summed = summed * 0
        return summed, None, None, None


def broadcast(tensor, root_rank, name=None, process_set=global_process_set):
    """root_rank's tensor, as a new tensor on every rank; differentiable."""
    return _BroadcastFunction.apply(tensor, root_rank, name, process_set)


def broadcast_(tensor, root_rank, name=None, process_set=global_process_set):
    """Copies root_rank's tensor into tensor on every rank and returns it."""
    return synchronize(broadcast_async_(tensor, root_rank, name, process_set))


# --- alltoall -------------------------------------------------------------------------------------


def alltoall_async(tensor, splits=None, name=None, process_set=global_process_set):
    """Starts an all-to-all: the first dimension is cut into size() pieces (splits[j] rows go to
    rank j; equal pieces without splits), and the pieces received are concatenated in rank order.
    synchronize(handle) returns (output, received_splits)."""
    kind = "alltoall"
    hoop_dtype(tensor, kind)
    runner = runner_for(process_set, kind, _get_runner)
    size = set_size(process_set)
    rows = tensor.shape[0] if tensor.dim() > 0 else 0
    name = _auto_name(kind, name)
    if splits is None:
        if rows % size != 0:
            raise error(
                "hoop.torch.alltoall: {} rows do not split evenly over {} ranks; pass splits".format(
                    rows, size
                )
            )
        # Equal pieces: straight into the output, no count exchange.
        output = torch.empty_like(tensor, memory_format=torch.contiguous_format)
        future = runner.alltoall(name, tensor, output, tensor.numel() // size)
        received = torch.full((size,), rows // size, dtype=torch.int64)
        return _register(future, lambda _: (output, received), (tensor, output))
    splits = [int(s) for s in (splits.tolist() if torch.is_tensor(splits) else splits)]
    if len(splits) != size or any(s < 0 for s in splits) or sum(splits) != rows:
        raise error(
            "hoop.torch.alltoall: splits {} must be {} non-negative counts summing to the {} "
            "rows".format(splits, size, rows)
        )
    future = runner.alltoallv(name, tensor, splits)
    return _register(future, None, tensor)


def alltoall(tensor, splits=None, name=None, process_set=global_process_set):
    """Returns (output, received_splits) when splits is given, else output alone, like Horovod."""
    output, received = synchronize(alltoall_async(tensor, splits, name, process_set))
    return (output, received) if splits is not None else output


# --- reducescatter --------------------------------------------------------------------------------


def reducescatter_async(tensor, name=None, op=Average, process_set=global_process_set):
    """Starts a reduce-scatter: tensor is reduced over ranks and rank r keeps the r-th piece of
    its first dimension (pieces as equal as possible, the first ranks take one extra row)."""
    kind = "reducescatter"
    op = _reduce_op(op, None, kind)
    hoop_dtype(tensor, kind)
    if tensor.dim() == 0:
        raise error("hoop.torch.reducescatter: the tensor needs at least one dimension")
    runner = runner_for(process_set, kind, _get_runner)
    size, rank = set_size(process_set), set_rank(process_set)
    rows = tensor.shape[0]
    pieces = [rows // size + (1 if r < rows % size else 0) for r in range(size)]
    longest = pieces[0]
    row_shape = tuple(tensor.shape[1:])
    row_elements = 1
    for d in row_shape:
        row_elements *= d
    if rows % size == 0:
        send = tensor
    else:
        send = torch.zeros((size * longest,) + row_shape, dtype=tensor.dtype)
        offset = 0
        for r, p in enumerate(pieces):
            send[r * longest : r * longest + p] = tensor[offset : offset + p]
            offset += p
    recv = torch.empty((longest,) + row_shape, dtype=tensor.dtype)
    future = runner.reducescatter(
        _auto_name(kind, name), send, recv, longest * row_elements, _HOOP_OPS[op]
    )
    return _register(future, lambda _: recv[: pieces[rank]], (tensor, send, recv))


def reducescatter(tensor, name=None, op=Average, process_set=global_process_set):
    return synchronize(reducescatter_async(tensor, name, op, process_set))


# --- barrier and join -----------------------------------------------------------------------------


def barrier(process_set=global_process_set):
    """Returns once every rank (of the set) has called barrier()."""
    runner_for(process_set, "barrier", _get_runner).barrier(_auto_name("barrier", None)).result()


def join():
    """This rank has no more data; returns (after every rank joined) the last rank to join."""
    return _get_runner().join()
