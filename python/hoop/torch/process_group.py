"""The torch.distributed backend "hoop".

How it plugs into torch 1.13: `torch.distributed.Backend.register_backend("hoop", creator)`
makes `init_process_group("hoop")` call `creator(store, rank, size, timeout)`, which returns a
Python subclass of `torch._C._distributed_c10d.ProcessGroup`. The C++ ProcessGroup class has a
pybind11 trampoline, so calls that start in C++ (DistributedDataParallel's reducer, its
parameter checks, `_broadcast_coalesced`) reach the Python methods below too.

Every collective is asynchronous: the process group's communicator is a non-blocking one, so a
method checks its arguments, queues the call on hoop's own thread and returns at once. The call's
ticket goes to a completer thread, which waits (without the GIL) for hoop to say that call has
ended and then completes the Work's future - DDP's gradient buckets are reduced by hoop while
autograd computes the next ones.

Which Work a call returns depends on who called, because torch 1.13 offers no one Work that
serves both. A caller in C++ (DDP's reducer, `_broadcast_coalesced`, the parameter checks) calls
the C++ class's wait() and getFuture(): a Work subclassed in Python would block there forever, so
it gets torch's future-backed Work (`_create_work_from_future`), and reads failures from the
future's value, which raises hoop's message. That Work's own wait() neither raises a failure nor
takes a finite timeout, so torch.distributed's Python functions (`dist.all_reduce` and the rest,
which call the process group from distributed_c10d.py and then wait() in Python) get `_Work`
instead: its wait(timeout) waits at most that long and raises hoop's message (the operation, the
rank and the peer) when the call failed. Either way each call is bounded by the process group's
timeout, which becomes hoop's per-operation timeout, so no wait hangs: a dead peer or a missing
call fails the call within it. Tensors stay referenced until their call ended, and a
non-contiguous tensor is written back from its contiguous copy before the future completes.

Rendezvous uses the store torch gives us: rank 0 creates a hoop unique id and publishes it, the
others read it, and all join. This communicator is separate from the one behind hoop.init() /
hoop.torch, so both can be used in one program. `dist.new_group(ranks)` reaches this creator on
the member ranks only (torch returns before it elsewhere), with a store of the group's own, so a
group rendezvouses the same way among its members.
"""

import collections
import os
import sys
import threading
import time
import weakref
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import ProcessGroup, ReduceOp, Work, _create_work_from_future

from hoop import _hoop
from hoop._hoop import HoopError
from hoop._runtime import error
from hoop.torch._types import hoop_dtype

BACKEND_NAME = "hoop"
_UNIQUE_ID_KEY = "hoop_unique_id"
# How long the completer waits in one go before it looks whether it should stop.
_WAIT_SLICE_MS = 200
# Beyond hoop's own per-operation timeout, before the completer gives up on a call itself.
_GRACE_SECONDS = 15
# How long closing a process group lets its calls in flight end before it aborts them, unless
# HOOP_TORCH_CLOSE_TIMEOUT says otherwise.
_CLOSE_SECONDS = 10.0

_OPS = {
    ReduceOp.SUM: _hoop.op.sum,
    ReduceOp.PRODUCT: _hoop.op.prod,
    ReduceOp.MIN: _hoop.op.min,
    ReduceOp.MAX: _hoop.op.max,
}
if hasattr(ReduceOp, "AVG"):
    _OPS[ReduceOp.AVG] = _hoop.op.avg


def _hoop_op(reduce_op, operation):
    op = _OPS.get(reduce_op)
    if op is None:
        raise error("hoop backend {}: reduce op {} is not supported".format(operation, reduce_op))
    return op


class _Contiguous:
    """A contiguous stand-in for a tensor; write_back() copies it into the original if needed."""

    def __init__(self, tensor, operation):
        self.original = tensor
        self.tensor = tensor if tensor.is_contiguous() else tensor.contiguous()
        self.dtype = hoop_dtype(self.tensor, operation)

    def write_back(self):
        if self.tensor is not self.original:
            self.original.copy_(self.tensor)

    @property
    def ptr(self):
        return self.tensor.data_ptr()

    @property
    def numel(self):
        return self.tensor.numel()


class _Call:
    """One queued call: its ticket, its future, what completes it and what it keeps alive."""

    __slots__ = ("ticket", "future", "ended", "result", "finish", "keep", "operation")

    def __init__(self, ticket, result, finish, keep, operation):
        self.ticket = ticket
        self.future = torch.futures.Future()
        self.ended = threading.Event()  # set once the future holds a result or a failure
        self.result = result
        self.finish = finish
        self.keep = keep
        self.operation = operation


