#!/usr/bin/env python3
"""hoop's own allreduce choice against every schedule forced, in one table.

For each size: the schedule hoop picked (with how many rounds picked it, where launches
differ), its time when forced, the fastest forced schedule and its time, and their ratio (the
tuner's target: within 10%); then the time of hoop's own run. Rounds alternate hoop's choice and
the forced runs, so a noisy machine hurts both alike. One table judges by hoop-perf's time (a
batch's mean call: what a loop pays), one by its median call, both of the slowest rank, out of
place, each the median over rounds, from the same runs (METRICS says why they differ).

  bench/compare/tuner_table.py --build build --ranks 4 --transport shm \\
      --sizes "8:2M:4:200:20 8M:256M:4:10:2" --rounds 3

--baseline OTHER_BUILD runs that build's own choice too, in every round beside --build's, and
judges its picks against the same forced runs: an A/B of a tuner change.

--interleave runs hoop's own choice and every schedule forced in one launch per size range,
each row timed on every one in turn on one communicator (hoop-perf --algo auto,all
--interleave), so that a machine whose speed drifts between launches, or over one, moves every
schedule's row alike, and every schedule runs on the same connections and buffers. Its tables
add "own/fastest, same launch": each launch's own run over the fastest schedule forced in that
launch, the median over launches (the fastest of several noisy figures is biased low, so this
reads a little high where schedules are close).

"its spread" is the fastest schedule's figures over the rounds, slowest over fastest: how far
one schedule's batches lie apart on this machine, the noise any ratio in the table stands on.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def parse_range(spec):
    parts = spec.split(":")
    if len(parts) not in (3, 5):
        sys.exit(f"tuner_table: size range '{spec}' is not b:e:f or b:e:f:n:w")
    begin, end, factor = parts[:3]
    iters, warmup = (parts[3], parts[4]) if len(parts) == 5 else ("20", "5")
    return begin, end, factor, iters, warmup


def size_bytes(text):
    """hoop-perf's size syntax: a number with an optional K, M or G (binary multiples)."""
    multiple = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper())
    return int(text[:-1]) * multiple if multiple else int(text)


def launches(size_range, per_size):
    """The size ranges to launch hoop-perf on: the range, or each of its sizes on its own."""
    begin, end, factor, iters, warmup = size_range
    if not per_size:
        return [size_range]
    sizes = []
    size = size_bytes(begin)
    while size <= size_bytes(end):
        sizes.append(str(size))
        size *= int(factor)
    return [(size, size, factor, iters, warmup) for size in sizes]


def run_perf(args, size_range, algo, json_path, build=None, log_path=None, interleave=False):
    begin, end, factor, iters, warmup = size_range
    build = build or args.build
    env = dict(os.environ)
    if log_path:
        # The trial's figures and each class's settling, every rank's (schedule_trial.cc).
        env.update(HOOP_DEBUG="INFO", HOOP_DEBUG_SUBSYS="TUNE")
    # A tree made by pack.sh carries the shared libraries its programs need.
    packed_libs = os.path.join(build, "lib")
    if os.path.isdir(packed_libs):
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (os.path.abspath(packed_libs), env.get("LD_LIBRARY_PATH")) if p)
    env.setdefault("HOOP_SOCKET_IFNAME", "=lo")
    if args.transport != "auto":
        env["HOOP_TRANSPORT"] = args.transport
    command = [os.path.join(build, "bin", "hooprun"), "-np", str(args.ranks),
               "--bind-to", args.bind, os.path.join(build, "bin", "hoop-perf"),
               "allreduce", "-b", begin, "-e", end, "-f", factor, "-n", iters, "-w", warmup,
               "-a", "3", "-d", "float", "--json", json_path]
    if algo:
        command += ["--algo", algo]
    if interleave:
        command.append("--interleave")
    if log_path:
        with open(log_path, "w") as log:
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=log)
    else:
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return perf_rows(json_path)


