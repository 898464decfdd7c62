"""hoop.tensorflow and hoop.tensorflow.keras across real ranks (CTest's python.tensorflow runs
this file with the interpreter TensorFlow is installed in). TensorFlow takes seconds to import,
so each launch runs many checks (workers/tf_*.py)."""

import pathlib
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS.parent))
from conftest import SOURCE_ROOT, built_package, run_ranks  # noqa: E402,F401

WORKERS = TESTS / "workers"
EXAMPLES = SOURCE_ROOT / "examples"
DATA = pathlib.Path("/usr/share/datasets/fashion-mnist")
PYTHON = sys.executable


def run(ranks, script, *args, env=None, timeout=150):
    extra = {"TF_CPP_MIN_LOG_LEVEL": "2", "TF_NUM_INTEROP_THREADS": "2",
             "TF_NUM_INTRAOP_THREADS": "1"}
    extra.update(env or {})
    return run_ranks(ranks, script, *args, env=extra, timeout=timeout, python=PYTHON)


def expect_ok(result, ranks):
    for r in range(ranks):
        assert "OK rank {} of {}".format(r, ranks) in result.stdout, result.stdout


def test_collectives_every_dtype_eager_and_graph_on_two_ranks():
    # A short stall limit for the name mismatch; everything else finishes long before it.
    result = run(2, WORKERS / "tf_collectives.py", "--name-mismatch",
                 env={"HOOP_STALL_CHECK_TIME": "8"})
    expect_ok(result, 2)
    for r in range(2):
        assert "rank {} name error".format(r) in result.stdout
        assert "rank {} shape eager error".format(r) in result.stdout


def test_collectives_every_dtype_eager_and_graph_on_three_ranks():
    expect_ok(run(3, WORKERS / "tf_collectives.py"), 3)


def test_keras_distributed_optimizer_callbacks_and_load_model(tmp_path):
    expect_ok(run(2, WORKERS / "tf_keras.py", tmp_path), 2)


@pytest.fixture
def dataset():
    if not (DATA / "train-images-idx3-ubyte.gz").exists():
        pytest.skip("install dataset-fashion-mnist for the examples")


def test_keras_example(dataset, tmp_path):
    checkpoint = tmp_path / "model.keras"
    result = run(2, EXAMPLES / "tensorflow_keras_fashion_mnist.py", "--epochs", 1,
                 "--batches-per-epoch", 3, "--test-batches", 1, "--checkpoint", checkpoint)
    assert "test accuracy" in result.stdout
    assert checkpoint.exists()


def test_gradient_tape_example(dataset, tmp_path):
    result = run(2, EXAMPLES / "tensorflow_gradient_tape_fashion_mnist.py", "--steps", 6,
                 "--checkpoint-dir", tmp_path)
    assert "final loss" in result.stdout
    assert list(tmp_path.glob("ckpt-1*"))


def test_monitored_training_session_example(dataset, tmp_path):
    result = run(2, EXAMPLES / "tensorflow_v1_fashion_mnist.py", "--steps", 6,
                 "--checkpoint-dir", tmp_path)
    assert "finished after 3 steps" in result.stdout
    assert (tmp_path / "checkpoint").exists()
