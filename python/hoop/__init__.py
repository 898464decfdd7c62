"""hoop: collective communication for Python programs.

    import hoop
    hoop.init()          # rank and size from hooprun, mpirun, srun or torchrun
    print(hoop.rank(), hoop.size())
    hoop.shutdown()

`hoop.torch` builds Horovod's PyTorch API on top of this and registers the torch.distributed
backend "hoop". Failures raise `hoop.HoopError`, whose message is hoop's own (it names the
operation, the rank and the peer) and whose `code` is the hoopResult_t.
"""

from hoop import _hoop
from hoop._hoop import HoopError
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

__version__ = "{}.{}.{}".format(
    _hoop.VERSION_CODE // 10000, _hoop.VERSION_CODE // 100 % 100, _hoop.VERSION_CODE % 100
)

__all__ = [
    "HoopError",
    "init",
    "shutdown",
    "is_initialized",
    "size",
    "rank",
    "local_rank",
    "local_size",
    "cross_rank",
    "cross_size",
]
