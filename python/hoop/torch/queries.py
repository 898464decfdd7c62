"""Horovod's build and runtime queries, answered for hoop: Horovod scripts branch on them.

hoop is its own controller and transport: it is neither MPI, Gloo, NCCL, oneCCL nor DDL, so the
queries about those say no (a script then takes its generic path). Those that Horovod answers
only after init() raise the same way here.
"""

from hoop import _runtime


def _initialised(call):
    _runtime.communicator()  # raises "hoop is not initialized" naming nothing else
    return call


def mpi_built():
    return False


def mpi_enabled():
    return _initialised(False)


def mpi_threads_supported():
    """False: hoop has no MPI underneath (Horovod answers for its MPI library)."""
    return _initialised(False)


def gloo_built():
    return False


def gloo_enabled():
    return _initialised(False)


def nccl_built():
    """0, as Horovod answers without NCCL: hoop's collectives do not go through NCCL."""
    return 0


def ddl_built():
    return False


def ccl_built():
    return False


def cuda_built():
    return False


def rocm_built():
    return False


def is_homogeneous():
    """Whether every host runs the same number of ranks."""
    comm = _runtime.communicator()
    return comm.size() == comm.local_size() * comm.cross_size()