class _Completer:
    """Completes each call's future once hoop's thread has run it, in the order they were queued.

    Its thread spends its time in wait_ticket, which releases the GIL. Calls end in the order
    they were issued, so it waits for the oldest first.
    """

    def __init__(self, comm, rank, timeout_seconds):
        self._comm = comm
        self._rank = rank
        self._timeout_seconds = timeout_seconds
        self._calls = collections.deque()
        self._changed = threading.Condition()
        self._stopping = False
        self.aborted = False  # set by _close before it aborts the calls still in flight
        self._thread = threading.Thread(target=self._run, name="hoop-completer", daemon=True)
        self._thread.start()

    def add(self, call):
        with self._changed:
            if self._stopping:
                raise error("hoop backend {}: the process group was shut down".format(call.operation))
            self._calls.append(call)
            self._changed.notify()

    def stop(self, within=None):
        """Completes what is queued and ends the thread; False if that took longer than
        `within` seconds (the thread then still runs)."""
        with self._changed:
            self._stopping = True
            self._changed.notify()
        if self._thread is threading.current_thread():
            return True
        self._thread.join(within)
        return not self._thread.is_alive()

    def _next(self):
        with self._changed:
            while not self._calls and not self._stopping:
                self._changed.wait()
            return self._calls.popleft() if self._calls else None

    def _run(self):
        while True:
            call = self._next()
            if call is None:
                return
            try:
                self._wait(call)
                if call.finish is not None:
                    call.finish()
            except Exception as failure:  # noqa: BLE001 - every failure goes to the future
                call.future.set_exception(failure)
            else:
                call.future.set_result(call.result)
            call.ended.set()
            call.keep = None

    def _wait(self, call):
        deadline = time.monotonic() + self._timeout_seconds + _GRACE_SECONDS
        while not self._ended(call):
            if self._stopping and not self._comm.alive():
                raise error(
                    "hoop backend {}: rank {}: the process group was shut down before the "
                    "call ended".format(call.operation, self._rank)
                )
            if time.monotonic() > deadline:
                raise error(
                    "hoop backend {}: rank {}: the call did not end within the process group's "
                    "timeout of {} s".format(call.operation, self._rank, self._timeout_seconds)
                )

    def _ended(self, call):
        try:
            return self._comm.wait_ticket(call.ticket, _WAIT_SLICE_MS)
        except HoopError as failure:
            if not self.aborted:
                raise
            # Closing aborted the call: say which call and why, beside what hoop said.
            raise error(
                "hoop backend {}: rank {}: the process group was closed while the call was in "
                "flight, and the call was aborted ({})".format(call.operation, self._rank, failure)
            ) from failure


class _Work(Work):
    """The Work torch.distributed's Python functions get: waits with a timeout, raises failures."""

    def __init__(self, call, rank):
        super().__init__()
        self._call = call
        self._rank = rank

    def wait(self, timeout=timedelta(0)):
        """True once the call ended; raises its failure, or HoopError when `timeout` (0: none)
        passed first (the call itself goes on, bounded by the process group's timeout)."""
        seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
        if not self._call.ended.wait(seconds if seconds > 0 else None):
            raise error(
                "hoop backend {}: rank {}: wait() timed out after {} s; the call has not "
                "ended".format(self._call.operation, self._rank, seconds),
                code=5,
            )
        self._call.future.wait()  # raises the call's failure
        return True

    def is_completed(self):
        return self._call.ended.is_set()

    def is_success(self):
        if not self._call.ended.is_set():
            return False
        try:
            self._call.future.wait()
        except Exception:  # noqa: BLE001 - any failure means "not a success"
            return False
        return True

    def exception(self):
        try:
            self._call.future.wait()
        except Exception as failure:  # noqa: BLE001
            return failure
        return None

    def get_future(self):
        return self._call.future

    def result(self):
        self.wait()
        return self._call.result

    def synchronize(self):
        pass


_TORCH_DISTRIBUTED_FILE = "distributed_c10d.py"
_THIS_FILE = os.path.abspath(__file__)


