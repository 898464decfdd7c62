"""Runs both Fashion-MNIST examples in one job, one after the other, as `python3 EXAMPLE ARGS`
would (each rank imports torch once for both): the Horovod-style one, then the DDP one.
Usage: examples.py EXAMPLES_DIR CHECKPOINT (hooprun with MASTER_ADDR/MASTER_PORT for DDP)."""

import pathlib
import runpy
import sys

SHORT_RUN = ["--epochs", "1", "--batches-per-epoch", "4", "--test-batches", "2"]


def run_example(path, *args):
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.parent))
    runpy.run_path(str(path), run_name="__main__")


def main():
    examples, checkpoint = pathlib.Path(sys.argv[1]), sys.argv[2]
    run_example(examples / "pytorch_fashion_mnist.py", *SHORT_RUN, "--checkpoint", checkpoint)
    run_example(examples / "ddp_fashion_mnist.py", *SHORT_RUN)


if __name__ == "__main__":
    main()
