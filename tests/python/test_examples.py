"""The Fashion-MNIST examples run a few batches (the README has a full run's accuracy): both in
one job of two ranks under hooprun (workers/examples.py), the Horovod-style one first."""

import pathlib

import pytest

from conftest import SOURCE_ROOT, free_port, run_ranks

EXAMPLES = SOURCE_ROOT / "examples"
DATA = pathlib.Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture(autouse=True)
def dataset():
    if not (DATA / "train-images-idx3-ubyte.gz").exists():
        pytest.skip("install dataset-fashion-mnist for the examples")


def test_horovod_style_and_ddp_examples_on_two_ranks(tmp_path):
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}
    checkpoint = tmp_path / "model.pt"
    result = run_ranks(2, "examples.py", EXAMPLES, checkpoint, env=env)
    assert "Test set: Average loss" in result.stdout  # the Horovod-style example
    assert checkpoint.exists()
    assert "test accuracy" in result.stdout  # the DDP example, after it
