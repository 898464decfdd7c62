"""Launching real ranks for the hoop Python tests.

Each test starts N processes with hooprun (or torch's launcher) running a worker script from
workers/; a worker checks its own results and exits non-zero on the first mismatch, and the
launcher's exit status reports the first failing rank.
"""

import os
import pathlib
import socket
import subprocess

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
WORKERS = TESTS / "workers"
SOURCE_ROOT = TESTS.parent.parent
BUILD = pathlib.Path(os.environ.get("HOOP_BUILD_DIR", SOURCE_ROOT / "build"))
HOOPRUN = BUILD / "bin" / "hooprun"
PYTHON = "/usr/bin/python3"


def _environment(extra=None):
    env = dict(os.environ)
    package = str(BUILD / "python")
    env["PYTHONPATH"] = package + os.pathsep + env.get("PYTHONPATH", "")
    # Loopback only, and one thread per rank: the ranks share a couple of cores.
    env["HOOP_SOCKET_IFNAME"] = "=lo"
    env["OMP_NUM_THREADS"] = "1"
    env.setdefault("HOOP_TIMEOUT", "60")
    env.update(extra or {})
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(result, what):
    if result.returncode != 0:
        pytest.fail(
            "{} exited {}\n--- stdout ---\n{}\n--- stderr ---\n{}".format(
                what, result.returncode, result.stdout[-6000:], result.stderr[-6000:]
            )
        )
    return result


def run_ranks(ranks, script, *args, env=None, timeout=120, expect_success=True, python=PYTHON):
    """Runs workers/<script> (or an absolute path) on `ranks` ranks under hooprun with `python`;
    returns the CompletedProcess."""
    command = [str(HOOPRUN), "-np", str(ranks), "--timeout", str(timeout), str(python)]
    script = pathlib.Path(script) if os.path.isabs(str(script)) else WORKERS / script
    command += [str(script)] + [str(a) for a in args]
    result = subprocess.run(
        command, env=_environment(env), capture_output=True, text=True, timeout=timeout + 30
    )
    return _check(result, " ".join(command)) if expect_success else result


def run_program(command, env=None, timeout=120):
    """Runs any command with the package on PYTHONPATH; fails the test on a non-zero exit."""
    result = subprocess.run(
        command, env=_environment(env), capture_output=True, text=True, timeout=timeout
    )
    return _check(result, " ".join(str(c) for c in command))


@pytest.fixture(scope="session", autouse=True)
def built_package():
    if not HOOPRUN.exists() or not (BUILD / "python" / "hoop").is_dir():
        pytest.fail("build hoop first (cmake --build build): {} missing".format(BUILD))
