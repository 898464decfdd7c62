"""Horovod's process sets and torch's process groups on hoop, and the timeline (HOOP_TIMELINE,
hoop.torch.start_timeline) written by real ranks."""

import json

import pytest

from conftest import free_port, run_ranks


def store_env():
    return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())}


def test_collectives_on_two_disjoint_sets_at_once():
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
    return events


@pytest.mark.parametrize("ending", ["clean", "abort"])
def test_timeline_is_complete_on_every_rank(tmp_path, ending):
    trace = tmp_path / "trace.json"
    restarted = tmp_path / "restarted.json"
    env = dict(store_env(), HOOP_TIMELINE=str(trace))
    run_ranks(2, "timeline.py", ending, restarted, env=env)
    for rank in range(2):
        check_rank_file(tmp_path / "trace.{}.json".format(rank), rank)
        if ending == "clean":
            names = {e["name"] for e in load_events(tmp_path / "restarted.{}.json".format(rank))}
            assert "after.restart" in names, names


def test_horovod_queries_sync_batch_norm_and_objects():
    result = run_ranks(2, "horovod_api.py")
    assert result.stdout.count("horovod api ok") == 2, result.stdout
