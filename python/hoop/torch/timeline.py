"""Horovod's start_timeline/stop_timeline on hoop's timeline (HOOP_TIMELINE in
docs/configuration.md): a Chrome trace of every collective this rank runs, the training engine's
phases for each named tensor included. Each rank writes its own file, the path with ".<rank>"
before its extension."""

from hoop import _hoop, _runtime


def start_timeline(file_path, mark_cycles=False):
    """Starts writing this rank's timeline to file_path (mark_cycles is accepted and ignored:
    hoop's engine phases are always shown)."""
    _hoop.timeline_start(str(file_path), _runtime.rank())


def stop_timeline():
    """Closes the timeline's file (it is a complete JSON document at every moment)."""
    _hoop.timeline_stop()
