"""Gradient compression before communication, as horovod.tensorflow.Compression."""

import tensorflow as tf

from hoop._compression import Compressor, NoneCompressor, compression_holder


class FP16Compressor(Compressor):
    """Sends floating-point tensors as float16 (half the bytes), restores the dtype after."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating and tensor.dtype != tf.float16:
            return tf.cast(tensor, tf.float16), tensor.dtype
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tf.cast(tensor, ctx) if ctx is not None else tensor


Compression = compression_holder(FP16Compressor)

__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor"]