def round_trip_ns(build):
    """A cache line's round trip between two CPUs right now (hoop-cacheline-rtt), in ns; None
    where the program is missing or there is one CPU. On a virtual machine it says where the
    host runs the guest's CPUs, which can move shared-memory figures by several times
    (bench/compare/README.md)."""
    program = os.path.join(build, "bin", "hoop-cacheline-rtt")
    if not os.path.exists(program):
        return None
    result = subprocess.run([program, "--trips", "50000", "--repeats", "3"],
                            capture_output=True, text=True, check=False)
    match = re.search(r": (\d+) ns median", result.stdout)
    return int(match.group(1)) if match else None


def perf_rows(json_path):
    """hoop-perf's rows (its JSON, bench/perf/README.md), each with the table it belongs to
    ("auto": hoop's own choice), the schedule that ran it and its out-of-place figures."""
    with open(json_path) as f:
        doc = json.load(f)
    rows = iter(doc["rows"])
    flat = []
    for table in doc["tables"]:
        for _ in range(table["rows"]):
            row = next(rows)
            flat.append({"table": table["algorithm"], "size_bytes": row["size_bytes"],
                         "algorithm": row["algorithm"],
                         **{metric: row["out_of_place"][key]
                            for metric, (key, _) in METRICS.items()}})
    return flat


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--transport", default="auto", choices=["auto", "shm", "tcp"])
    parser.add_argument("--sizes", default="8:2M:4:200:20 8M:256M:4:10:2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bind", default="none", choices=["none", "core"],
                        help="core: each rank on one core (hooprun --bind-to core), which "
                             "narrows the spread between launches when ranks share cores")
    parser.add_argument("--all-schedules", action="store_true",
                        help="also print every forced schedule's time per size")
    parser.add_argument("--baseline", metavar="BUILD",
                        help="another build whose own choice runs beside --build's in every "
                             "round (an A/B of the tuner against the same forced runs)")
    parser.add_argument("--launch-per-size", action="store_true",
                        help="launch hoop-perf once per size rather than once per size range. "
                             "hoop-perf --algo all times each schedule over the whole range "
                             "before the next, so a range's schedules run minutes apart, and a "
                             "machine whose speed drifts moves one schedule's figures and not "
                             "another's; a launch per size runs them within seconds. But every "
                             "row is then among a launch's first calls, which can read several "
                             "times slower than the same calls later on")
    parser.add_argument("--interleave", action="store_true",
                        help="one launch per size range runs hoop's own choice and every "
                             "schedule forced, each row on every one in turn (hoop-perf --algo "
                             "auto,all --interleave); not with --baseline, whose library cannot "
                             "share a launch")
    parser.add_argument("--logs", metavar="DIR",
                        help="keep the tuner's log of each launch of hoop's own choice in DIR "
                             "(round<R>-<first size>-build|baseline.log): how each class settled, "
                             "with every candidate's figures")
    args = parser.parse_args()
    if args.interleave and args.baseline:
        parser.error("--interleave runs one library's launches; --baseline needs its own")
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)

    # Every time is kept in both of hoop-perf's figures (METRICS), from the same runs.
    chosen = {}  # size -> (schedules per round, {metric: [us per round]})
    baseline = {}  # the same for --baseline
    forced = {}  # size -> schedule -> {metric: [us per round]}
    same_launch = {}  # size -> {metric: [hoop's own run / fastest forced, per interleaved launch]}
    trips = []  # per interleaved launch: (round, first size, round trip ns before, after)
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "rows.json")
        for round_number in range(args.rounds):
            for size_range in (one for spec in args.sizes.split()
                               for one in launches(parse_range(spec), args.launch_per_size)):
                if args.interleave:
                    log_path = launch_log(args, round_number, size_range, "build")
                    before = round_trip_ns(args.build)
                    rows = run_perf(args, size_range, "auto,all", path, None, log_path,
                                    interleave=True)
                    trips.append((round_number, size_range[0], before,
                                  round_trip_ns(args.build)))
                    for row in rows:
                        if row["table"] == "auto":
                            add_pick(chosen, row)
                        else:
                            add_forced(forced, row)
                    add_same_launch(same_launch, rows)
                    continue
                own_runs = [(chosen, args.build)]
                if args.baseline:
                    own_runs.append((baseline, args.baseline))
                for picks, build in own_runs:
                    which = "baseline" if picks is baseline else "build"
                    log_path = launch_log(args, round_number, size_range, which)
                    for row in run_perf(args, size_range, None, path, build, log_path):
                        add_pick(picks, row)
                for row in run_perf(args, size_range, "all", path):
                    add_forced(forced, row)

    print(f"allreduce float32 sum, {args.ranks} ranks, transport {args.transport}, "
          f"{args.rounds} rounds, --bind {args.bind}"
          f"{', interleaved row by row' if args.interleave else ''}")
    if trips:
        print("cache line round trip between two CPUs before / after each launch (ns): " +
              "; ".join(f"round {r} from {size}: {before or '-'} / {after or '-'}"
                        for r, size, before, after in trips))
    for metric in METRICS:
        print_table(args, metric, chosen, baseline, forced, same_launch)
        if args.all_schedules:
            print_all_schedules(forced, metric)