def _called_from_torch_python():
    """Whether the nearest caller outside this file is torch.distributed's Python layer (which
    waits in Python), rather than C++ calling through the ProcessGroup trampoline."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) == _THIS_FILE:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.endswith(_TORCH_DISTRIBUTED_FILE)


def _close_seconds():
    """HOOP_TORCH_CLOSE_TIMEOUT (seconds, may be fractional), or the default."""
    text = os.environ.get("HOOP_TORCH_CLOSE_TIMEOUT")
    if text is None:
        return _CLOSE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise error(
            "HOOP_TORCH_CLOSE_TIMEOUT={!r}: expected a non-negative number of seconds".format(text)
        )
    return seconds


def _close(completer, comm, within):
    # Calls still in flight after a while (a peer that hangs) are aborted rather than waited
    # for: closing, at exit too, must not hang. Their futures then fail.
    if not completer.stop(within):
        completer.aborted = True
        comm.abort()
        completer.stop()
    comm.destroy()


class ProcessGroupHoop(ProcessGroup):
    def __init__(self, store, rank, size, timeout):
        super().__init__(rank, size)
        close_seconds = _close_seconds()  # a bad value fails before this rank joins
        if rank == 0:
            unique_id = _hoop.Communicator.create_unique_id()
            store.set(_UNIQUE_ID_KEY, unique_id)
        else:
            unique_id = store.get(_UNIQUE_ID_KEY)
        timeout_seconds = max(1, int(timeout.total_seconds()))
        self._comm = _hoop.Communicator.from_unique_id_config(
            size, unique_id, rank, blocking=False, timeout_seconds=timeout_seconds
        )
        self._rank = rank
        self._size = size
        # Issuing and handing the ticket to the completer happen together, so the completer's
        # queue is in ticket order whichever thread (main, autograd) issues.
        self._issuing = threading.Lock()
        self._completer = _Completer(self._comm, rank, timeout_seconds)
        # torch drops a process group without telling it: end its calls and free the
        # communicator when it goes, or at exit.
        self._close = weakref.finalize(self, _close, self._completer, self._comm, close_seconds)

    def getBackendName(self):
        return BACKEND_NAME

    def _get_backend_name(self):
        return BACKEND_NAME

    def shutdown(self):
        self._close()

    def _issue(self, operation, start, result, finish=None, keep=None):
        """Queues a call (start() issues it on hoop and returns its ticket); returns its Work."""
        with self._issuing:
            call = _Call(start(), result, finish, keep, operation)
            self._completer.add(call)
        if _called_from_torch_python():
            return _Work(call, self._rank)
        return _create_work_from_future(call.future)

    @staticmethod
    def _writer(*stand_ins):
        def finish():
            for c in stand_ins:
                c.write_back()

        return finish

    # --- collectives -----------------------------------------------------------------------------

    def allreduce(self, tensors, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "allreduce")
        cs = [_Contiguous(t, "allreduce") for t in tensors]

        def start():
            ticket = 0
            for c in cs:
                ticket = self._comm.allreduce(c.ptr, c.ptr, c.numel, c.dtype, op)
            return ticket

        return self._issue("allreduce", start, tensors, self._writer(*cs), cs)

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors, opts):
        root = opts.rootRank
        cs = [_Contiguous(t, "broadcast") for t in tensors]

        def start():
            ticket = 0
            for c in cs:
                ticket = self._comm.broadcast(c.ptr, c.ptr, c.numel, c.dtype, root)
            return ticket

        return self._issue("broadcast", start, tensors, self._writer(*cs), cs)

    def reduce(self, tensors, opts):
        op = _hoop_op(opts.reduceOp, "reduce")
        root = opts.rootRank
        cs = [_Contiguous(t, "reduce") for t in tensors]

        def start():
            ticket = 0
            for c in cs:
                ticket = self._comm.reduce(c.ptr, c.ptr, c.numel, c.dtype, op, root)
            return ticket

        return self._issue("reduce", start, tensors, self._writer(*cs), cs)

    def _allgather_call(self, output, tensor):
        """(start, stand-ins) of one allgather of tensor into the flat output."""
        c = _Contiguous(tensor, "allgather")
        if output.numel() != c.numel * self._size:
            raise error(
                "hoop backend allgather: output holds {} elements, expected {} x {}".format(
                    output.numel(), self._size, c.numel
                )
            )
        out = _Contiguous(output, "allgather")
        return (lambda: self._comm.allgather(c.ptr, out.ptr, c.numel, c.dtype)), (c, out)

    def allgather(self, output_tensors, input_tensors, opts=None):
        starts, keep, flats = [], [], []
        for outputs, tensor in zip(output_tensors, input_tensors):
            flat = torch.empty((self._size,) + tuple(tensor.shape), dtype=tensor.dtype)
            start, stand_ins = self._allgather_call(flat, tensor)
            starts.append(start)
            keep.append(stand_ins)
            flats.append((flat, outputs))

        def finish():
            for flat, outputs in flats:
                for r, out in enumerate(outputs):
                    out.copy_(flat[r])

        return self._issue("allgather", lambda: [s() for s in starts][-1] if starts else 0,
                           output_tensors, finish, keep)

    def _allgather_base(self, output, tensor, opts=None):
        start, (c, out) = self._allgather_call(output, tensor)
        return self._issue("allgather", start, [output], out.write_back, (c, out))

    def _reduce_scatter_call(self, output, flat_input, op):
        out = _Contiguous(output, "reduce_scatter")
        c = _Contiguous(flat_input, "reduce_scatter")
        if c.numel != out.numel * self._size:
            raise error(
                "hoop backend reduce_scatter: input holds {} elements, expected {} x {}".format(
                    c.numel, self._size, out.numel
                )
            )
        return (lambda: self._comm.reduce_scatter(c.ptr, out.ptr, out.numel, c.dtype, op)), (
            c,
            out,
        )

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "reduce_scatter")
        starts, keep = [], []
        for output, inputs in zip(output_tensors, input_tensors):
            flat = torch.cat([t.reshape(-1) for t in inputs])
            start, stand_ins = self._reduce_scatter_call(output, flat, op)
            starts.append(start)
            keep.append(stand_ins)

        def finish():
            for _, out in keep:
                out.write_back()

        return self._issue("reduce_scatter", lambda: [s() for s in starts][-1] if starts else 0,
                           output_tensors, finish, keep)

    def _reduce_scatter_base(self, output, tensor, opts=None):
        op = _hoop_op(opts.reduceOp if opts is not None else ReduceOp.SUM, "reduce_scatter")
        start, (c, out) = self._reduce_scatter_call(output, tensor, op)
        return self._issue("reduce_scatter", start, [output], out.write_back, (c, out))

    def alltoall_base(self, output, tensor, output_split_sizes, input_split_sizes, opts=None):
        if not output_split_sizes and not input_split_sizes:
            c = _Contiguous(tensor, "alltoall")
            out = _Contiguous(output, "alltoall")
            if c.numel % self._size or c.numel != out.numel:
                raise error(
                    "hoop backend alltoall: {} input and {} output elements do not split "
                    "into {} equal blocks".format(c.numel, out.numel, self._size)
                )
            return self._issue(
                "alltoall",
                lambda: self._comm.alltoall(c.ptr, out.ptr, c.numel // self._size, c.dtype),
                [output],
                out.write_back,
                (c, out),
            )
        inputs = self._split_rows(tensor, input_split_sizes)
        outputs = self._split_rows(output, output_split_sizes)
        return self._exchange(outputs, inputs, [output])

    def alltoall(self, output_tensors, input_tensors, opts=None):
        return self._exchange(list(output_tensors), list(input_tensors), output_tensors)

    def _split_rows(self, tensor, split_sizes):
        if not split_sizes:
            split_sizes = [tensor.shape[0] // self._size] * self._size
        return list(torch.split(tensor, list(split_sizes)))

    def _exchange(self, outputs, inputs, result):
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

        def finish():
            for _, target, staging in keep:
                if staging is not target:
                    target.copy_(staging)

        return self._issue(
            "alltoall", lambda: self._comm.send_recv(sends, recvs), result, finish, keep
        )

    def barrier(self, opts=None):
        return self._issue("barrier", self._comm.barrier, [])

    # --- point to point ---------------------------------------------------------------------------

    def send(self, tensors, dst_rank, tag=0):
        cs = [_Contiguous(t, "send") for t in tensors]
        transfers = [(c.ptr, c.numel, c.dtype, dst_rank) for c in cs]
        return self._issue("send", lambda: self._comm.send_recv(transfers, []), tensors, None, cs)

    def recv(self, tensors, src_rank, tag=0):
        cs = [_Contiguous(t, "recv") for t in tensors]
        transfers = [(c.ptr, c.numel, c.dtype, src_rank) for c in cs]
        return self._issue(
            "recv", lambda: self._comm.send_recv([], transfers), tensors, self._writer(*cs), cs
        )


def _create_process_group(store, rank, size, timeout=timedelta(minutes=30)):
    return ProcessGroupHoop(store, rank, size, timeout)


def register():
    """Makes "hoop" a torch.distributed backend name (done when hoop.torch is imported)."""
    if not hasattr(dist.Backend, BACKEND_NAME.upper()):
        dist.Backend.register_backend(BACKEND_NAME, _create_process_group)
