"""The Keras CNN of examples/tensorflow_keras_fashion_mnist.py trained two ways on the same data:
with hoop.tensorflow.keras under hooprun, and with tf.distribute's MultiWorkerMirroredStrategy
(RING collectives over gRPC) across local TF_CONFIG workers. Prints one line per run.

    PYTHONPATH=build/python build/venv/bin/python3 bench/tensorflow/keras_lenet.py \
        --ranks 1 2 4 --strategy-ranks 2 4

Each run trains one epoch over the first --samples training images (split over the ranks, the
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
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--worker", choices=["hoop", "strategy"], help=argparse.SUPPRESS)


def train(kind, args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
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
        global_batch = args.batch_size * size

        def per_worker(context):
            return (
                tf.data.Dataset.from_tensor_slices((x, y))
                .shard(context.num_input_pipelines, context.input_pipeline_id)
                .batch(context.get_per_replica_batch_size(global_batch), drop_remainder=True)
            )

        data = strategy.distribute_datasets_from_function(per_worker)
        callbacks = []

    steps = args.samples // (args.batch_size * size)

    class Timer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.started = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.last = time.perf_counter() - self.started

    timer = Timer()
    model.fit(data, epochs=args.epochs, steps_per_epoch=steps, callbacks=callbacks + [timer],
              verbose=0)
    # Every process evaluates the same test images with its (identical) weights.
    _, accuracy = model.evaluate(x_test, y_test, batch_size=500, verbose=0)
    if rank == 0:
        print(
            "RESULT {} ranks={} steps/epoch={} last-epoch-s={:.2f} steps/s={:.2f} "
            "test-accuracy={:.4f}".format(
                kind, size, steps, timer.last, steps / timer.last, accuracy
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
        print(*[l for l in out.splitlines() if l.startswith("RESULT")], sep="\n", flush=True)
    for ranks in args.strategy_ranks:
        out = run_workers(ranks, [__file__, "--worker", "strategy"] + common)
        print(*[l for l in out.splitlines() if l.startswith("RESULT")], sep="\n", flush=True)


if __name__ == "__main__":
    main()
