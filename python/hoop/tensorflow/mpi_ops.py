"""hoop.tensorflow's collectives: TensorFlow ops with horovod.tensorflow's names and semantics.

Each collective is an op from hoop's op library (_hoop_tensorflow_ops.so, built against the
installed TensorFlow). Its kernel hands the tensor to hoop's training engine under a name and
completes when the engine is done, so the ops run eagerly and inside tf.function graphs alike,
and the ranks may reach them in different orders. Ranks match requests by name: `name=` when
given, otherwise the op's node name inside a graph (the same on every rank that traced the same
function) or, eagerly, one fixed name per kind of op (eager ops run one at a time, in program
order, so the same order on every rank matches them).
"""

import ctypes
import os
import threading

import tensorflow as tf

from hoop import _hoop, _runtime
from hoop._runtime import error

# Reduction operations, as horovod.tensorflow exports them (hoop._reduce_ops).
from hoop._reduce_ops import resolve_reduce_op
from hoop._reduce_ops import HOOP_OPS, Adasum, Average, Max, Min, Product, Sum  # noqa: F401

# The op attribute of the TensorFlow ops is an int.
_HOOP_OPS = {name: int(op) for name, op in HOOP_OPS.items()}

# The dtypes TensorFlow and hoop share; the ops' kernels are registered for exactly these.
SUPPORTED_DTYPES = (
    tf.int8,
    tf.uint8,
    tf.int32,
    tf.uint32,
    tf.int64,
    tf.uint64,
    tf.float16,
    tf.bfloat16,
    tf.float32,
    tf.float64,
)

_LIBRARY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_hoop_tensorflow_ops.so")
if not os.path.exists(_LIBRARY_PATH):
    raise ImportError(
        "hoop.tensorflow: {} is missing; build hoop with TensorFlow installed "
        "(HOOP_WITH_TENSORFLOW, docs/tensorflow.md)".format(_LIBRARY_PATH)
    )
_ops = tf.load_op_library(_LIBRARY_PATH)
_shim = ctypes.CDLL(_LIBRARY_PATH)
_shim.hoopTfStart.argtypes = [ctypes.c_size_t]
_shim.hoopTfStart.restype = ctypes.c_int
_shim.hoopTfStop.restype = ctypes.c_int
_shim.hoopTfLastError.restype = ctypes.c_char_p
_shim.hoopTfStats.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
_shim.hoopTfStats.restype = ctypes.c_size_t

_lock = threading.Lock()


def _check_shim(code, what):
    if code != 0:
        message = _shim.hoopTfLastError().decode("utf-8", "replace")
        raise error("hoop.tensorflow.{}: {}".format(what, message), code=code)


def init():
    """Joins the job the launcher describes and starts the engine behind the ops. Collective."""
    _runtime.init()
    with _lock:
        if not _shim.hoopTfRunning():
            _check_shim(_shim.hoopTfStart(_runtime.communicator().handle()), "init")
            _runtime.on_shutdown(_stop_engine)


def _stop_engine():
    _check_shim(_shim.hoopTfStop(), "shutdown")


def shutdown():
    """Stops the engine (collective) and frees the communicator. Calling it again does nothing."""
    _runtime.shutdown()


def is_initialized():
    return _runtime.is_initialized() and bool(_shim.hoopTfRunning())


def engine_stats():
    """The engine's counters: cycles, cache hits, collective calls, fused tensors, requests."""
    values = (ctypes.c_uint64 * 6)()
    written = _shim.hoopTfStats(values, 6)
    keys = ("cycles", "cache_hits", "collective_calls", "fused_tensors", "completed_requests",
            "failed_requests")
    return dict(zip(keys, list(values)[:written]))


def _require_init(kind):
    if not is_initialized():
        raise error(
            "hoop.tensorflow.{}: hoop is not initialized; call hoop.tensorflow.init() first".format(
                kind
            ),
            code=5,
        )


def _reduce_op(op, average, kind):
    return resolve_reduce_op(op, average, "hoop.tensorflow.{}".format(kind))


def _tensor_name(name):
    """The name ranks match the request by; '' lets the kernel use its node name."""
    if name is None:
        return ""
    return str(name)


