"""hoop for TensorFlow, with horovod.tensorflow's API: `import hoop.tensorflow as hvd` in a
Horovod script.

The collectives are TensorFlow ops (eager and inside tf.function) run by hoop's training engine;
`hoop.tensorflow.keras` has the Keras 3 optimizer wrapper and callbacks. docs/tensorflow.md has
the details, and what tf.distribute's MultiWorkerMirroredStrategy cannot do.
"""

import hoop
from hoop import HoopError, _reduce_ops
from hoop._runtime import (
    cross_rank,
    cross_size,
    local_rank,
    local_size,
    rank,
    size,
)
from hoop.tensorflow.compression import Compression
from hoop.tensorflow.functions import (
    allgather_object,
    broadcast_global_variables,
    broadcast_object,
    broadcast_variables,
)
from hoop.tensorflow.gradient_tape import DistributedGradientTape
from hoop.tensorflow.mpi_ops import (
    Adasum,
    Average,
    Max,
    Min,
    Product,
    Sum,
    allgather,
    allreduce,
    alltoall,
    broadcast,
    engine_stats,
    grouped_allreduce,
    init,
    is_initialized,
    reducescatter,
    shutdown,
)
from hoop.tensorflow.v1_training import BroadcastGlobalVariablesHook, DistributedOptimizer


def mpi_threads_supported():
    """hoop's collectives may be called from several threads."""
    return True


# What hoop.tensorflow.keras exports too, as horovod.tensorflow and its keras module do.
_SHARED_API = (
    hoop.__all__
    + _reduce_ops.NAMES
    + [
        "allreduce",
        "grouped_allreduce",
        "allgather",
        "broadcast",
        "alltoall",
        "reducescatter",
        "broadcast_variables",
        "broadcast_object",
        "allgather_object",
        "Compression",
    ]
)
__all__ = _SHARED_API + [
    "broadcast_global_variables",
    "DistributedGradientTape",
    "DistributedOptimizer",
    "BroadcastGlobalVariablesHook",
    "engine_stats",
    "mpi_threads_supported",
]
