"""Horovod's process sets and torch's process groups on hoop (with the other Horovod API pieces),
and the timeline (HOOP_TIMELINE, hoop.torch.start_timeline) written by real ranks."""

import json

from conftest import free_port, run_ranks


def store_env():
    return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}


def test_collectives_on_two_disjoint_sets_at_once_and_horovod_api():
    result = run_ranks(4, "process_sets.py", env=store_env())
    assert result.stdout.count("process sets exact") == 4, result.stdout


def load_events(path):
    with open(path) as f:
        document = json.load(f)  # the file must parse as it was left
    return [e for e in document["traceEvents"] if e.get("ph") == "X"]


def check_rank_file(path, rank):
    events = load_events(path)
    for e in events:
        assert e["pid"] == rank and e["dur"] >= 0 and e["ts"] > 0 and e["name"], e
    names = {e["name"] for e in events}
    assert {"grad.weight", "grad.bias"} <= names, names
    phases = {e["args"]["phase"] for e in events if e["name"] == "grad.weight"}
    assert {"queue", "negotiate", "run"} <= phases, phases
    calls = [e for e in events if e["cat"] == "c-api" and e["name"] == "allreduce"]
    assert any(c["args"]["bytes"] == "4096" for c in calls), calls
    for c in calls:
        assert c["args"]["schedule"] and c["args"]["transport"], c
    # The named allreduce whose shapes differ failed on every rank; its run says why.
    failed = [e for e in events if e["name"] == "grad.mismatched" and "error" in e["args"]]
    assert failed and "grad.mismatched" in failed[0]["args"]["error"], events
    return events


def test_timeline_is_complete_after_a_clean_shutdown_and_after_an_abort(tmp_path):
    trace = tmp_path / "trace.json"
    restarted = tmp_path / "restarted.json"
    env = dict(store_env(), HOOP_TIMELINE=str(trace))
    run_ranks(2, "timeline.py", restarted, env=env)
    for rank in range(2):
        # Written until the engine's communicator shut down cleanly.
        check_rank_file(tmp_path / "trace.{}.json".format(rank), rank)
        # Started from Python; the communicator was aborted with a call in flight on rank 0.
        events = load_events(tmp_path / "restarted.{}.json".format(rank))
        calls = [e for e in events if e["name"] == "allreduce"]
        assert any(c["args"]["bytes"] == "32" and "error" not in c["args"] for c in calls), events
        if rank == 0:
            aborted = [c for c in calls if c["args"]["bytes"] == "64"]
            assert len(aborted) == 1 and aborted[0]["args"]["error"], events
            assert aborted[0]["dur"] > 0, aborted
