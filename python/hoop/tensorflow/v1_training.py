"""tf.compat.v1 graph training, as classic Horovod TensorFlow programs write it: a
DistributedOptimizer around a tf.compat.v1.train optimizer and a BroadcastGlobalVariablesHook
for MonitoredTrainingSession."""

import tensorflow as tf

from hoop.tensorflow import mpi_ops
from hoop.tensorflow.functions import broadcast_global_variables
from hoop.tensorflow.gradients import allreduce_gradients


class _DistributedOptimizerV1(tf.compat.v1.train.Optimizer):
    def __init__(self, optimizer, name, options):
        self._optimizer = optimizer
        self._options = options
        super().__init__(name=name, use_locking=False)

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients, averaged over the ranks."""
        pairs = self._optimizer.compute_gradients(*args, **kwargs)
        gradients = [g for g, _ in pairs]
        reduced = allreduce_gradients(gradients, name=self.get_name(), **self._options)
        return list(zip(reduced, [v for _, v in pairs]))

    def apply_gradients(self, *args, **kwargs):
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


def DistributedOptimizer(
    optimizer,
    name=None,
    use_locking=False,
    device_dense="",
    device_sparse="",
    compression=None,
    sparse_as_dense=False,
    backward_passes_per_step=1,
    op=mpi_ops.Average,
    gradient_predivide_factor=1.0,
    num_groups=0,
):
    """Wraps a tf.compat.v1.train optimizer: minimize() averages the gradients over the ranks
    before applying them. Keras optimizers go to hoop.tensorflow.keras.DistributedOptimizer."""
    if not isinstance(optimizer, tf.compat.v1.train.Optimizer):
        raise ValueError(
            "hoop.tensorflow.DistributedOptimizer wraps tf.compat.v1.train optimizers; for a "
            "Keras optimizer use hoop.tensorflow.keras.DistributedOptimizer"
        )
    if backward_passes_per_step != 1:
        raise NotImplementedError("hoop.tensorflow: backward_passes_per_step must be 1")
    options = dict(
        op=op,
        compression=compression,
        gradient_predivide_factor=gradient_predivide_factor,
        sparse_as_dense=sparse_as_dense,
    )
    return _DistributedOptimizerV1(
        optimizer, name or "Distributed{}".format(type(optimizer).__name__), options
    )


class BroadcastGlobalVariablesHook(tf.compat.v1.train.SessionRunHook):
    """Broadcasts every global variable from root_rank once the session exists, so that every
    rank starts from root's initial values (or root's restored checkpoint)."""

    def __init__(self, root_rank, device=""):
        super().__init__()
        self.root_rank = root_rank
        self.bcast_op = None

    def begin(self):
        if self.bcast_op is None or self.bcast_op.graph != tf.compat.v1.get_default_graph():
            self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)
