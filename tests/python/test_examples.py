"""The Fashion-MNIST examples run a few batches (the README has a full run's accuracy)."""

import pathlib

import pytest

from conftest import SOURCE_ROOT, free_port, run_ranks

EXAMPLES = SOURCE_ROOT / "examples"
DATA = pathlib.Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture(autouse=True)
def dataset():
    if not (DATA / "train-images-idx3-ubyte.gz").exists():
        pytest.skip("install dataset-fashion-mnist for the examples")


def test_horovod_style_example_on_two_ranks(tmp_path):
    result = run_ranks(
        2,
        EXAMPLES / "pytorch_fashion_mnist.py",
        "--epochs", 1, "--batches-per-epoch", 4, "--test-batches", 2,
        "--checkpoint", tmp_path / "model.pt",
    )
    assert "Test set: Average loss" in result.stdout
    assert (tmp_path / "model.pt").exists()


def test_ddp_example_on_two_ranks_under_hooprun():
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    result = run_ranks(
        2,
        EXAMPLES / "ddp_fashion_mnist.py",
        "--epochs", 1, "--batches-per-epoch", 4, "--test-batches", 2,
        env=env,
    )
    assert "test accuracy" in result.stdout
