"""Chooses how hoop.torch runs its collectives."""

from hoop.torch._direct import DirectRunner


def make_runner(communicator):
    return DirectRunner(communicator)