# The two figures hoop-perf reports per size, both of the slowest rank, out of place: its time
# column (a batch's mean call: what a loop of calls pays, tails included) and its median call.
# They rank schedules differently where ranks share CPUs: a call's slowest rank is the one that
# came first and waited, so the median of those maxima charges a schedule for its ranks' skew in
# arrival, which a loop does not pay.
METRICS = {
    "mean": ("time_us", "mean call of a batch"),
    "median": ("median_us", "median call"),
}


def launch_log(args, round_number, size_range, which):
    """Where --logs keeps a launch's tuner log (None without --logs)."""
    return args.logs and os.path.join(args.logs,
                                      f"round{round_number}-{size_range[0]}-{which}.log")


def add_pick(picks, row):
    """A row of hoop's own choice: the schedule it ran and its times."""
    entry = picks.setdefault(int(row["size_bytes"]), ([], {}))
    entry[0].append(row["algorithm"])
    add_times(entry[1], row)


def add_forced(forced, row):
    """A row of a forced table, where that schedule ran it. Where it cannot serve the row (one-shot
    above its eager buffers, the hierarchy on one host) hoop's own choice ran: left out, so that
    every schedule's figure comes from its own table's rows alone."""
    if row["algorithm"] == row["table"]:
        add_times(forced.setdefault(int(row["size_bytes"]), {}).setdefault(row["algorithm"], {}),
                  row)


def add_times(times, row):
    for metric in METRICS:
        times.setdefault(metric, []).append(float(row[metric]))


def add_same_launch(same_launch, rows):
    """One interleaved launch's rows: at each size, hoop's own run over the fastest schedule forced
    in that launch. Both ran on one communicator, row by row in turn, so a launch whose machine
    was slower or faster moves both alike, where the medians over rounds pair figures of
    different launches."""
    by_size = {}
    for row in rows:
        if row["table"] == "auto" or row["algorithm"] == row["table"]:
            by_size.setdefault(int(row["size_bytes"]), []).append(row)
    for size, size_rows in by_size.items():
        own = [r for r in size_rows if r["table"] == "auto"]
        schedules = [r for r in size_rows if r["table"] != "auto"]
        if not own or not schedules:
            continue
        for metric in METRICS:
            fastest = min(float(r[metric]) for r in schedules)
            same_launch.setdefault(size, {}).setdefault(metric, []).append(
                float(own[0][metric]) / fastest)


def spread(times):
    """How far one schedule's figures over the rounds lie apart, slowest over fastest: the noise a
    ratio between two figures of the table stands on."""
    return max(times) / min(times)


