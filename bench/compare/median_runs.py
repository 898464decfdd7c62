#!/usr/bin/env python3
"""The median over several run.sh runs of each ratio run.sh prints, cell by cell.

One run on a shared machine is one sample: the host's placement of the CPUs and other work
move whole runs by tens of percent (bench/compare/README.md). Give this the
results directories of several runs of the same sizes and it prints, per rank count and size,
each ratio's median over the runs, with every run's value and how many were above 1 (hoop
slower):

  bench/compare/median_runs.py bench/compare/out/20261128-135747 bench/compare/out/20261128-135916 \\
      bench/compare/out/20261128-140037

The ratios are run.sh's (bench/compare/README.md): hoop over TCP out of place over OpenMPI over
TCP, hoop over TCP in place over Gloo's best, hoop over shm out of place over OpenMPI over shm.
A cell that a run lacks (a peer it did not run) counts in no median.
"""
import argparse
import os
import re
import statistics
import sys

# Each ratio: its column title, hoop's rows file and field, the peer's rows file and field.
# Fields of a .rows line (run.sh): hoop's "bytes us busbw in-place-us in-place-busbw wrong", a
# peer's "bytes us busbw [algorithm]".
RATIOS = [
    ("hoop-tcp/MPI-tcp", "hoop_tcp", 1, "mpi_tcp", 1),
    ("hoop-tcp in-place/Gloo", "hoop_tcp", 3, "gloo_best", 1),
    ("hoop-shm/MPI-shm", "hoop_shm", 1, "mpi_shm", 1),
]


def read_rows(path):
    """{bytes: [fields]} of a .rows file; empty where the file is missing or empty."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields:
                rows[int(fields[0])] = fields
    return rows


def run_ratios(run_dir, np_dir):
    """{ratio title: {bytes: value}} of one run's rank count."""
    found = {}
    for title, hoop_file, hoop_field, peer_file, peer_field in RATIOS:
        hoop = read_rows(os.path.join(run_dir, np_dir, hoop_file + ".rows"))
        peer = read_rows(os.path.join(run_dir, np_dir, peer_file + ".rows"))
        for size in hoop.keys() & peer.keys():
            peer_us = float(peer[size][peer_field])
            if peer_us > 0:
                found.setdefault(title, {})[size] = float(hoop[size][hoop_field]) / peer_us
    return found


def human(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def cell(values):
    """'median (run, run, ...; k above 1)' or '-'."""
    if not values:
        return "-"
    runs = ", ".join(f"{v:.2f}" for v in values)
    above = sum(v > 1 for v in values)
    return f"{statistics.median(values):.2f} ({runs}; {above} above 1)"


def table(run_dirs, np_dir):
    per_run = [run_ratios(d, np_dir) for d in run_dirs]
    titles = [t for t, *_ in RATIOS if any(t in r for r in per_run)]
    if not titles:
        return []
    sizes = sorted({s for r in per_run for t in titles for s in r.get(t, {})})
    lines = [f"### {np_dir[2:]} ranks: each ratio's median over the runs that measured it, of "
             f"{len(run_dirs)} (each run's value; how many above 1)", "",
             "| size | " + " | ".join(titles) + " |",
             "|---:|" + "---:|" * len(titles)]
    for size in sizes:
        cells = [cell([r[t][size] for r in per_run if size in r.get(t, {})]) for t in titles]
        lines.append(f"| {human(size)} | " + " | ".join(cells) + " |")
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RESULTS_DIR",
                        help="run.sh's results directories (bench/compare/out/<date>-<time>)")
    args = parser.parse_args()
    for run_dir in args.runs:
        if not os.path.isdir(run_dir):
            sys.exit(f"median_runs: {run_dir} is not a directory")
    np_dirs = sorted({d for run_dir in args.runs for d in os.listdir(run_dir)
                      if re.fullmatch(r"np\d+", d)}, key=lambda d: int(d[2:]))
    if not np_dirs:
        sys.exit("median_runs: no npN directory in any of the runs: not run.sh results")
    printed = False
    for np_dir in np_dirs:
        lines = table(args.runs, np_dir)
        printed |= bool(lines)
        print("\n".join(lines))
    if not printed:
        sys.exit("median_runs: no ratio in any run (each needs hoop's and a peer's rows)")


if __name__ == "__main__":
    main()
