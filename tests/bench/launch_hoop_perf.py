#!/usr/bin/python3
"""Runs hoop-perf under a real launcher's environment and checks how it ended.

  launch_hoop_perf.py mpirun MPIRUN NP HOOP_PERF ARGS...
  launch_hoop_perf.py torchrun NP HOOP_PERF ARGS...
  launch_hoop_perf.py torchrun-wrong NP HOOP_PERF ARGS...

mpirun: MPIRUN starts NP ranks (OMPI_COMM_WORLD_* name them), rendezvous at HOOP_ROOT_ADDR on
a free local port; --tag-output marks each line with its rank so rank 0's footer can be told
apart. torchrun: this script plays torchrun, starting NP processes with RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT (hoop listens on MASTER_PORT + 1).

Passes (exit 0) when every rank exits 0 and rank 0 printed "# Out of bounds values : 0 OK".
torchrun-wrong is the checks' own test (with HOOP_PERF_CORRUPT=1): it passes only when rank 0
exits 3 and prints a non-zero "Out of bounds values ... FAILED", so a run that breaks some other
way does not count. Exit 77 (CTest's SKIP_RETURN_CODE) when MPIRUN does not exist; 1 on failure.
"""

import os
import re
import socket
import subprocess
import sys

SKIP = 77
TIMEOUT_S = 240
FOOTER = re.compile(r"^# Out of bounds values : 0 OK$", re.MULTILINE)
WRONG_FOOTER = re.compile(r"^# Out of bounds values : [1-9][0-9]* FAILED$", re.MULTILINE)


def free_port(pair):
    """A port nothing listens on now (and, with pair, port + 1 too), from the kernel's picks.

    Binding port 0 lets the kernel choose, so concurrent tests do not collide the way a port
    derived from a pid can. The small window between closing and hoop binding is acceptable.
    """
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            if not pair:
                return port
            if port + 1 > 65535:
                continue
            try:
                with socket.socket() as second:
                    second.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue
    sys.exit("launch_hoop_perf.py: no free port pair found")


def fail(message, outputs):
    for label, text in outputs:
        print(f"--- {label} ---\n{text}")
    print(f"FAILED: {message}")
    sys.exit(1)


def run_mpirun(mpirun, nranks, command):
    if not os.path.exists(mpirun):
        print(f"{mpirun} not found; skipping")
        sys.exit(SKIP)
    # The port is free when picked, but another test's connection may take it before the root
    # binds it (both come from the kernel's ephemeral range): then pick again, once.
    for attempt in range(2):
        root = f"127.0.0.1:{free_port(pair=False)}"
        argv = [mpirun, "--allow-run-as-root", "--oversubscribe", "--tag-output", "-np",
                str(nranks), "-x", f"HOOP_ROOT_ADDR={root}", "-x", "HOOP_SOCKET_IFNAME"] + command
        print("$ " + " ".join(argv), flush=True)
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as timeout:
            fail(f"mpirun ran past {TIMEOUT_S} s", [("mpirun", timeout.stdout or "")])
        if done.returncode == 0 or "already in use" not in done.stdout.lower():
            break
        print(f"the root's port {root} was taken meanwhile; trying another", flush=True)
    outputs = [("mpirun", done.stdout)]
    if done.returncode != 0:
        fail(f"mpirun exited with {done.returncode}", outputs)
    # --tag-output prefixes "[jobid,rank]<stdout>:"; keep rank 0's stdout lines only.
    rank0 = "\n".join(m.group(1) for m in re.finditer(r"^\[\d+,0\]<stdout>:\s?(.*)$", done.stdout,
                                                       re.MULTILINE))
    if not FOOTER.search(rank0):
        fail("rank 0 did not print '# Out of bounds values : 0 OK'", outputs)
    print(done.stdout)


def run_torchrun(nranks, command, expect_wrong):
    port = free_port(pair=True)
    procs = []
    for rank in range(nranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nranks), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(nranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        # A stale launcher variable from the caller would override torchrun's in hoop's lookup.
        for name in ("HOOP_RANK", "HOOP_SIZE", "HOOP_ROOT_ADDR", "OMPI_COMM_WORLD_RANK"):
            env.pop(name, None)
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    print(f"$ MASTER_PORT={port} WORLD_SIZE={nranks} " + " ".join(command), flush=True)
    outputs, codes = [], []
    for rank, proc in enumerate(procs):
        try:
            out, _ = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for other in procs:
                other.kill()
            out, _ = proc.communicate()
            outputs.append((f"rank {rank}", out))
            fail(f"rank {rank} ran past {TIMEOUT_S} s", outputs)
        outputs.append((f"rank {rank}", out))
        codes.append(proc.returncode)
    if expect_wrong:
        if codes[0] != 3 or not WRONG_FOOTER.search(outputs[0][1]):
            fail(f"expected rank 0 to exit 3 with a FAILED footer; exit statuses {codes}", outputs)
        print(outputs[0][1])
        return
    if any(code != 0 for code in codes):
        fail(f"exit statuses {codes}, expected all 0", outputs)
    if not FOOTER.search(outputs[0][1]):
        fail("rank 0 did not print '# Out of bounds values : 0 OK'", outputs)
    print(outputs[0][1])


def main(argv):
    if len(argv) >= 5 and argv[1] == "mpirun":
        run_mpirun(argv[2], int(argv[3]), argv[4:])
    elif len(argv) >= 4 and argv[1] in ("torchrun", "torchrun-wrong"):
        run_torchrun(int(argv[2]), argv[3:], expect_wrong=argv[1] == "torchrun-wrong")
    else:
        sys.exit(__doc__)
    print("PASSED")


if __name__ == "__main__":
    main(sys.argv)
