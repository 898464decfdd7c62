"""hoop.torch (Horovod's API) on real ranks started by hooprun."""

import pytest

from conftest import run_ranks


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_collective_and_dtype(ranks):
    result = run_ranks(ranks, "collectives.py")
    assert result.stdout.count(" ok") == ranks


def test_every_collective_without_the_engine():
    # HOOP_TORCH_ENGINE=0: the same API straight on the C API, requests in submission order.
    result = run_ranks(2, "collectives.py", env={"HOOP_TORCH_ENGINE": "0"})
    assert result.stdout.count(" ok") == 2


def test_one_rank():
    run_ranks(1, "collectives.py", "allreduce", "allgather", "broadcast", "objects")


def test_errors_are_hoop_errors_with_clear_messages():
    run_ranks(2, "errors.py")


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_data_parallel_matches_one_rank_with_the_whole_batch(optimizer):
    run_ranks(3 if optimizer == "sgd" else 2, "data_parallel.py", optimizer, 5)
