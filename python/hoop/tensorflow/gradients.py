"""Reducing a list of gradients over the ranks: what DistributedGradientTape and both
DistributedOptimizers do before the gradients are applied."""

import tensorflow as tf

from hoop import _runtime
from hoop.tensorflow import mpi_ops


def scale_factors(op, gradient_predivide_factor):
    """(op, prescale, postscale) for Horovod's gradient_predivide_factor: an average computed as
    a sum of gradients divided by f before and by size/f after."""
    if gradient_predivide_factor == 1.0 or op != mpi_ops.Average:
        return op, 1.0, 1.0
    size = _runtime.size()
    return mpi_ops.Sum, 1.0 / gradient_predivide_factor, gradient_predivide_factor / size


def allreduce_gradients(
    gradients,
    name,
    op=mpi_ops.Average,
    compression=None,
    gradient_predivide_factor=1.0,
    sparse_as_dense=False,
):
    """The gradients reduced over every rank, None kept where a variable got none.

    All of them are submitted as one grouped allreduce (one per dtype), so the engine agrees on
    them in one cycle and fuses them. With one rank they are returned as they are.
    """
    if _runtime.size() == 1:
        return list(gradients)
    present = [i for i, g in enumerate(gradients) if g is not None]
    dense = [tf.convert_to_tensor(gradients[i]) for i in present]
    op, prescale, postscale = scale_factors(op, gradient_predivide_factor)
    reduced = mpi_ops.grouped_allreduce(
        dense,
        op=op,
        prescale_factor=prescale,
        postscale_factor=postscale,
        compression=compression,
        name=name,
    )
    result = list(gradients)
    for i, r in zip(present, reduced):
        result[i] = r
    return result
