"""Fashion-MNIST in a tf.compat.v1 graph trained by a MonitoredTrainingSession: the classic
Horovod TensorFlow program (DistributedOptimizer around a v1 optimizer, the learning rate scaled
by size(), BroadcastGlobalVariablesHook(0), checkpoints on rank 0 only), with the one import
changed to `import hoop.tensorflow as hvd`.

    build/bin/hooprun -np 2 build/venv/bin/python3 examples/tensorflow_v1_fashion_mnist.py
(with PYTHONPATH=build/python; docs/tensorflow.md)
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import hoop.tensorflow as hvd  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fashion_mnist_data  # noqa: E402

parser = argparse.ArgumentParser(description="tf.compat.v1 MonitoredTrainingSession with hoop")
parser.add_argument("--batch-size", type=int, default=100)
parser.add_argument("--steps", type=int, default=1000, help="steps in all, split over the ranks")
parser.add_argument("--lr", type=float, default=0.001)
parser.add_argument("--data-dir", default=fashion_mnist_data.DEFAULT_DIR)
parser.add_argument("--checkpoint-dir", default="", help="rank 0 checkpoints here")

v1 = tf.compat.v1


def conv_model(images, labels):
    """Two convolutions and two dense layers, in v1 layers' style (variables from the graph)."""
    x = tf.reshape(images, [-1, 28, 28, 1])
    w1 = v1.get_variable("conv1/w", [5, 5, 1, 32])
    x = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME")), 2, 2, "SAME")
    w2 = v1.get_variable("conv2/w", [5, 5, 32, 64])
    x = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, w2, 1, "SAME")), 2, 2, "SAME")
    x = tf.reshape(x, [-1, 7 * 7 * 64])
    w3 = v1.get_variable("fc1/w", [7 * 7 * 64, 512])
    b3 = v1.get_variable("fc1/b", [512], initializer=v1.zeros_initializer())
    x = tf.nn.relu(tf.matmul(x, w3) + b3)
    w4 = v1.get_variable("fc2/w", [512, 10])
    b4 = v1.get_variable("fc2/b", [10], initializer=v1.zeros_initializer())
    logits = tf.matmul(x, w4) + b4
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )
    return logits, loss


def main():
    args = parser.parse_args()
    v1.disable_eager_execution()
    hvd.init()
    images, labels = fashion_mnist_data.load_arrays("train", args.data_dir)
    images, labels = images[hvd.rank() :: hvd.size()], labels[hvd.rank() :: hvd.size()]

    image_input = v1.placeholder(tf.float32, [None, 28, 28])
    label_input = v1.placeholder(tf.int64, [None])
    _, loss = conv_model(image_input, label_input)
    optimizer = hvd.DistributedOptimizer(v1.train.AdamOptimizer(args.lr * hvd.size()))
    global_step = v1.train.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=global_step)

    hooks = [
        hvd.BroadcastGlobalVariablesHook(0),
        v1.train.StopAtStepHook(last_step=max(1, args.steps // hvd.size())),
    ]
    # Only rank 0 checkpoints, so that the ranks do not overwrite each other's files.
    checkpoint_dir = args.checkpoint_dir if hvd.rank() == 0 and args.checkpoint_dir else None
    rng = np.random.default_rng(hvd.rank())
    steps_run = 0
    with v1.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks) as session:
        while not session.should_stop():
            batch = rng.integers(0, len(images), args.batch_size)
            _, step, value = session.run(
                [train_op, global_step, loss],
                feed_dict={image_input: images[batch], label_input: labels[batch]},
            )
            steps_run += 1
            if step % 50 == 0 and hvd.rank() == 0:
                print("step {}: loss {:.4f}".format(step, value))
    if hvd.rank() == 0:
        print("finished after {} steps".format(steps_run))
    hvd.shutdown()


if __name__ == "__main__":
    main()