def print_table(args, metric, chosen, baseline, forced, same_launch):
    print(f"\n### Judged by the {METRICS[metric][1]} (us of the slowest rank, median over rounds)\n")
    print("| size | hoop's pick | pick forced us | fastest forced | us | its spread | pick/fastest "
          "| hoop's own run us |" + (" own/fastest, same launch |" if same_launch else "")
          + (" baseline's pick | its pick/fastest |" if args.baseline else ""))
    print("|---:|---|---:|---|---:|---:|---:|---:|" + ("---:|" if same_launch else "")
          + ("---|---:|" if args.baseline else ""))
    worst = 0.0
    worst_same_launch = 0.0
    baseline_worst = 0.0
    for size in sorted(chosen):
        forced_us = {name: statistics.median(t[metric]) for name, t in forced[size].items()}
        best_name, best_us = min(forced_us.items(), key=lambda item: item[1])
        label, pick_us, own_us = judge_picks(chosen[size], forced_us, metric)
        ratio = pick_us / best_us
        worst = max(worst, ratio)
        line = (f"| {size} | {label} | {pick_us:.1f} | {best_name} | {best_us:.1f} "
                f"| {spread(forced[size][best_name][metric]):.2f} | {ratio:.2f} | {own_us:.1f} |")
        if same_launch:
            ratios = same_launch.get(size, {}).get(metric)
            own_ratio = statistics.median(ratios) if ratios else None
            if own_ratio is not None:
                worst_same_launch = max(worst_same_launch, own_ratio)
            line += f" {own_ratio:.2f} |" if own_ratio is not None else " - |"
        if args.baseline:
            base_label, base_us, _ = judge_picks(baseline[size], forced_us, metric)
            baseline_worst = max(baseline_worst, base_us / best_us)
            line += f" {base_label} | {base_us / best_us:.2f} |"
        print(line)
    print(f"\nworst pick/fastest by the {METRICS[metric][1]}: {worst:.2f}; "
          f"{split_sizes(chosen)} of {len(chosen)} sizes picked differently between launches")
    if same_launch:
        print(f"worst own/fastest in the same launch (median over launches): "
              f"{worst_same_launch:.2f}")
    if args.baseline:
        print(f"worst pick/fastest of the baseline ({args.baseline}): {baseline_worst:.2f}; "
              f"{split_sizes(baseline)} of {len(baseline)} sizes picked differently")


def split_sizes(picks_by_size):
    """How many sizes a build's launches did not all settle alike: the noise the trial let in."""
    return sum(len(set(picks)) > 1 for picks, _ in picks_by_size.values())


def judge_picks(chosen, forced_us, metric):
    """A build's picks at one size: their label, their forced time, and its own runs' time.

    The pick's quality is its own forced time against the fastest forced one, both from the
    forced runs (hoop's own run, in another process, differs by the machine's noise). Each
    launch calibrates anew and may pick differently: every round's pick counts, and the pick's
    time is the mean over rounds of the forced time of that round's pick.
    """
    picks, times = chosen
    own_us = statistics.median(times[metric])
    pick_us = statistics.mean(forced_us.get(p, own_us) for p in picks)
    counts = collections.Counter(picks).most_common()
    label = counts[0][0] if len(counts) == 1 else ", ".join(
        f"{name} {n}/{len(picks)}" for name, n in counts)
    return label, pick_us, own_us


def print_all_schedules(forced, metric):
    """Every forced schedule's time per size (median over rounds): what the model is fitted to."""
    names = sorted({name for per_size in forced.values() for name in per_size})
    print("\n| size | " + " | ".join(names) + " |")
    print("|---:|" + "---:|" * len(names))
    for size in sorted(forced):
        cells = []
        for name in names:
            times = forced[size].get(name)
            cells.append(f"{statistics.median(times[metric]):.1f}" if times else "-")
        print(f"| {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
