"""Gradient compression before communication, as horovod.torch.Compression."""

import torch

from hoop._compression import Compressor, NoneCompressor, compression_holder


class FP16Compressor(Compressor):
    """Sends floating-point tensors as float16 (half the bytes), restores the dtype after."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating_point:
            return tensor.type(torch.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        if ctx is not None and tensor.dtype != ctx:
            return tensor.type(ctx)
        return tensor


Compression = compression_holder(FP16Compressor)

__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor"]
