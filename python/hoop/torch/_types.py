"""Checks and conversions between torch tensors and hoop's buffers."""

import torch

from hoop import _hoop
from hoop._runtime import error

_DTYPES = {
    torch.int8: _hoop.dtype.int8,
    torch.uint8: _hoop.dtype.uint8,
    torch.int32: _hoop.dtype.int32,
    torch.int64: _hoop.dtype.int64,
    torch.float16: _hoop.dtype.float16,
    torch.bfloat16: _hoop.dtype.bfloat16,
    torch.float32: _hoop.dtype.float32,
    torch.float64: _hoop.dtype.float64,
}


def hoop_dtype(tensor, operation):
    """hoop's data type for tensor, after checking hoop can use its memory as it is."""
    dtype = _DTYPES.get(tensor.dtype)
    if dtype is None:
        supported = ", ".join(str(t).replace("torch.", "") for t in _DTYPES)
        raise error(
            "hoop.torch.{}: tensor dtype {} is not supported (hoop reduces {})".format(
                operation, str(tensor.dtype).replace("torch.", ""), supported
            )
        )
    if tensor.device.type != "cpu":
        raise error(
            "hoop.torch.{}: tensor is on {}, but hoop's PyTorch layer handles CPU tensors only "
            "(move it with .cpu())".format(operation, tensor.device)
        )
    if not tensor.is_contiguous():
        raise error(
            "hoop.torch.{}: tensor of shape {} is not contiguous; hoop works on the tensor's "
            "memory in place (pass tensor.contiguous())".format(operation, tuple(tensor.shape))
        )
    return dtype


def is_floating(tensor):
    return tensor.dtype.is_floating_point
