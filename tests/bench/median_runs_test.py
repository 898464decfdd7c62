#!/usr/bin/env python3
"""bench/compare/median_runs.py on results directories made here: each cell's median over the
runs that have it, every run's value, the count above 1, and clear errors for what is not
run.sh's output."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "compare",
                      "median_runs.py")


def write_rows(run_dir, np_dir, name, lines):
    os.makedirs(os.path.join(run_dir, np_dir), exist_ok=True)
    with open(os.path.join(run_dir, np_dir, name + ".rows"), "w") as f:
        f.write("".join(line + "\n" for line in lines))


def run(*dirs):
    return subprocess.run([sys.executable, SCRIPT, *dirs], capture_output=True, text=True,
                          check=False)


class MedianRuns(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory()
        self.runs = [os.path.join(self.work.name, f"run{i}") for i in range(3)]

    def tearDown(self):
        self.work.cleanup()

    def test_each_cell_is_the_median_of_the_runs_that_have_it(self):
        # hoop's rows: bytes us busbw in-place-us in-place-busbw wrong; a peer's: bytes us busbw.
        hoop_us = [(50, 40), (150, 60), (80, 100)]
        for run_dir, (out_us, in_us) in zip(self.runs, hoop_us):
            write_rows(run_dir, "np2", "hoop_tcp", [f"1024 {out_us} 1.0 {in_us} 1.0 0"])
            write_rows(run_dir, "np2", "mpi_tcp", ["1024 100 1.0"])
        # Only the first run ran Gloo; the shm columns nowhere.
        write_rows(self.runs[0], "np2", "gloo_best", ["1024 20 1.0 ring"])
        result = run(*self.runs)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("| size | hoop-tcp/MPI-tcp | hoop-tcp in-place/Gloo |", lines)
        self.assertIn("| 1 KiB | 0.80 (0.50, 1.50, 0.80; 1 above 1) | 2.00 (2.00; 1 above 1) |",
                      lines)
        self.assertTrue(any(line.startswith("### 2 ranks:") and "of 3" in line
                            for line in lines))

    def test_rank_counts_come_in_order_each_with_its_sizes(self):
        for run_dir in self.runs[:2]:
            write_rows(run_dir, "np4", "hoop_shm", ["8 3 1.0 3 1.0 0", "2097152 30 1.0 30 1.0 0"])
            write_rows(run_dir, "np4", "mpi_shm", ["8 4 1.0", "2097152 20 1.0"])
            write_rows(run_dir, "np2", "hoop_shm", ["8 1 1.0 1 1.0 0"])
            write_rows(run_dir, "np2", "mpi_shm", ["8 2 1.0"])
        result = run(*self.runs[:2])
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout
        self.assertLess(out.index("### 2 ranks"), out.index("### 4 ranks"))
        self.assertIn("| 8 B | 0.50 (0.50, 0.50; 0 above 1) |", out)
        self.assertIn("| 8 B | 0.75 (0.75, 0.75; 0 above 1) |", out)
        self.assertIn("| 2 MiB | 1.50 (1.50, 1.50; 2 above 1) |", out)

    def test_what_is_not_run_sh_output_is_named(self):
        missing = os.path.join(self.work.name, "nowhere")
        result = run(missing)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(f"{missing} is not a directory", result.stderr)
        os.makedirs(self.runs[0])
        result = run(self.runs[0])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no npN directory", result.stderr)
        write_rows(self.runs[0], "np2", "hoop_tcp", ["1024 50 1.0 40 1.0 0"])
        result = run(self.runs[0])
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("no ratio in any run", result.stderr)


if __name__ == "__main__":
    unittest.main()
