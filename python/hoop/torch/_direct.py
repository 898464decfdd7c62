"""Collectives for hoop.torch straight on the C API, on one background thread.

Requests run one after another in submission order, so every rank must submit them in the same
order (the training engine, where it is built, lifts that restriction). Each request returns a
concurrent.futures.Future; the communicator calls release the GIL while they wait for peers.
"""

import concurrent.futures

import torch

from hoop import _hoop
from hoop.torch._types import hoop_dtype


class DirectRunner:
    def __init__(self, communicator):
        self._comm = communicator
        self._size = communicator.size()
        self._rank = communicator.rank()
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="hoop-torch"
        )

    def close(self):
        self._executor.shutdown(wait=True)

    def _submit(self, function, *args):
        return self._executor.submit(function, *args)

    # --- requests -------------------------------------------------------------------------------

    def allreduce(self, name, source, output, op, prescale, postscale):
        def run():
            if prescale != 1.0:
                torch.mul(source, prescale, out=output)
                send = output
            else:
                send = source
            self._comm.allreduce(
                send.data_ptr(), output.data_ptr(), output.numel(), hoop_dtype(output, name), op
            )
            if postscale != 1.0:
                output.mul_(postscale)
            return output

        return self._submit(run)

    def grouped_allreduce(self, name, sources, outputs, op, prescale, postscale):
        """One allreduce for tensors of one dtype: packed into one buffer and unpacked after."""

        def run():
            flat = torch.cat([s.reshape(-1) for s in sources])
            if prescale != 1.0:
                flat.mul_(prescale)
            self._comm.allreduce(
                flat.data_ptr(), flat.data_ptr(), flat.numel(), hoop_dtype(flat, name), op
            )
            if postscale != 1.0:
                flat.mul_(postscale)
            offset = 0
            for out in outputs:
                out.view(-1).copy_(flat[offset : offset + out.numel()])
                offset += out.numel()
            return outputs

        return self._submit(run)

    def broadcast(self, name, tensor, root):
        def run():
            self._comm.broadcast(
                tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), hoop_dtype(tensor, name), root
            )
            return tensor

        return self._submit(run)

    def allgather(self, name, tensor):
        """Concatenation of every rank's tensor along dimension 0 (lengths may differ)."""

        def run():
            rows = self._gather_counts(tensor.shape[0] if tensor.dim() > 0 else 1)
            row_shape = tuple(tensor.shape[1:]) if tensor.dim() > 0 else ()
            row_elements = 1
            for d in row_shape:
                row_elements *= d
            most = max(rows)
            padded = torch.zeros((self._size * most,) + row_shape, dtype=tensor.dtype)
            mine = padded[self._rank * most : self._rank * most + rows[self._rank]]
            mine.copy_(tensor.reshape(mine.shape))
            self._comm.allgather(
                mine.data_ptr(), padded.data_ptr(), most * row_elements, hoop_dtype(padded, name)
            )
            if all(r == most for r in rows):
                return padded
            return torch.cat([padded[r * most : r * most + rows[r]] for r in range(self._size)])

        return self._submit(run)

    def alltoall(self, name, send, recv, count_per_rank):
        def run():
            self._comm.alltoall(
                send.data_ptr(), recv.data_ptr(), count_per_rank, hoop_dtype(send, name)
            )
            return recv

        return self._submit(run)

    def alltoallv(self, name, tensor, splits):
        """splits[j] rows to rank j; the future gives (output, rows received from each rank)."""
        size = self._size
        row_shape = tuple(tensor.shape[1:])
        row_elements = 1
        for d in row_shape:
            row_elements *= d
        dtype = hoop_dtype(tensor, name)

        def run():
            # hoop's alltoall moves equal blocks: exchange the counts first, then pad every piece
            # to the longest one on any rank.
            counts = torch.tensor(splits, dtype=torch.int64)
            received = torch.empty_like(counts)
            self._comm.alltoall(counts.data_ptr(), received.data_ptr(), 1, _hoop.dtype.int64)
            longest = max(self._gather_counts(max(splits)))
            send = torch.zeros((size * longest,) + row_shape, dtype=tensor.dtype)
            offset = 0
            for j, s in enumerate(splits):
                send[j * longest : j * longest + s] = tensor[offset : offset + s]
                offset += s
            recv = torch.empty_like(send)
            self._comm.alltoall(send.data_ptr(), recv.data_ptr(), longest * row_elements, dtype)
            rows = received.tolist()
            pieces = [recv[i * longest : i * longest + rows[i]] for i in range(size)]
            return torch.cat(pieces), received

        return self._submit(run)

    def reducescatter(self, name, send, recv, recv_count, op):
        def run():
            self._comm.reduce_scatter(
                send.data_ptr(), recv.data_ptr(), recv_count, hoop_dtype(send, name), op
            )
            return recv

        return self._submit(run)

    def barrier(self, name):
        return self._submit(self._comm.barrier)

    def join(self):
        """Without the engine every rank must reach join() with the same requests submitted:
        this is a barrier, and the last rank to join is reported as the highest rank."""

        def run():
            self._comm.barrier()
            return self._size - 1

        return self._submit(run).result()

    # --- helpers ----------------------------------------------------------------------------------

    def _gather_counts(self, count):
        counts = torch.zeros(self._size, dtype=torch.int64)
        counts[self._rank] = count
        self._comm.allgather(
            counts[self._rank :].data_ptr(), counts.data_ptr(), 1, _hoop.dtype.int64
        )
        return counts.tolist()

    def gather_counts(self, count):
        """Every rank's count (run on the caller's thread after draining the queue)."""
        return self._submit(self._gather_counts, count).result()
