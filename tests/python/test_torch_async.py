"""The "hoop" torch.distributed backend is asynchronous: DDP exact, Works pending while the caller
goes on, failures and timeouts raised in wait() (ranks started here, one process each)."""

import subprocess

import pytest

from conftest import PYTHON, WORKERS, _environment, free_port


def run_modes(ranks, mode, timeout=60):
    """Runs workers/dist_async.py <mode> on `ranks` ranks; returns each rank's (exit code, output)."""
    port = free_port()
    processes = []
    for rank in range(ranks):
        env = _environment(
            {
                "RANK": str(rank),
                "WORLD_SIZE": str(ranks),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": str(port),
            }
        )
        processes.append(
            subprocess.Popen(
                [PYTHON, str(WORKERS / "dist_async.py"), mode],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    results = []
    for p in processes:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += "\n(killed after {} s)".format(timeout)
        results.append((p.returncode, out))
    return results


def expect(results, ranks, text):
    report = "\n".join("rank {} exit {}:\n{}".format(r, c, o) for r, (c, o) in enumerate(results))
    for rank in ranks:
        code, out = results[rank]
        if code != 0 or text not in out:
            pytest.fail("rank {} lacks {!r}\n{}".format(rank, text, report))


@pytest.mark.parametrize("ranks", [2, 3])
def test_work_pending_while_the_caller_goes_on_and_ddp_matches_the_whole_batch(ranks):
    results = run_modes(ranks, "ddp")
    expect(results, [0], "work pending while the caller went on")
    expect(results, range(ranks), "overlapped allreduce exact")
    expect(results, range(ranks), "ddp matches the whole batch")


def test_killed_rank_raises_in_the_survivors_wait_naming_it():
    results = run_modes(3, "killed")
    expect(results, [0, 1], "wait raised")


def test_timeout_raises_in_wait():
    expect(run_modes(2, "timeout"), [0], "timed out")
