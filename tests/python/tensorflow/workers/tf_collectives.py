"""Every hoop.tensorflow collective on every dtype TensorFlow and hoop share, eagerly and inside
tf.function, checked exactly with integer-valued data; then the helpers, the gradient tape, and
mismatched requests. One launch runs all of it, so TensorFlow is imported once per rank.

    hooprun -np N build/venv/bin/python3 tf_collectives.py [--name-mismatch]
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import hoop.tensorflow as hvd  # noqa: E402

tf.get_logger().setLevel("ERROR")  # one trace per dtype is the point, not a retracing problem

DTYPES = [
    tf.int8,
    tf.uint8,
    tf.int32,
    tf.uint32,
    tf.int64,
    tf.uint64,
    tf.float16,
    tf.bfloat16,
    tf.float32,
    tf.float64,
]


def expect_equal(actual, expected, what):
    actual = tf.convert_to_tensor(actual)
    expected = tf.convert_to_tensor(expected)
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        raise AssertionError(
            "{}: got {} {} expected {} {}".format(
                what, actual.dtype.name, actual.shape, expected.dtype.name, expected.shape
            )
        )
    # Compared as float64 (bfloat16 has no numpy dtype of its own); every value is a small integer.
    got = tf.cast(actual, tf.float64).numpy()
    want = tf.cast(expected, tf.float64).numpy()
    if not np.array_equal(got, want):
        raise AssertionError("{}: got {} expected {}".format(what, got, want))


def ints(shape, fn):
    return np.fromfunction(fn, shape, dtype=np.int64).astype(np.int64)


def per_dtype_collectives(x, small, same, rows, to_all, splits, scatter, scatter_uneven):
    """Every collective once; named so that eager and graph runs match across ranks."""
    size = hvd.size()
    return {
        "sum": hvd.allreduce(x, op=hvd.Sum),
        "min": hvd.allreduce(x, op=hvd.Min),
        "max": hvd.allreduce(x, op=hvd.Max),
        "product": hvd.allreduce(small, op=hvd.Product),
        "average": hvd.allreduce(same),
        "allgather": hvd.allgather(rows),
        "broadcast": hvd.broadcast(x, root_rank=size - 1),
        "alltoall": hvd.alltoall(to_all, splits=splits),
        "reducescatter": hvd.reducescatter(scatter, op=hvd.Sum),
        "reducescatter_uneven": hvd.reducescatter(scatter_uneven, op=hvd.Sum),
    }


def expected_collectives(dtype, rank, size, count):
    def x_of(r):
        return ints((count,), lambda i: i % 5 + r + 1)

    stacked = np.stack([x_of(r) for r in range(size)])
    small = ints((count,), lambda i: i % 2 + 1)
    same = ints((count,), lambda i: i % 7 * size)
    rows = [ints((r + 1, 3), lambda i, j: r * 10 + i * 3 + j) for r in range(size)]

    def block(sender, receiver):
        n = (sender + receiver) % 2 + 1
        return ints((n, 2), lambda i, j: sender * 20 + receiver * 4 + i * 2 + j)

    scatter = [ints((size * 2, 3), lambda i, j: (i * 3 + j) % 4 + r) for r in range(size)]
    scattered = sum(scatter)[rank * 2 : rank * 2 + 2]
    # size * 2 + 1 rows: the first rank gets three, the others two.
    uneven = [ints((size * 2 + 1, 3), lambda i, j: (i * 3 + j) % 4 + r) for r in range(size)]
    uneven_start = rank * 2 + min(rank, 1)
    uneven_scattered = sum(uneven)[uneven_start : uneven_start + 2 + (1 if rank < 1 else 0)]
    cast = lambda a: tf.cast(tf.constant(a), dtype)  # noqa: E731
    inputs = dict(
        x=cast(x_of(rank)),
        small=cast(small),
        same=cast(same),
        rows=cast(rows[rank]),
        to_all=cast(np.concatenate([block(rank, j) for j in range(size)])),
        splits=tf.constant([(rank + j) % 2 + 1 for j in range(size)], dtype=tf.int32),
        scatter=cast(scatter[rank]),
        scatter_uneven=cast(uneven[rank]),
    )
    expected = {
        "sum": cast(stacked.sum(0)),
        "min": cast(stacked.min(0)),
        "max": cast(stacked.max(0)),
        "product": cast(small**size),
        "average": cast(same),
        "allgather": cast(np.concatenate(rows)),
        "broadcast": cast(x_of(size - 1)),
        "alltoall": (
            cast(np.concatenate([block(r, rank) for r in range(size)])),
            tf.constant([(r + rank) % 2 + 1 for r in range(size)], dtype=tf.int32),
        ),
        "reducescatter": cast(scattered),
        "reducescatter_uneven": cast(uneven_scattered),
    }
    return inputs, expected


def check_every_dtype(rank, size):
    graph = tf.function(per_dtype_collectives)  # traced once per dtype
    for dtype in DTYPES:
        inputs, expected = expected_collectives(dtype, rank, size, count=37)
        for mode, fn in (("eager", per_dtype_collectives), ("tf.function", graph)):
            results = fn(**inputs)
            for key, want in expected.items():
                what = "{} {} {}".format(mode, key, dtype.name)
                if key == "alltoall":
                    expect_equal(results[key][0], want[0], what)
                    expect_equal(results[key][1], want[1], what + " received_splits")
                else:
                    expect_equal(results[key], want, what)
        # The graph knows the shapes it can: allgather's first dimension is unknown.
        traced = graph.get_concrete_function(**inputs).structured_outputs
        if traced["sum"].shape != (37,) or traced["allgather"].shape.as_list() != [None, 3]:
            raise AssertionError(
                "output shapes: {} {}".format(traced["sum"].shape, traced["allgather"].shape)
            )


def check_scaling_grouping_compression(rank, size):
    data = tf.fill([4], float(2 * (rank + 1)))
    expect_equal(hvd.allreduce(data), tf.fill([4], float(size + 1)), "Average")
    expect_equal(
        hvd.allreduce(data, average=False), tf.fill([4], float(size * (size + 1))), "average=False"
    )
    scaled = hvd.allreduce(data, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.5)
    expect_equal(scaled, tf.fill([4], float(size * (size + 1))), "prescale/postscale")
    compressed = hvd.allreduce(data, op=hvd.Sum, compression=hvd.Compression.fp16)
    expect_equal(compressed, tf.fill([4], float(size * (size + 1))), "fp16 compression")
    expect_equal(hvd.allreduce(tf.zeros([0])), tf.zeros([0]), "empty allreduce")
    try:
        hvd.allreduce(tf.constant([1, 2]), op=hvd.Sum, prescale_factor=2.0)
    except hvd.HoopError as e:
        if "floating-point" not in str(e):
            raise
    else:
        raise AssertionError("scale factors on an int tensor must raise")

    tensors = [
        tf.fill([3], np.int32(rank + 1)),
        tf.fill([2, 2], float(rank + 1)),
        tf.fill([5], np.int64(rank + 1)),
        tf.fill([1], np.float64(rank + 1)),
    ]
    total = size * (size + 1) // 2

    @tf.function
    def grouped(ts):
        return hvd.grouped_allreduce(ts, op=hvd.Sum, name="grouped")

    for mode, fn in (("eager", lambda ts: hvd.grouped_allreduce(ts, op=hvd.Sum)), ("graph", grouped)):
        for t, r in zip(tensors, fn(tensors)):
            expect_equal(r, tf.fill(t.shape, tf.cast(total, t.dtype)), mode + " grouped_allreduce")

    # Several unnamed collectives in one graph run concurrently under their node names.
    @tf.function
    def concurrent(a):
        return [hvd.allreduce(a * float(i + 1), op=hvd.Sum) for i in range(6)]

    for i, r in enumerate(concurrent(tf.fill([8], float(rank + 1)))):
        expect_equal(r, tf.fill([8], float(total * (i + 1))), "concurrent unnamed allreduce")


def check_gradients(rank, size):
    total = size * (size + 1) // 2
    # The gradient of an allreduce Sum is the allreduce Sum of the gradient.
    x = tf.Variable(tf.fill([3], float(rank + 1)))
    with tf.GradientTape() as tape:
        y = hvd.allreduce(x * float(rank + 1), op=hvd.Sum, name="grad.of.sum")
        loss = tf.reduce_sum(y)
    expect_equal(tape.gradient(loss, x), tf.fill([3], float(size * (rank + 1))), "allreduce grad")

    # DistributedGradientTape averages, eagerly and in tf.function.
    w = tf.Variable(tf.zeros([4]))
    features = tf.fill([4], float(size * (rank + 1)))

    def averaged_gradient():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * features)
        tape = hvd.DistributedGradientTape(tape)
        return tape.gradient(loss, [w])[0]

    for mode, fn in (("eager", averaged_gradient), ("graph", tf.function(averaged_gradient))):
        expect_equal(fn(), tf.fill([4], float(total)), mode + " DistributedGradientTape")


def check_helpers(rank, size):
    v = tf.Variable(tf.fill([2, 3], float(rank)))
    n = tf.Variable(rank, dtype=tf.int64)
    hvd.broadcast_variables([v, n], root_rank=1)
    expect_equal(v, tf.fill([2, 3], 1.0), "broadcast_variables")
    expect_equal(n, tf.constant(1, tf.int64), "broadcast_variables int")
    obj = hvd.broadcast_object({"rank": rank, "text": "x" * rank}, root_rank=size - 1)
    if obj != {"rank": size - 1, "text": "x" * (size - 1)}:
        raise AssertionError("broadcast_object gave {}".format(obj))
    gathered = hvd.allgather_object(("r", rank))
    if gathered != [("r", r) for r in range(size)]:
        raise AssertionError("allgather_object gave {}".format(gathered))
    # Scalars gather into a vector.
    expect_equal(hvd.allgather(tf.constant(rank)), tf.range(size), "allgather of scalars")
    if (hvd.local_rank(), hvd.local_size(), hvd.cross_rank()) != (rank, size, 0):
        raise AssertionError("local_rank/local_size/cross_rank on one host")


def expect_failure(fn, parts, what):
    try:
        fn()
    except (tf.errors.OpError, hvd.HoopError) as e:
        message = str(e)
        missing = [p for p in parts if p not in message]
        if missing:
            raise AssertionError("{}: {!r} missing from: {}".format(what, missing, message))
        print("rank {} {} error: {}".format(hvd.rank(), what, message.splitlines()[0]), flush=True)
        return
    raise AssertionError("{} did not fail".format(what))


def check_mismatches(rank, size, name_mismatch):
    # A shape mismatch fails on every rank, naming the tensor and every rank's shape.
    parts = ["mismatch.shape", "different shapes"] + ["rank {}".format(r) for r in range(size)]
    expect_failure(
        lambda: hvd.allreduce(tf.ones([4 + rank]), name="mismatch.shape"), parts, "shape eager"
    )

    @tf.function
    def mismatched(t):
        return hvd.allreduce(t, op=hvd.Sum, name="mismatch.graph")

    parts = ["mismatch.graph", "different shapes"]
    expect_failure(lambda: mismatched(tf.ones([2 + rank], tf.int32)), parts, "shape tf.function")
    if name_mismatch:
        # Each rank's own name stalls: its error names the tensor and the ranks that never
        # submitted it.
        others = [str(r) for r in range(size) if r != rank]
        parts = ["mismatch.name.{}".format(rank), "stalled"] + others
        expect_failure(
            lambda: hvd.allreduce(tf.ones([2]), name="mismatch.name.{}".format(rank)),
            parts,
            "name",
        )
    # The engine still works afterwards.
    expect_equal(hvd.allreduce(tf.ones([2]), op=hvd.Sum), tf.fill([2], float(size)), "after")


def main():
    try:
        hvd.allreduce(tf.ones([1]))
    except hvd.HoopError as e:
        if "hoop.tensorflow.init()" not in str(e):
            raise
    else:
        raise AssertionError("a collective before init() must raise")
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    check_every_dtype(rank, size)
    check_scaling_grouping_compression(rank, size)
    check_gradients(rank, size)
    check_helpers(rank, size)
    check_mismatches(rank, size, "--name-mismatch" in sys.argv)
    print("OK rank {} of {}: {}".format(rank, size, hvd.engine_stats()), flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
