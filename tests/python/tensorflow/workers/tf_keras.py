"""hoop.tensorflow.keras on 2 ranks: DistributedOptimizer against one process on the whole
batch, the callbacks, and load_model. Each rank computes the single-process reference itself.

    hooprun -np 2 build/venv/bin/python3 tf_keras.py SCRATCH_DIR
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import hoop.tensorflow.keras as hvd  # noqa: E402

GLOBAL_BATCH = 16
STEPS = 4


def make_model(seed):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input(shape=(6,)),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(3),
        ]
    )
    return model


def compile_model(model, optimizer):
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )


def data():
    """The same global batch on every rank, repeated for every step."""
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, size=(GLOBAL_BATCH, 6)).astype(np.float32)
    y = rng.integers(0, 3, size=(GLOBAL_BATCH,)).astype(np.int64)
    return x, y


def flat_weights(model):
    return np.concatenate([np.ravel(w) for w in model.get_weights()])


def expect_same_on_every_rank(model, what):
    gathered = hvd.allgather(tf.constant(flat_weights(model))[None, :], name=what).numpy()
    for r in range(1, len(gathered)):
        if not np.array_equal(gathered[0], gathered[r]):
            raise AssertionError("{}: rank {} holds other weights than rank 0".format(what, r))


def check_distributed_optimizer_matches_one_process(rank, size):
    x, y = data()
    per_rank = GLOBAL_BATCH // size
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    repeat = lambda a, n: np.concatenate([a] * n)  # noqa: E731

    reference = make_model(1)
    compile_model(reference, keras.optimizers.Adam(0.01))
    reference.fit(repeat(x, STEPS), repeat(y, STEPS), batch_size=GLOBAL_BATCH, shuffle=False,
                  verbose=0)

    distributed = make_model(1)
    compile_model(distributed, hvd.DistributedOptimizer(keras.optimizers.Adam(0.01)))
    distributed.fit(repeat(x[mine], STEPS), repeat(y[mine], STEPS), batch_size=per_rank,
                    shuffle=False, verbose=0)

    got, want = flat_weights(distributed), flat_weights(reference)
    if np.array_equal(want, flat_weights(make_model(1))):
        raise AssertionError("the reference did not train")
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        worst = np.max(np.abs(got - want))
        raise AssertionError("2-rank training differs from 1 process by up to {}".format(worst))
    expect_same_on_every_rank(distributed, "equivalence.weights")
    if int(distributed.optimizer.iterations.numpy()) != STEPS:
        raise AssertionError("optimizer ran {} steps".format(distributed.optimizer.iterations))
    return distributed


def check_broadcast_callback(rank, size):
    """Differently initialised ranks agree after the callback; with a zero learning rate they
    hold exactly rank 0's initial weights."""
    model = make_model(100 + rank)
    initial = flat_weights(model)
    compile_model(model, hvd.DistributedOptimizer(keras.optimizers.SGD(0.0)))
    others = hvd.allgather(tf.constant(initial)[None, :], name="initial").numpy()
    if np.array_equal(others[0], others[1]):
        raise AssertionError("the ranks' initial weights must differ for this check")
    x, y = data()
    model.fit(x, y, batch_size=4, epochs=1, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    if not np.array_equal(flat_weights(model), others[0]):
        raise AssertionError("rank {} does not hold rank 0's initial weights".format(rank))


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epoch_logs = []
        self.rates = []

    def on_train_batch_begin(self, batch, logs=None):
        self.rates.append(float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)))

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_logs.append(dict(logs))


def check_metric_average_and_warmup(rank, size):
    x, y = data()
    model = make_model(5)
    compile_model(model, hvd.DistributedOptimizer(keras.optimizers.SGD(0.1)))
    before, after = Recorder(), Recorder()
    warmup = hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1 * size, warmup_epochs=2)
    # Each rank's own data (scaled by its rank), so the raw losses differ.
    model.fit(x * (rank + 1), y, batch_size=8, epochs=3, verbose=0, shuffle=False,
              callbacks=[warmup, before, hvd.callbacks.MetricAverageCallback(), after])
    raw = hvd.allgather_object([logs["loss"] for logs in before.epoch_logs])
    averaged = [logs["loss"] for logs in after.epoch_logs]
    if raw[0] == raw[1]:
        raise AssertionError("the ranks' losses must differ for this check")
    want = np.mean(np.array(raw), axis=0)
    if not np.allclose(averaged, want, rtol=1e-12):
        raise AssertionError("averaged losses {} expected {}".format(averaged, want))
    # Two batches per epoch: rates at epoch 0, 0.5, 1, 1.5, then the full rate.
    steps = [0.0, 0.5, 1.0, 1.5, 2.0, 2.0]
    want = [warmup.learning_rate_at(e) for e in steps]
    if not np.allclose(before.rates, want, rtol=1e-6):
        raise AssertionError("warmup rates {} expected {}".format(before.rates, want))
    if abs(want[0] - 0.1) > 1e-9 or abs(want[-1] - 0.1 * size) > 1e-9:
        raise AssertionError("warmup runs from initial_lr / size to initial_lr: {}".format(want))


def check_load_model(rank, size, model, scratch):
    path = os.path.join(scratch, "model.keras")
    if rank == 0:
        model.save(path)
    hvd.allreduce(tf.zeros([1]), name="saved")  # rank 0 saved before anyone loads
    loaded = hvd.load_model(path)
    if not getattr(loaded.optimizer, "_hoop_distributed", False):
        raise AssertionError("load_model did not wrap the optimizer")
    if int(loaded.optimizer.iterations.numpy()) != STEPS:
        raise AssertionError("load_model lost the optimizer state")
    if not np.array_equal(flat_weights(loaded), flat_weights(model)):
        raise AssertionError("load_model changed the weights")
    x, y = data()
    per_rank = GLOBAL_BATCH // size
    loaded.fit(x[rank * per_rank : (rank + 1) * per_rank], y[rank * per_rank : (rank + 1) * per_rank],
               batch_size=per_rank, verbose=0)
    expect_same_on_every_rank(loaded, "loaded.weights")


def main():
    scratch = sys.argv[1]
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    trained = check_distributed_optimizer_matches_one_process(rank, size)
    check_broadcast_callback(rank, size)
    check_metric_average_and_warmup(rank, size)
    check_load_model(rank, size, trained, scratch)
    print("OK rank {} of {}".format(rank, size), flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