def _dense(tensor):
    """A tensor from a tensor, variable, numpy value or IndexedSlices (made dense)."""
    return tf.convert_to_tensor(tensor)


def _check_dtype(tensor, kind):
    if tensor.dtype not in SUPPORTED_DTYPES:
        raise error(
            "hoop.tensorflow.{}: dtype {} is not one hoop reduces (supported: {})".format(
                kind, tensor.dtype.name, ", ".join(d.name for d in SUPPORTED_DTYPES)
            )
        )


def _check_scaling(tensor, prescale_factor, postscale_factor, kind):
    if (prescale_factor != 1.0 or postscale_factor != 1.0) and not tensor.dtype.is_floating:
        raise error(
            "hoop.tensorflow.{}: prescale/postscale factors need a floating-point tensor, "
            "got {}".format(kind, tensor.dtype.name)
        )


def allreduce(
    tensor,
    average=None,
    device_dense="",
    device_sparse="",
    compression=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    name=None,
):
    """The reduction of tensor over every rank (op Average by default), on every rank.

    Average, Sum, Min, Max and Product; prescale_factor multiplies each rank's input and
    postscale_factor the result (floating-point tensors only). IndexedSlices are reduced dense.
    """
    _require_init("allreduce")
    op = _reduce_op(op, average, "allreduce")
    tensor = _dense(tensor)
    _check_dtype(tensor, "allreduce")
    _check_scaling(tensor, prescale_factor, postscale_factor, "allreduce")
    context = None
    if compression is not None:
        tensor, context = compression.compress(tensor)
    result = _ops.hoop_allreduce(
        tensor,
        reduce_op=_HOOP_OPS[op],
        prescale_factor=float(prescale_factor),
        postscale_factor=float(postscale_factor),
        tensor_name=_tensor_name(name),
    )
    if compression is not None:
        result = compression.decompress(result, context)
    return result


def grouped_allreduce(
    tensors,
    average=None,
    device_dense="",
    device_sparse="",
    compression=None,
    op=None,
    prescale_factor=1.0,
    postscale_factor=1.0,
    name=None,
):
    """allreduce of a list of tensors, agreed on together and fused into as few calls as fit.

    Tensors of different dtypes form one group per dtype.
    """
    _require_init("grouped_allreduce")
    op = _reduce_op(op, average, "grouped_allreduce")
    tensors = [_dense(t) for t in tensors]
    if not tensors:
        return []
    contexts = [None] * len(tensors)
    if compression is not None:
        compressed = [compression.compress(t) for t in tensors]
        tensors = [c[0] for c in compressed]
        contexts = [c[1] for c in compressed]
    by_dtype = {}
    for index, t in enumerate(tensors):
        _check_dtype(t, "grouped_allreduce")
        _check_scaling(t, prescale_factor, postscale_factor, "grouped_allreduce")
        by_dtype.setdefault(t.dtype, []).append(index)
    results = [None] * len(tensors)
    base = _tensor_name(name)
    for dtype, indices in by_dtype.items():
        group_name = base if not base or len(by_dtype) == 1 else "{}.{}".format(base, dtype.name)
        reduced = _ops.hoop_grouped_allreduce(
            [tensors[i] for i in indices],
            reduce_op=_HOOP_OPS[op],
            prescale_factor=float(prescale_factor),
            postscale_factor=float(postscale_factor),
            tensor_name=group_name,
        )
        for i, r in zip(indices, reduced):
            results[i] = r
    if compression is not None:
        results = [compression.decompress(r, c) for r, c in zip(results, contexts)]
    return results


def allgather(tensor, name=None, ignore_name_scope=False):
    """Every rank's tensor concatenated along the first dimension, in rank order.

    The first dimension may differ between ranks; the others must match.
    """
    _require_init("allgather")
    tensor = _dense(tensor)
    _check_dtype(tensor, "allgather")
    return _ops.hoop_allgather(tensor, tensor_name=_tensor_name(name))


def broadcast(tensor, root_rank, name=None, ignore_name_scope=False):
    """root_rank's tensor, on every rank."""
    _require_init("broadcast")
    tensor = _dense(tensor)
    _check_dtype(tensor, "broadcast")
    return _ops.hoop_broadcast(tensor, root_rank=int(root_rank), tensor_name=_tensor_name(name))


