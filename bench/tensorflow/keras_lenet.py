"""The Keras CNN of examples/tensorflow_keras_fashion_mnist.py trained two ways on the same data:
with hoop.tensorflow.keras under hooprun, and with tf.distribute's MultiWorkerMirroredStrategy
(RING collectives over gRPC) across local TF_CONFIG workers. Prints one line per run.

    PYTHONPATH=build/python build/venv/bin/python3 bench/tensorflow/keras_lenet.py \
        --ranks 1 2 4 --strategy-ranks 2 4

Each run trains --epochs epochs over the first --samples training images (split over the ranks, the
per-rank batch fixed, Adam at 0.001 x ranks) and tests on the first --test-samples test images.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "examples"))

parser = argparse.ArgumentParser()
parser.add_argument("--ranks", type=int, nargs="*", default=[1, 2, 4])
parser.add_argument("--strategy-ranks", type=int, nargs="*", default=[2, 4])
parser.add_argument("--samples", type=int, default=12800)
parser.add_argument("--test-samples", type=int, default=2000)
parser.add_argument("--batch-size", type=int, default=64, help="per rank")
parser.add_argument("--epochs", type=int, default=2, help="the last one is timed (no tracing)")
parser.add_argument("--worker", choices=["hoop", "strategy"], help=argparse.SUPPRESS)


def strategy_loop(strategy, model, data, steps, args, tf, keras):
    """model.fit's step written out for the strategy: Keras 3.15's own fit() under
    MultiWorkerMirroredStrategy fails before its first step (its symbolic build reduces an
    (x, y) tuple of per-replica values: "Attempt to convert a value (PerReplica...)"). Each
    worker runs the model on its share of the global batch; the optimizer's apply_gradients
    all-reduces the gradients with the strategy's collectives. Returns the last epoch's seconds."""
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    loss_fn = keras.losses.SparseCategoricalCrossentropy(reduction="none")
    optimizer = model.optimizer

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(loss_fn(y, model(x, training=True))) / global_batch
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    @tf.function
    def train_step(batch):
        losses = strategy.run(replica_step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    distributed = strategy.experimental_distribute_dataset(data)
    seconds = 0.0
    for _ in range(args.epochs):
        iterator = iter(distributed)
        started = time.perf_counter()
        for _ in range(steps):
            loss = train_step(next(iterator))
        float(loss)
        seconds = time.perf_counter() - started
    return seconds


def train(kind, args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import numpy as np
    import tensorflow as tf

    import fashion_mnist_data
    from tensorflow_keras_fashion_mnist import build_model

    x, y = fashion_mnist_data.load_arrays("train")
    x, y = x[: args.samples, :, :, None], y[: args.samples]
    x_test, y_test = fashion_mnist_data.load_arrays("t10k")
    x_test, y_test = x_test[: args.test_samples, :, :, None], y_test[: args.test_samples]
    keras.utils.set_random_seed(1)

    if kind == "hoop":
        import hoop.tensorflow.keras as hvd

        hvd.init()
        rank, size = hvd.rank(), hvd.size()
        model = build_model()
        model.compile(
            loss="sparse_categorical_crossentropy",
            optimizer=hvd.DistributedOptimizer(keras.optimizers.Adam(0.001 * size)),
            metrics=["accuracy"],
        )
        data = (
            tf.data.Dataset.from_tensor_slices((x, y))
            .shard(size, rank)
            .batch(args.batch_size, drop_remainder=True)
        )
        callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(
                implementation=tf.distribute.experimental.CommunicationImplementation.RING
            )
        )
        rank = strategy.cluster_resolver.task_id
        size = strategy.num_replicas_in_sync
        with strategy.scope():
            model = build_model()
            model.compile(
                loss="sparse_categorical_crossentropy",
                optimizer=keras.optimizers.Adam(0.001 * size),
                metrics=["accuracy"],
            )
        # Keras distributes a dataset of global batches itself: each worker keeps its share of
        # every batch (auto-sharding by data), so every worker sees batch_size images per step.
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
        data = (
            tf.data.Dataset.from_tensor_slices((x, y))
            .batch(args.batch_size * size, drop_remainder=True)
            .with_options(options)
        )
        callbacks = []
    steps = args.samples // (args.batch_size * size)

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.started = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.last = time.perf_counter() - self.started

    if kind == "hoop":
        timer = Timer()
        model.fit(data, epochs=args.epochs, steps_per_epoch=steps,
                  callbacks=callbacks + [timer], verbose=0)
        epoch_seconds = timer.last
    else:
        epoch_seconds = strategy_loop(strategy, model, data, steps, args, tf, keras)
    # Every process evaluates the same test images with its (identical) weights.
    predicted = np.argmax(model.predict(x_test, batch_size=500, verbose=0), axis=1)
    accuracy = float(np.mean(predicted == y_test))
    if rank == 0:
        print(
            "RESULT {} ranks={} steps/epoch={} last-epoch-s={:.2f} steps/s={:.2f} "
            "test-accuracy={:.4f}".format(
                kind, size, steps, epoch_seconds, steps / epoch_seconds, accuracy
            ),
            flush=True,
        )


def main():
    args = parser.parse_args()
    if args.worker:
        train(args.worker, args)
        return
    from cluster import run_workers

    common = ["--samples", str(args.samples), "--test-samples", str(args.test_samples),
              "--batch-size", str(args.batch_size), "--epochs", str(args.epochs)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    for ranks in args.ranks:
        command = [str(ROOT / "build" / "bin" / "hooprun"), "-np", str(ranks), sys.executable,
                   __file__, "--worker", "hoop"] + common
        out = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        print(*[l[l.index("RESULT"):] for l in out.splitlines() if "RESULT" in l], sep="\n", flush=True)
    for ranks in args.strategy_ranks:
        out = run_workers(ranks, [__file__, "--worker", "strategy"] + common)
        print(*[l[l.index("RESULT"):] for l in out.splitlines() if "RESULT" in l], sep="\n", flush=True)


if __name__ == "__main__":
    main()
