"""DistributedGradientTape: a tf.GradientTape whose gradient() returns gradients averaged over
the ranks, for custom training loops, as horovod.tensorflow.DistributedGradientTape."""

import tensorflow as tf

from hoop.tensorflow import mpi_ops
from hoop.tensorflow.gradients import allreduce_gradients


class _DistributedGradientTape(tf.GradientTape):
    """Takes over a recorded tape (its state, not a copy of its operations)."""

    def gradient(self, target, sources, output_gradients=None, **kwargs):
        gradients = super().gradient(target, sources, output_gradients, **kwargs)
        flat = tf.nest.flatten(gradients)
        reduced = allreduce_gradients(flat, name=self._hoop_name, **self._hoop_options)
        return tf.nest.pack_sequence_as(gradients, reduced)


def DistributedGradientTape(
    gradtape,
    device_dense="",
    device_sparse="",
    compression=None,
    sparse_as_dense=False,
    op=mpi_ops.Average,
    gradient_predivide_factor=1.0,
    num_groups=0,
    name="DistributedGradientTape",
):
    """Wraps the tape of a `with tf.GradientTape() as tape:` block:

        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)   # averaged over the ranks

    Works eagerly and inside tf.function. Every rank asks for the gradients of the same sources
    in the same order.
    """
    tape = _DistributedGradientTape.__new__(_DistributedGradientTape)
    tape.__dict__.update(gradtape.__dict__)
    tape._hoop_name = name
    tape._hoop_options = dict(
        op=op,
        compression=compression,
        gradient_predivide_factor=gradient_predivide_factor,
        sparse_as_dense=sparse_as_dense,
    )
    return tape
