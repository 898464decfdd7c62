"""The allreduce op alone, float32 sum, 1 KiB .. 64 MiB: hoop.tensorflow's HoopAllreduce under
hooprun against TensorFlow's own collective op (tf.raw_ops.CollectiveReduceV2, RING) under the
multi-worker runtime that MultiWorkerMirroredStrategy sets up from TF_CONFIG. Both run inside a
tf.function, one op per call, and both results are checked.

    PYTHONPATH=build/python build/venv/bin/python3 bench/tensorflow/allreduce.py --ranks 2 4
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

parser = argparse.ArgumentParser()
parser.add_argument("--ranks", type=int, nargs="*", default=[2, 4])
parser.add_argument("--min-bytes", type=int, default=1024)
parser.add_argument("--max-bytes", type=int, default=64 << 20)
parser.add_argument("--factor", type=int, default=4)
parser.add_argument("--worker", choices=["hoop", "tensorflow"], help=argparse.SUPPRESS)


def iterations(nbytes):
    """Enough calls for a stable median at small sizes, few at large ones."""
    return max(5, min(100, (16 << 20) // nbytes))


def measure(kind, args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    if kind == "hoop":
        import hoop.tensorflow as hvd

        hvd.init()
        rank, size = hvd.rank(), hvd.size()

        @tf.function
        def reduce(t, key):
            return hvd.allreduce(t, op=hvd.Sum, name="bench")

        device = "/cpu:0"
    else:
        strategy = tf.distribute.MultiWorkerMirroredStrategy(
            communication_options=tf.distribute.experimental.CommunicationOptions(
                implementation=tf.distribute.experimental.CommunicationImplementation.RING
            )
        )
        rank = strategy.cluster_resolver.task_id
        size = strategy.num_replicas_in_sync
        device = "/job:worker/replica:0/task:{}/device:CPU:0".format(rank)

        @tf.function
        def reduce(t, key):
            return tf.raw_ops.CollectiveReduceV2(
                input=t, group_size=size, group_key=1, instance_key=key, ordering_token=[],
                merge_op="Add", final_op="Id", communication_hint="ring")

    nbytes = args.min_bytes
    key = 1000
    while nbytes <= args.max_bytes:
        count = nbytes // 4
        with tf.device(device):
            t = tf.fill([count], float(rank + 1))
            times = []
            for i in range(iterations(nbytes) + 3):
                key += 1
                start = time.perf_counter()
                out = reduce(t, tf.constant(key))
                value = float(out[-1])  # waits for the result
                times.append(time.perf_counter() - start)
        if value != size * (size + 1) / 2:
            raise SystemExit("{}: wrong sum {} at {} bytes".format(kind, value, nbytes))
        median = float(np.median(times[3:]))
        if rank == 0:
            print("RESULT {} ranks={} bytes={} median-us={:.1f} algbw-GB/s={:.3f}".format(
                kind, size, nbytes, median * 1e6, nbytes / median / 1e9), flush=True)
        nbytes *= args.factor


def main():
    args = parser.parse_args()
    if args.worker:
        measure(args.worker, args)
        return
    from cluster import run_workers

    common = ["--min-bytes", str(args.min_bytes), "--max-bytes", str(args.max_bytes),
              "--factor", str(args.factor)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    for ranks in args.ranks:
        command = [str(ROOT / "build" / "bin" / "hooprun"), "-np", str(ranks), sys.executable,
                   __file__, "--worker", "hoop"] + common
        out = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        print(*[l[l.index("RESULT"):] for l in out.splitlines() if "RESULT" in l], sep="\n", flush=True)
        out = run_workers(ranks, [__file__, "--worker", "tensorflow"] + common)
        print(*[l[l.index("RESULT"):] for l in out.splitlines() if "RESULT" in l], sep="\n", flush=True)


if __name__ == "__main__":
    main()
