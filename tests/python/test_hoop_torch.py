"""hoop.torch (Horovod's API) on real ranks started by hooprun. Each job runs several checks in
turn (workers/collectives.py), since every rank pays a torch import."""

from conftest import run_ranks


def passed(result, ranks):
    assert result.stdout.count("every step passed") == ranks, result.stdout


def test_every_collective_and_dtype_data_parallel_sgd_and_errors_on_three_ranks():
    # The engine; DistributedOptimizer with SGD ends where one rank with the whole batch ends;
    # misuse raises HoopError with a clear message (last: its final call fails on purpose).
    result = run_ranks(3, "collectives.py", "all", "data_parallel:sgd:5", "errors")
    passed(result, 3)
    assert result.stdout.count("sgd 5 steps match") == 3
    assert result.stdout.count("errors ok") == 3


def test_every_collective_without_the_engine_and_data_parallel_adam():
    # HOOP_TORCH_ENGINE=0: the same API straight on the C API, requests in submission order;
    # Adam with two backward passes per step and synchronize()/skip_synchronize().
    result = run_ranks(2, "collectives.py", "all", "data_parallel:adam:5",
                       env={"HOOP_TORCH_ENGINE": "0"})
    passed(result, 2)
    assert result.stdout.count("adam 5 steps match") == 2


def test_one_rank():
    passed(run_ranks(1, "collectives.py", "allreduce", "allgather", "broadcast", "objects"), 1)
