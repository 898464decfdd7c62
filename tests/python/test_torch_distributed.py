"""The torch.distributed backend "hoop", under hooprun and under torch's own launcher."""

from conftest import PYTHON, WORKERS, free_port, run_program, run_ranks


def store_env():
    return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}


def test_every_call_on_three_ranks():
    run_ranks(3, "dist_backend.py", env=store_env())


# Debian's torch 1.13 on Python 3.11: torchrun's default --redirects/--tee "0" parse to None
# (3.11 no longer iterates the zero IntFlag member) and it crashes before starting a worker;
# "1" (tee stdout) avoids that.
TORCHRUN_311_WORKAROUND = ["--redirects", "1", "--tee", "1"]


def test_ddp_on_hoop_matches_ddp_on_gloo_under_torchrun():
    result = run_program(
        [
            PYTHON,
            "-m",
            "torch.distributed.run",
            *TORCHRUN_311_WORKAROUND,
            "--nproc_per_node=2",
            "--master_addr=127.0.0.1",
            "--master_port={}".format(free_port()),
            str(WORKERS / "ddp_compare.py"),
        ]
    )
    assert result.stdout.count("ddp on hoop matches gloo") == 2, result.stdout