def alltoall(tensor, splits=None, name=None, ignore_name_scope=False):
    """Rows of tensor scattered to the ranks and gathered from them.

    splits[j] rows (along the first dimension) go to rank j; without splits the rows divide
    evenly. Returns (output, received_splits): the rows from rank 0, then rank 1, ..., and how
    many came from each.
    """
    _require_init("alltoall")
    tensor = _dense(tensor)
    _check_dtype(tensor, "alltoall")
    if splits is None:
        splits = tf.zeros([0], dtype=tf.int32)
    else:
        splits = tf.cast(tf.convert_to_tensor(splits), tf.int32)
    return _ops.hoop_alltoall(tensor, splits, tensor_name=_tensor_name(name))


def reducescatter(tensor, op=None, name=None, ignore_name_scope=False):
    """The reduction of tensor over every rank, split along the first dimension (op Average by
    default): rank r gets the r-th of size() blocks. When the first dimension does not divide
    (or is unknown when traced), the first `rows % size()` ranks get one row more, as Horovod
    splits, through an allreduce and a slice; otherwise hoop's reduce-scatter moves each rank's
    block only."""
    _require_init("reducescatter")
    op = _reduce_op(op, None, "reducescatter")
    tensor = _dense(tensor)
    _check_dtype(tensor, "reducescatter")
    size = _runtime.size()
    rows = tensor.shape[0] if tensor.shape.rank else None
    if tensor.shape.rank == 0 or (rows is not None and rows % size == 0):
        return _ops.hoop_reducescatter(
            tensor, reduce_op=_HOOP_OPS[op], tensor_name=_tensor_name(name)
        )
    reduced = _ops.hoop_allreduce(tensor, reduce_op=_HOOP_OPS[op], tensor_name=_tensor_name(name))
    total = tf.shape(tensor, out_type=tf.int64)[0]
    rank = tf.constant(_runtime.rank(), dtype=tf.int64)
    base, extra = total // size, total % size
    start = rank * base + tf.minimum(rank, extra)
    count = base + tf.cast(rank < extra, tf.int64)
    return reduced[start : start + count]


def _gradient_of_allreduce(op, grad):
    """The gradient of a sum (or average) over ranks is the same reduction of the gradients."""
    reduce_op = op.get_attr("reduce_op")
    if reduce_op not in (_HOOP_OPS[Sum], _HOOP_OPS[Average]):
        raise NotImplementedError("hoop.tensorflow: only Sum and Average allreduces have gradients")
    return _ops.hoop_allreduce(
        grad,
        reduce_op=reduce_op,
        prescale_factor=op.get_attr("prescale_factor"),
        postscale_factor=op.get_attr("postscale_factor"),
        tensor_name=(op.get_attr("tensor_name").decode() or op.name) + ".grad",
    )


def _gradient_of_allgather(op, grad):
    """Each rank's slice of the summed gradient, as Horovod's allgather gradient."""
    summed = _ops.hoop_allreduce(
        grad,
        reduce_op=_HOOP_OPS[Sum],
        tensor_name=(op.get_attr("tensor_name").decode() or op.name) + ".grad",
    )
    rows = tf.shape(op.inputs[0], out_type=tf.int64)[:1]
    all_rows = _ops.hoop_allgather(
        rows, tensor_name=(op.get_attr("tensor_name").decode() or op.name) + ".grad.rows"
    )
    rank = _runtime.rank()
    start = tf.reduce_sum(all_rows[:rank])
    return summed[start : start + rows[0]]


def _gradient_of_broadcast(op, grad):
    """Every rank's gradient flows to the root; the others' inputs get none."""
    root = op.get_attr("root_rank")
    summed = _ops.hoop_allreduce(
        grad,
        reduce_op=_HOOP_OPS[Sum],
        tensor_name=(op.get_attr("tensor_name").decode() or op.name) + ".grad",
    )
    return summed if _runtime.rank() == root else tf.zeros_like(summed)


tf.RegisterGradient("HoopAllreduce")(_gradient_of_allreduce)
tf.RegisterGradient("HoopAllgather")(_gradient_of_allgather)
tf.RegisterGradient("HoopBroadcast")(_gradient_of_broadcast)
