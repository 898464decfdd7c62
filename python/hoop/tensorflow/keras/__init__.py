"""hoop for Keras 3 (the Keras that ships with TensorFlow 2.16 and later), with
horovod.tensorflow.keras's API: `import hoop.tensorflow.keras as hvd`.

    hvd.init()
    opt = hvd.DistributedOptimizer(keras.optimizers.Adam(0.001 * hvd.size()))
    model.compile(optimizer=opt, loss=...)
    model.fit(x, y, callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
"""

import keras

from hoop import HoopError
from hoop._runtime import cross_rank, cross_size, local_rank, local_size, rank, size
from hoop.tensorflow import _SHARED_API
from hoop.tensorflow.compression import Compression
from hoop.tensorflow.functions import allgather_object, broadcast_object, broadcast_variables
from hoop.tensorflow.gradients import allreduce_gradients
from hoop.tensorflow.keras import callbacks
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
    grouped_allreduce,
    init,
    is_initialized,
    reducescatter,
    shutdown,
)

_WRAPPED = {}


def _distributed_class(base):
    """A subclass of the optimizer's class whose apply() reduces the gradients first. It keeps
    the base class's name and module, so a saved model records the plain optimizer and
    load_model() wraps it again."""
    if getattr(base, "_hoop_distributed", False):
        return base
    if base not in _WRAPPED:

        def apply(self, grads, trainable_variables=None):
            grads = allreduce_gradients(list(grads), name=self._hoop_name, **self._hoop_options)
            return base.apply(self, grads, trainable_variables)

        wrapped = type(base.__name__, (base,), {"apply": apply, "_hoop_distributed": True})
        wrapped.__module__ = base.__module__
        wrapped.__qualname__ = base.__qualname__
        _WRAPPED[base] = wrapped
    return _WRAPPED[base]


def DistributedOptimizer(
    optimizer,
    name=None,
    device_dense="",
    device_sparse="",
    compression=None,
    sparse_as_dense=False,
    gradient_predivide_factor=1.0,
    op=Average,
    backward_passes_per_step=1,
    average_aggregated_gradients=False,
    num_groups=0,
):
    """Wraps any Keras 3 optimizer so that gradients are averaged over the ranks (one grouped,
    fused allreduce per step) before they are applied, in model.fit and in custom loops that
    call optimizer.apply() or apply_gradients().

    An optimizer that has not been built yet is recreated from its config (as Horovod does);
    one that has (it holds state, e.g. from load_model) is converted in place.
    """
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise ValueError(
            "hoop.tensorflow.keras.DistributedOptimizer wraps Keras optimizers; got {}".format(
                type(optimizer).__name__
            )
        )
    if backward_passes_per_step != 1:
        raise NotImplementedError("hoop.tensorflow.keras: backward_passes_per_step must be 1")
    wrapped_class = _distributed_class(type(optimizer))
    if optimizer.built:
        optimizer.__class__ = wrapped_class
        distributed = optimizer
    else:
        distributed = wrapped_class.from_config(optimizer.get_config())
    distributed._hoop_name = name or "DistributedOptimizer"
    distributed._hoop_options = dict(
        op=op,
        compression=compression,
        gradient_predivide_factor=gradient_predivide_factor,
        sparse_as_dense=sparse_as_dense,
    )
    return distributed


def load_model(filepath, custom_optimizers=None, custom_objects=None, compression=None):
    """keras.models.load_model, with the model's optimizer (and its restored state) wrapped in
    DistributedOptimizer."""
    objects = dict(custom_objects or {})
    for optimizer_class in custom_optimizers or []:
        objects[optimizer_class.__name__] = optimizer_class
    model = keras.models.load_model(filepath, custom_objects=objects)
    if getattr(model, "optimizer", None) is not None:
        optimizer = model.optimizer
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
        DistributedOptimizer(optimizer, compression=compression)
    return model


def broadcast_global_variables(root_rank):
    """Keras 3 programs broadcast a model's variables: broadcast_variables(model.variables, 0),
    or the BroadcastGlobalVariablesCallback."""
    raise NotImplementedError(
        "hoop.tensorflow.keras.broadcast_global_variables needs tf.compat.v1 global variables, "
        "which Keras 3 does not create; use broadcast_variables(model.variables, root_rank) or "
        "callbacks.BroadcastGlobalVariablesCallback(root_rank)"
    )


__all__ = _SHARED_API + ["DistributedOptimizer", "load_model", "callbacks"]
