"""Variable and object helpers, as in horovod.tensorflow.functions."""

import pickle

import numpy as np
import tensorflow as tf

from hoop import _runtime
from hoop.tensorflow import mpi_ops


def _variable_name(variable, index):
    path = getattr(variable, "path", None) or getattr(variable, "name", None)
    return "{}.{}".format(index, path) if path else str(index)


def broadcast_variables(variables, root_rank, name=None):
    """Assigns root_rank's value to every variable on every rank.

    Eagerly, the variables are updated before it returns; in a graph, the returned op does it.
    Every rank passes its variables in the same order.
    """
    prefix = name or "broadcast_variables"
    assignments = []
    for index, variable in enumerate(variables):
        value = mpi_ops.broadcast(
            tf.convert_to_tensor(variable),
            root_rank,
            name="{}.{}".format(prefix, _variable_name(variable, index)),
        )
        assignments.append(variable.assign(value))
    if tf.executing_eagerly():
        return None
    return tf.group(*assignments)


def broadcast_global_variables(root_rank):
    """tf.compat.v1 graphs: an op that broadcasts every global variable from root_rank."""
    if tf.executing_eagerly():
        raise RuntimeError(
            "hoop.tensorflow.broadcast_global_variables works on tf.compat.v1 graphs; eagerly, "
            "use broadcast_variables(model.variables, root_rank)"
        )
    return broadcast_variables(
        tf.compat.v1.global_variables(), root_rank, name="broadcast_global_variables"
    )


def _bytes_tensor(data):
    return tf.constant(np.frombuffer(data, dtype=np.uint8) if data else np.zeros(0, np.uint8))


def broadcast_object(obj, root_rank=0, session=None, name=None):
    """root_rank's obj (anything pickle can serialise), on every rank. Runs eagerly."""
    name = name or "broadcast_object"
    if _runtime.rank() == root_rank:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        length = tf.constant([len(payload)], dtype=tf.int64)
    else:
        payload = b""
        length = tf.zeros([1], dtype=tf.int64)
    length = int(_run(mpi_ops.broadcast(length, root_rank, name=name + ".length"), session)[0])
    if _runtime.rank() != root_rank:
        payload = bytes(length)
    data = _run(mpi_ops.broadcast(_bytes_tensor(payload), root_rank, name=name + ".data"), session)
    if _runtime.rank() == root_rank:
        return obj
    return pickle.loads(np.asarray(data, dtype=np.uint8).tobytes())


def allgather_object(obj, session=None, name=None):
    """A list with every rank's obj (anything pickle can serialise), in rank order."""
    name = name or "allgather_object"
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    lengths = _run(
        mpi_ops.allgather(tf.constant([len(payload)], dtype=tf.int64), name=name + ".length"),
        session,
    )
    gathered = np.asarray(
        _run(mpi_ops.allgather(_bytes_tensor(payload), name=name + ".data"), session),
        dtype=np.uint8,
    ).tobytes()
    result, offset = [], 0
    for length in lengths.tolist():
        result.append(pickle.loads(gathered[offset : offset + length]))
        offset += length
    return result


def _run(tensor, session):
    """The tensor's value: eagerly at once, in a graph through session (or a new one)."""
    if tf.executing_eagerly():
        return tensor.numpy()
    if session is not None:
        return session.run(tensor)
    with tf.compat.v1.Session() as own:
        return own.run(tensor)
