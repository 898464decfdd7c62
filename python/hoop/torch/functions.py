"""Model and object helpers, as in horovod.torch.functions."""

import io
import pickle

import torch

from hoop import _runtime
from hoop.torch import mpi_ops


def broadcast_parameters(params, root_rank):
    """Copies root_rank's parameters into every rank's, in place.

    params: a model's state_dict(), named_parameters(), or a list of (name, tensor) pairs.
    """
    if isinstance(params, dict):
        params = sorted(params.items())
    elif isinstance(params, list):
        params = [p if isinstance(p, tuple) else (None, p) for p in params]
    else:
        params = list(params)
    handles = []
    for index, (name, p) in enumerate(params):
        tensor = p.data if isinstance(p, torch.nn.Parameter) else p
        label = "broadcast_parameters.{}".format(name if name is not None else index)
        handles.append(mpi_ops.broadcast_async_(tensor, root_rank, name=label))
    for handle in handles:
        mpi_ops.synchronize(handle)


def broadcast_optimizer_state(optimizer, root_rank):
    """Makes every rank's optimizer state (step counts, moments, hyper-parameters) root_rank's.

    The state travels as one pickled object; optimizers with no state yet (before their first
    step) simply get root's, which is also empty.
    """
    if isinstance(optimizer, torch.optim.LBFGS):
        raise ValueError("hoop.torch.broadcast_optimizer_state: LBFGS is not supported")
    state = broadcast_object(optimizer.state_dict(), root_rank, name="broadcast_optimizer_state")
    if _runtime.rank() != root_rank:
        optimizer.load_state_dict(state)


def _to_bytes(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer, pickle_protocol=pickle.HIGHEST_PROTOCOL)
    return buffer.getvalue()


def _from_bytes(data):
    return torch.load(io.BytesIO(data))


def broadcast_object(obj, root_rank=0, name=None):
    """root_rank's obj (anything torch.save can pickle), on every rank."""
    name = name or "broadcast_object"
    if _runtime.rank() == root_rank:
        payload = torch.frombuffer(bytearray(_to_bytes(obj)), dtype=torch.uint8)
        length = torch.tensor([payload.numel()], dtype=torch.int64)
    else:
        length = torch.zeros(1, dtype=torch.int64)
    mpi_ops.broadcast_(length, root_rank, name=name + ".length")
    if _runtime.rank() != root_rank:
        payload = torch.empty(int(length.item()), dtype=torch.uint8)
    mpi_ops.broadcast_(payload, root_rank, name=name + ".data")
    if _runtime.rank() == root_rank:
        return obj
    return _from_bytes(payload.numpy().tobytes())


def allgather_object(obj, name=None):
    """A list with every rank's obj (anything torch.save can pickle), in rank order."""
    name = name or "allgather_object"
    payload = torch.frombuffer(bytearray(_to_bytes(obj)), dtype=torch.uint8)
    lengths = mpi_ops.allgather(torch.tensor([payload.numel()], dtype=torch.int64), name + ".length")
    gathered = mpi_ops.allgather(payload, name=name + ".data").numpy().tobytes()
    result, offset = [], 0
    for length in lengths.tolist():
        result.append(_from_bytes(gathered[offset : offset + length]))
        offset += length
    return result
