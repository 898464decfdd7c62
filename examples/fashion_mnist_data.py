"""Fashion-MNIST from Debian's dataset-fashion-mnist package (idx files, gzip), without
torchvision or a download: the examples read it with gzip and numpy. The PyTorch examples use
load() (a TensorDataset), the TensorFlow ones load_arrays() (numpy, no torch needed)."""

import gzip
import os

import numpy as np

DEFAULT_DIR = "/usr/share/datasets/fashion-mnist"


def _read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    # idx header: two zero bytes, the element type (0x08 = unsigned byte), the rank, then one
    # big-endian uint32 per dimension.
    if data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError("{} is not an unsigned-byte idx file".format(path))
    rank = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(rank))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank)
    if array.size != int(np.prod(shape)):
        raise ValueError("{}: {} bytes of data for shape {}".format(path, array.size, shape))
    return array.reshape(shape)


def load_arrays(split, directory=DEFAULT_DIR):
    """(images, labels) of split "train" or "t10k" as numpy: float32 [N, 28, 28] normalised the
    way the MNIST examples do, int64 [N]."""
    images = _read_idx(os.path.join(directory, "{}-images-idx3-ubyte.gz".format(split)))
    labels = _read_idx(os.path.join(directory, "{}-labels-idx1-ubyte.gz".format(split)))
    x = images.astype(np.float32) / 255.0
    x = (x - np.float32(0.2860)) / np.float32(0.3530)  # Fashion-MNIST's mean and deviation
    return x, labels.astype(np.int64)


def load(split, directory=DEFAULT_DIR):
    """(images, labels) of split "train" or "t10k" as a torch TensorDataset: float32
    [N, 1, 28, 28], int64 [N]."""
    import torch

    x, y = load_arrays(split, directory)
    return torch.utils.data.TensorDataset(torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y))


def step_summary(step_times):
    """Median wall time and median CPU time (all of the process's threads) per training step,
    skipping the first five (warm-up). CPU time is what a step costs when ranks share cores."""
    kept = step_times[5:] or step_times
    wall = sorted(w for w, _ in kept)[len(kept) // 2]
    cpu = sorted(c for _, c in kept)[len(kept) // 2]
    return "median step {:.2f} ms (cpu {:.2f} ms)".format(1000 * wall, 1000 * cpu)
