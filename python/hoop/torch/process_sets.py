"""Horovod's process sets: collectives among some of the ranks, each set on a communicator of its
own split from the job's (hoopCommSplit), with its own collective runner.

`add_process_set(ranks)` is collective over the whole job, as in Horovod: every rank calls it
with the same ranks, in the same order as the other add_process_set calls, with no collective of
its own in flight; the ranks outside the set take part in the split and get a set they cannot run
collectives on (a call there raises, naming the call, the rank and the set). The job's training
engine cycles on the job's communicator from its own thread, so the split would race it: the
engine is stopped first (every rank stops it at this same point, which also lines the ranks up)
and starts again at the next collective. `global_process_set` is the whole job.
"""

import threading

from hoop import _runtime
from hoop._runtime import error

_lock = threading.Lock()
_next_id = [1]
_registered = {}


class ProcessSet:
    """Some of the job's ranks (sorted); `None` as ranks is the whole job."""

    def __init__(self, ranks=None):
        self.ranks = None if ranks is None else sorted(int(r) for r in ranks)
        if self.ranks is not None and len(set(self.ranks)) != len(self.ranks):
            raise ValueError("hoop.torch.ProcessSet: ranks {} repeat a rank".format(ranks))
        self.process_set_id = 0 if ranks is None else None
        self._comm = None
        self._runner = None

    def _is_global(self):
        return self.ranks is None

    def included(self):
        """Whether this rank belongs to the set."""
        return self._is_global() or _runtime.rank() in self.ranks

    def size(self):
        return _runtime.size() if self._is_global() else len(self.ranks)

    def rank(self):
        """This rank's place in the set (-1 outside it)."""
        if self._is_global():
            return _runtime.rank()
        return self.ranks.index(_runtime.rank()) if self.included() else -1

    def __repr__(self):
        return "ProcessSet(id={}, ranks={})".format(
            self.process_set_id, "all" if self._is_global() else self.ranks
        )


global_process_set = ProcessSet()


def add_process_set(process_set):
    """Registers a set (a ProcessSet or a list of ranks) and returns it. Collective: every rank of
    the job calls it with the same ranks."""
    if not isinstance(process_set, ProcessSet):
        process_set = ProcessSet(process_set)
    if process_set._is_global() or process_set.process_set_id is not None:
        raise error("hoop.torch.add_process_set: {} is registered already".format(process_set))
    size = _runtime.size()
    if any(not 0 <= r < size for r in process_set.ranks) or not process_set.ranks:
        raise error(
            "hoop.torch.add_process_set: ranks {} are not a non-empty set of ranks of {}".format(
                process_set.ranks, size
            )
        )
    from hoop.torch import mpi_ops

    mpi_ops._stop_runner()
    me = _runtime.rank()
    color = 0 if me in process_set.ranks else -1
    key = process_set.ranks.index(me) if color == 0 else 0
    process_set._comm = _runtime.communicator().split(color, key)
    with _lock:
        process_set.process_set_id = _next_id[0]
        _next_id[0] += 1
        _registered[process_set.process_set_id] = process_set
    _runtime.on_shutdown(lambda: _release(process_set))
    return process_set


def remove_process_set(process_set):
    """Frees the set's communicator on this rank; later calls on it raise."""
    with _lock:
        if _registered.pop(process_set.process_set_id, None) is None:
            return False
    _release(process_set)
    return True


def _release(process_set):
    runner, process_set._runner = process_set._runner, None
    if runner is not None:
        runner.close()
    comm, process_set._comm = process_set._comm, None
    if comm is not None:
        comm.destroy()
    process_set.process_set_id = None


def runner_for(process_set, kind, global_runner):
    """The runner that serves `kind` on process_set; raises when this rank cannot use the set."""
    if process_set is None or process_set._is_global():
        return global_runner()
    if process_set.process_set_id is None:
        raise error(
            "hoop.torch.{}: {} is not registered (call hoop.torch.add_process_set first)".format(
                kind, process_set
            ),
            code=5,
        )
    if not process_set.included():
        raise error(
            "hoop.torch.{}: rank {} is not in process set {} (ranks {})".format(
                kind, _runtime.rank(), process_set.process_set_id, process_set.ranks
            ),
            code=5,
        )
    with _lock:
        if process_set._runner is None:
            from hoop.torch._engine import make_runner

            process_set._runner = make_runner(process_set._comm)
        return process_set._runner


def set_size(process_set):
    return _runtime.size() if process_set is None else process_set.size()


def set_rank(process_set):
    return _runtime.rank() if process_set is None else process_set.rank()
