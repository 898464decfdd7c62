"""Keras 3 callbacks with horovod.tensorflow.keras.callbacks's names and behaviour."""

import keras
import numpy as np
import tensorflow as tf

from hoop import _runtime
from hoop.tensorflow import mpi_ops
from hoop.tensorflow.functions import broadcast_variables


class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
    """Makes every rank start training from root_rank's weights and optimizer state.

    The broadcast runs before the first step when the model is built by then (building the
    optimizer's variables first, so its state is root's too); otherwise right after the first
    step, as Horovod's does.
    """

    def __init__(self, root_rank, device=""):
        super().__init__()
        self.root_rank = root_rank
        self.broadcast_done = False

    def _variables(self):
        variables = list(self.model.variables)
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and optimizer.built:
            variables += list(optimizer.variables)
        return variables

    def _broadcast(self):
        broadcast_variables(self._variables(), self.root_rank, name="BroadcastGlobalVariables")
        self.broadcast_done = True

    def on_train_begin(self, logs=None):
        if self.broadcast_done or not self.model.built:
            return
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and not optimizer.built:
            optimizer.build(self.model.trainable_variables)
        self._broadcast()

    def on_train_batch_end(self, batch, logs=None):
        if not self.broadcast_done:
            self._broadcast()


class MetricAverageCallback(keras.callbacks.Callback):
    """Replaces each epoch's metrics in logs by their average over the ranks, so that every
    rank (and rank 0's printout, checkpoints and early stopping) sees the job's metrics. Put it
    before the callbacks that read them."""

    def __init__(self, device=""):
        super().__init__()

    def _average(self, logs, prefix):
        if not logs or _runtime.size() == 1:
            return
        keys = sorted(k for k, v in logs.items() if np.ndim(v) == 0)
        values = [tf.constant(float(logs[k]), dtype=tf.float64) for k in keys]
        averaged = mpi_ops.grouped_allreduce(values, op=mpi_ops.Average, name=prefix)
        for key, value in zip(keys, averaged):
            logs[key] = float(value.numpy())

    def on_epoch_end(self, epoch, logs=None):
        self._average(logs, "MetricAverageCallback.epoch")

    def on_test_end(self, logs=None):
        self._average(logs, "MetricAverageCallback.test")


class LearningRateWarmupCallback(keras.callbacks.Callback):
    """Ramps the learning rate from initial_lr / size() to initial_lr over warmup_epochs
    (Goyal et al., "Accurate, Large Minibatch SGD"), adjusting it before every batch, then
    leaves it at initial_lr. initial_lr is usually the single-rank rate times size()."""

    def __init__(
        self,
        initial_lr,
        warmup_epochs=5,
        momentum_correction=True,
        steps_per_epoch=None,
        verbose=0,
    ):
        super().__init__()
        self.initial_lr = float(initial_lr)
        self.warmup_epochs = warmup_epochs
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.verbose = verbose
        self.current_epoch = 0

    def learning_rate_at(self, epoch):
        """The rate at a (fractional) epoch."""
        size = _runtime.size()
        if epoch >= self.warmup_epochs:
            return self.initial_lr
        return self.initial_lr / size * (epoch * (size - 1) / self.warmup_epochs + 1)

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch
        if self.steps_per_epoch is None:
            self.steps_per_epoch = (self.params or {}).get("steps")

    def on_train_batch_begin(self, batch, logs=None):
        if self.current_epoch > self.warmup_epochs:
            return
        steps = self.steps_per_epoch or 1
        rate = self.learning_rate_at(self.current_epoch + batch / steps)
        self.model.optimizer.learning_rate.assign(rate)

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.warmup_epochs:
            self.model.optimizer.learning_rate.assign(self.initial_lr)
            if self.verbose and _runtime.rank() == 0:
                print("Epoch {}: finished learning rate warmup to {:g}.".format(
                    epoch + 1, self.initial_lr))
        if logs is not None:
            logs["learning_rate"] = float(
                np.asarray(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate))
            )
