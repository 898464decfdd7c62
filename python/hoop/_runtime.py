"""The process-wide hoop communicator behind hoop.init() and everything built on it."""

import atexit
import os
import threading

from hoop import _hoop
from hoop._hoop import HoopError

_lock = threading.Lock()
_communicator = None
# Called with no arguments just before the communicator is destroyed (hoop.torch stops its
# collective runner there), newest first.
_shutdown_callbacks = []


def error(message, code=4):
    """A HoopError raised from Python, shaped like the ones the C++ side raises."""
    exception = HoopError(message)
    exception.code = code
    exception.code_name = {4: "invalid argument", 5: "invalid usage"}.get(code, "error")
    return exception


# Variables by which hooprun, mpirun, srun and torchrun give a process its rank.
_LAUNCHER_RANK_VARIABLES = ("HOOP_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "RANK")


def init():
    """Joins the job the launcher describes (hooprun, mpirun, srun or torchrun variables).

    Without any launcher, the process is a job of one rank (as `python train.py` is under
    Horovod). Collective: every rank calls it. A second call while initialised does nothing.
    """
    global _communicator
    with _lock:
        if _communicator is not None:
            return
        if any(v in os.environ for v in _LAUNCHER_RANK_VARIABLES):
            _communicator = _hoop.Communicator.from_environment()
        else:
            unique_id = _hoop.Communicator.create_unique_id()
            _communicator = _hoop.Communicator.from_unique_id(1, unique_id, 0)


def shutdown():
    """Stops background work and frees the communicator. Calling it again does nothing."""
    global _communicator
    with _lock:
        if _communicator is None:
            return
        callbacks = list(reversed(_shutdown_callbacks))
        _shutdown_callbacks.clear()
        communicator = _communicator
        _communicator = None
    for callback in callbacks:
        callback()
    communicator.destroy()


def on_shutdown(callback):
    with _lock:
        _shutdown_callbacks.append(callback)


def is_initialized():
    return _communicator is not None


def communicator():
    """The live communicator; raises HoopError when hoop.init() has not been called."""
    comm = _communicator
    if comm is None:
        raise error("hoop is not initialized: call hoop.init() first", code=5)
    return comm


def size():
    return communicator().size()


def rank():
    return communicator().rank()


def local_rank():
    return communicator().local_rank()


def local_size():
    return communicator().local_size()


def cross_rank():
    return communicator().cross_rank()


def cross_size():
    return communicator().cross_size()


atexit.register(shutdown)
