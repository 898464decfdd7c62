"""The hoop package in one process, and that a failing worker fails its test."""

import subprocess

from conftest import PYTHON, _environment, run_ranks


def python(code):
    return subprocess.run(
        [PYTHON, "-c", code], env=_environment(), capture_output=True, text=True, timeout=60
    )


def test_import_and_error_before_init():
    result = python(
        "import hoop\n"
        "assert not hoop.is_initialized()\n"
        "try:\n"
        "    hoop.size()\n"
        "except hoop.HoopError as e:\n"
        "    print('HoopError', e.code, e)\n"
    )
    assert result.returncode == 0, result.stderr
    assert "HoopError 5 hoop is not initialized" in result.stdout


def test_single_process_init_reads_the_environment():
    # No launcher variables: hoop runs as a job of one, as Horovod does.
    result = python(
        "import hoop\n"
        "hoop.init()\n"
        "print(hoop.rank(), hoop.size(), hoop.local_rank(), hoop.local_size(),\n"
        "      hoop.cross_rank(), hoop.cross_size())\n"
        "hoop.shutdown(); hoop.shutdown()\n"
        "assert not hoop.is_initialized()\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1", "0", "1", "0", "1"]


def test_hoop_error_from_cpp_carries_code_and_message():
    result = python(
        "import hoop\n"
        "from hoop import _hoop\n"
        "try:\n"
        "    _hoop.Communicator.from_unique_id(2, b'short', 0)\n"
        "except hoop.HoopError as e:\n"
        "    print(e.code, e.code_name, '|', e)\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("4 ")
    assert "a unique id has 128 bytes, got 5" in result.stdout


def test_a_failing_rank_fails_the_launch():
    # The harness itself must be able to fail: a worker that raises makes run_ranks fail.
    broken = run_ranks(2, "exit_status.py", 1, 3, expect_success=False)
    assert broken.returncode == 3
    assert run_ranks(2, "exit_status.py", 1, 0).returncode == 0
