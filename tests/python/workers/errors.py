"""Misuse raises hoop.HoopError with a message that says what is wrong (on 2+ ranks; run from
collectives.py: check_before_init() before hvd.init(), check_after_init() last)."""

import torch

import hoop
import hoop.torch as hvd


def expect_error(call, *fragments):
    try:
        call()
    except hoop.HoopError as e:
        message = str(e)
        for fragment in fragments:
            if fragment not in message:
                raise AssertionError("message {!r} lacks {!r}".format(message, fragment))
        return e
    raise AssertionError("no HoopError (expected one mentioning {})".format(fragments))


def check_before_init():
    expect_error(lambda: hvd.rank(), "not initialized", "hoop.init()")
    expect_error(lambda: hvd.allreduce(torch.ones(2)), "not initialized")


def check_after_init(rank, size):
    """Last in a job: the mismatched call at the end fails the collective it was in."""

    transposed = torch.zeros(4, 3).t()
    expect_error(lambda: hvd.allreduce(transposed), "allreduce", "not contiguous", "(3, 4)")
    expect_error(lambda: hvd.allreduce_async_(transposed), "not contiguous")
    expect_error(lambda: hvd.broadcast_(transposed, 0), "broadcast", "not contiguous")
    expect_error(lambda: hvd.allgather(transposed), "allgather", "not contiguous")
    for dtype in (torch.int16, torch.bool, torch.complex64):
        name = str(dtype).replace("torch.", "")
        expect_error(
            lambda: hvd.allreduce(torch.zeros(3, dtype=dtype)), "dtype " + name, "not supported"
        )
    expect_error(lambda: hvd.broadcast(torch.zeros(3), root_rank=size), "root_rank")
    expect_error(
        lambda: hvd.allreduce(torch.ones(2, dtype=torch.int32), prescale_factor=2.0),
        "floating-point",
    )
    expect_error(lambda: hvd.alltoall(torch.zeros(size + 1)), "split")
    try:
        hvd.allreduce(torch.ones(2), op=hvd.Adasum)
    except NotImplementedError as e:
        assert "Adasum" in str(e)
    else:
        raise AssertionError("Adasum must raise NotImplementedError")

    # The checks above never reached the network: the ranks are still in step.
    expect_equal = torch.full((2,), float(size))
    if not torch.equal(hvd.allreduce(torch.ones(2), op=hvd.Sum), expect_equal):
        raise AssertionError("allreduce after local errors")

    # Tensors that differ across ranks: hoop compares each collective's description between
    # ranks, so every rank gets an error instead of a hang or a wrong result.
    mismatched = torch.ones(4 + rank)
    error = expect_error(lambda: hvd.allreduce(mismatched, op=hvd.Sum))
    text = str(error)
    if "rank" not in text or not any(w in text for w in ("count", "elements", "4", "5")):
        raise AssertionError("mismatch message does not say what differs: " + text)
    print("rank {}: errors ok: {}".format(rank, text.splitlines()[0][:200]))
