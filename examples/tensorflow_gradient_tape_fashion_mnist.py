"""Fashion-MNIST with a custom training loop: tf.GradientTape wrapped in hoop's
DistributedGradientTape inside a tf.function, as Horovod's TensorFlow 2 example writes it (the
import is the one change: `import hoop.tensorflow as hvd`).

    build/bin/hooprun -np 2 build/venv/bin/python3 examples/tensorflow_gradient_tape_fashion_mnist.py
(with PYTHONPATH=build/python; docs/tensorflow.md)
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import hoop.tensorflow as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_data  # noqa: E402

parser = argparse.ArgumentParser(description="DistributedGradientTape on Fashion-MNIST")
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--steps", type=int, default=500, help="steps in all, split over the ranks")
parser.add_argument("--lr", type=float, default=0.001)
parser.add_argument("--data-dir", default=fashion_mnist_data.DEFAULT_DIR)
parser.add_argument("--checkpoint-dir", default="", help="rank 0 writes a tf.train.Checkpoint here")


def main():
    args = parser.parse_args()
    hvd.init()
    images, labels = fashion_mnist_data.load_arrays("train", args.data_dir)
    dataset = (
        tf.data.Dataset.from_tensor_slices((images[..., None], labels))
        .shard(hvd.size(), hvd.rank())
        .repeat()
        .shuffle(10000, seed=hvd.rank())
        .batch(args.batch_size)
    )
    model = keras.Sequential(
        [
            keras.Input(shape=(28, 28, 1)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam(args.lr * hvd.size())
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)

    @tf.function
    def training_step(images, labels, first_batch):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        # The one change to the tape: gradients come back averaged over the ranks.
        tape = hvd.DistributedGradientTape(tape)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        # After the first step (which creates the optimizer's variables), every rank takes rank
        # 0's model and optimizer state.
        if first_batch:
            hvd.broadcast_variables(model.variables, root_rank=0)
            hvd.broadcast_variables(optimizer.variables, root_rank=0)
        return loss

    steps = max(1, args.steps // hvd.size())
    for step, (x, y) in enumerate(dataset.take(steps)):
        loss = training_step(x, y, step == 0)
        if step % 50 == 0 and hvd.rank() == 0:
            print("step {}: loss {:.4f}".format(step, float(loss)))
    final = hvd.allreduce(loss, name="final_loss")
    if hvd.rank() == 0:
        print("final loss (average over ranks) {:.4f}".format(float(final)))
        if args.checkpoint_dir:
            checkpoint.save(os.path.join(args.checkpoint_dir, "ckpt"))
    hvd.shutdown()


if __name__ == "__main__":
    main()
