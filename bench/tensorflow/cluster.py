"""Starting N local TensorFlow workers with TF_CONFIG, the way MultiWorkerMirroredStrategy
expects them on one host: one process per task, each told the whole cluster and its own index."""

import json
import os
import socket
import subprocess
import sys


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_workers(count, argv, extra_env=None):
    """Runs `python argv...` as `count` workers; returns rank 0's stdout, fails on any failure."""
    cluster = {"worker": ["127.0.0.1:{}".format(p) for p in free_ports(count)]}
    workers = []
    for index in range(count):
        env = dict(os.environ)
        env.update(extra_env or {})
        env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        workers.append(
            subprocess.Popen([sys.executable] + argv, env=env, stdout=subprocess.PIPE, text=True)
        )
    outputs = [w.communicate()[0] for w in workers]
    for index, w in enumerate(workers):
        if w.returncode != 0:
            raise SystemExit("worker {} exited {}:\n{}".format(index, w.returncode, outputs[index]))
    return outputs[0]
