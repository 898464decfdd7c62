"""What hoop.torch's and hoop.tensorflow's Compression share: the compressor interface, the
identity compressor, and the holder that names them as Horovod does. Each framework adds its
float16 compressor, the only part that touches its tensors."""


class Compressor:
    """Turns a tensor into what is sent and back; compress returns (tensor, context)."""

    @staticmethod
    def compress(tensor):
        raise NotImplementedError

    @staticmethod
    def decompress(tensor, ctx):
        raise NotImplementedError


class NoneCompressor(Compressor):
    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


def compression_holder(fp16_compressor):
    """The `Compression` class of a framework: `Compression.none` and `Compression.fp16`."""

    class Compression:
        none = NoneCompressor
        fp16 = fp16_compressor

    return Compression
