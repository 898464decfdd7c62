"""hoop for PyTorch, with horovod.torch's API: `import hoop.torch as hvd` in a Horovod script.

Importing it also registers the torch.distributed backend "hoop"
(`torch.distributed.init_process_group("hoop")`). TensorFlow programs use hoop.tensorflow;
hvd.elastic is not provided (a job's ranks are fixed).
"""

from hoop import HoopError
from hoop._runtime import (
    cross_rank,
    cross_size,
    init,
    is_initialized,
    local_rank,
    local_size,
    rank,
    shutdown,
    size,
)
from hoop.torch.compression import Compression
from hoop.torch.functions import (
    allgather_object,
    broadcast_object,
    broadcast_optimizer_state,
    broadcast_parameters,
)
from hoop.torch.mpi_ops import (
    Adasum,
    Average,
    Max,
    Min,
    Product,
    Sum,
    allgather,
    allgather_async,
    allreduce,
    allreduce_,
    allreduce_async,
    allreduce_async_,
    alltoall,
    alltoall_async,
    barrier,
    broadcast,
    broadcast_,
    broadcast_async,
    broadcast_async_,
    grouped_allreduce,
    grouped_allreduce_,
    grouped_allreduce_async,
    grouped_allreduce_async_,
    join,
    poll,
    reducescatter,
    reducescatter_async,
    synchronize,
)
from hoop.torch.optimizer import DistributedOptimizer
from hoop.torch.process_sets import (
    ProcessSet,
    add_process_set,
    global_process_set,
    remove_process_set,
)
from hoop.torch.sync_batch_norm import SyncBatchNorm
from hoop.torch.queries import (
    ccl_built,
    cuda_built,
    ddl_built,
    gloo_built,
    gloo_enabled,
    is_homogeneous,
    mpi_built,
    mpi_enabled,
    mpi_threads_supported,
    nccl_built,
    rocm_built,
)
from hoop.torch.timeline import start_timeline, stop_timeline
from hoop.torch.process_group import ProcessGroupHoop
from hoop.torch.process_group import register as _register_backend

_register_backend()
