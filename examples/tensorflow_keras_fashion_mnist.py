"""Fashion-MNIST with Keras 3 and hoop.tensorflow.keras: the Keras CNN of the "TensorFlow with
MPI on a small cluster" style, written as a Horovod program whose one change is the import
(`import hoop.tensorflow.keras as hvd` for `import horovod.tensorflow.keras as hvd`).

    build/bin/hooprun -np 2 build/venv/bin/python3 examples/tensorflow_keras_fashion_mnist.py
(with PYTHONPATH=build/python; docs/tensorflow.md)
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import hoop.tensorflow.keras as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_data  # noqa: E402

parser = argparse.ArgumentParser(description="Keras Fashion-MNIST with hoop")
parser.add_argument("--batch-size", type=int, default=64, help="per-rank batch size")
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=0.001, help="single-rank learning rate")
parser.add_argument("--batches-per-epoch", type=int, default=0, help="stop an epoch early (0: all)")
parser.add_argument("--test-batches", type=int, default=0, help="test on this many batches (0: all)")
parser.add_argument("--data-dir", default=fashion_mnist_data.DEFAULT_DIR)
parser.add_argument("--checkpoint", default="", help="rank 0 saves the model here each epoch (.keras)")
parser.add_argument("--seed", type=int, default=42)


def build_model():
    """Two convolutions (32 and 64 filters), max pooling, a 512-unit dense layer."""
    return keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            keras.layers.Conv2D(32, kernel_size=3, activation="relu"),
            keras.layers.Conv2D(64, kernel_size=3, activation="relu"),
            keras.layers.MaxPooling2D(pool_size=2),
            keras.layers.Dropout(0.25),
            keras.layers.Flatten(),
            keras.layers.Dense(512, activation="relu"),
            keras.layers.Dropout(0.5),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )


def shard(split, directory, rank, size):
    """This rank's 1/size of a split, as [N, 28, 28, 1] images and labels."""
    x, y = fashion_mnist_data.load_arrays(split, directory)
    return x[rank::size, :, :, None], y[rank::size]


class EpochTimer(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        if hvd.rank() == 0:
            print("epoch {} took {:.2f} s".format(epoch + 1, time.perf_counter() - self.started))


def main():
    args = parser.parse_args()
    hvd.init()
    keras.utils.set_random_seed(args.seed + hvd.rank())  # the broadcast makes the ranks agree
    x_train, y_train = shard("train", args.data_dir, hvd.rank(), hvd.size())
    x_test, y_test = shard("t10k", args.data_dir, hvd.rank(), hvd.size())

    model = build_model()
    # Horovod's recipe: the learning rate scales with the number of ranks (the global batch grows
    # with it), and the optimizer averages the gradients over the ranks.
    optimizer = hvd.DistributedOptimizer(keras.optimizers.Adam(args.lr * hvd.size()))
    model.compile(
        loss="sparse_categorical_crossentropy", optimizer=optimizer, metrics=["accuracy"]
    )
    callbacks = [
        hvd.callbacks.BroadcastGlobalVariablesCallback(0),
        hvd.callbacks.MetricAverageCallback(),
        EpochTimer(),
    ]
    if hvd.rank() == 0 and args.checkpoint:
        callbacks.append(keras.callbacks.ModelCheckpoint(args.checkpoint))

    steps = len(x_train) // args.batch_size
    if args.batches_per_epoch:
        steps = min(steps, args.batches_per_epoch)
    model.fit(
        x_train,
        y_train,
        batch_size=args.batch_size,
        epochs=args.epochs,
        steps_per_epoch=steps,
        callbacks=callbacks,
        verbose=2 if hvd.rank() == 0 else 0,
    )
    test_steps = None
    if args.test_batches:
        test_steps = args.test_batches
    loss, accuracy = model.evaluate(
        x_test, y_test, batch_size=1000, steps=test_steps, verbose=0
    )
    # Every rank evaluated its shard: the job's figures are their averages.
    loss, accuracy = [
        float(v) for v in hvd.allreduce(tf.constant([loss, accuracy], tf.float64), name="test")
    ]
    if hvd.rank() == 0:
        print("test loss {:.4f}, test accuracy {:.4f}".format(loss, accuracy))
    hvd.shutdown()


if __name__ == "__main__":
    main()
