"""Every torch.distributed call on the "hoop" backend, checked exactly (run by dist_async.py on
the default process group)."""

import torch
import torch.distributed as dist

import hoop.torch  # noqa: F401  (registers the "hoop" backend)


def expect(actual, expected, what):
    if not torch.equal(actual, expected):
        raise AssertionError("{}: got {} expected {}".format(what, actual, expected))


def check_every_call(rank, size):
    assert dist.get_rank() == rank and dist.get_world_size() == size
    total = size * (size + 1) // 2
    for dtype in (torch.int8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
                  torch.float32, torch.float64, torch.uint8):
        t = torch.full((5,), rank + 1, dtype=dtype)
        dist.all_reduce(t)
        expect(t, torch.full((5,), total, dtype=dtype), "all_reduce " + str(dtype))
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    expect(t, torch.full((3,), float(size)), "all_reduce MAX")
    t = torch.full((3,), float(rank + 1))
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    expect(t, torch.full((3,), 1.0), "all_reduce MIN")
    t = torch.full((3,), 2.0)
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    expect(t, torch.full((3,), 2.0**size), "all_reduce PRODUCT")
    # A non-contiguous tensor is reduced through a contiguous copy and written back.
    m = torch.full((4, 2), float(rank)).t()
    dist.all_reduce(m)
    expect(m, torch.full((2, 4), float(total - size)), "non-contiguous all_reduce")

    t = torch.full((4,), float(rank))
    dist.broadcast(t, src=size - 1)
    expect(t, torch.full((4,), float(size - 1)), "broadcast")

    t = torch.full((4,), rank + 1, dtype=torch.int64)
    dist.reduce(t, dst=0)
    if rank == 0:
        expect(t, torch.full((4,), total, dtype=torch.int64), "reduce")

    outputs = [torch.empty(2, dtype=torch.int32) for _ in range(size)]
    dist.all_gather(outputs, torch.full((2,), rank, dtype=torch.int32))
    for r, o in enumerate(outputs):
        expect(o, torch.full((2,), r, dtype=torch.int32), "all_gather")
    flat = torch.empty(2 * size)
    dist.all_gather_into_tensor(flat, torch.full((2,), float(rank)))
    expect(flat, torch.tensor([float(r) for r in range(size) for _ in range(2)]), "all_gather_into_tensor")

    out = torch.empty(3)
    dist.reduce_scatter(out, [torch.full((3,), float(rank + j)) for j in range(size)])
    expect(out, torch.full((3,), float(sum(r + rank for r in range(size)))), "reduce_scatter")
    out = torch.empty(2, dtype=torch.int64)
    dist.reduce_scatter_tensor(out, torch.arange(2 * size, dtype=torch.int64))
    expect(out, torch.arange(2 * rank, 2 * rank + 2, dtype=torch.int64) * size, "reduce_scatter_tensor")

    send = torch.tensor([10.0 * rank + j for j in range(size)])
    recv = torch.empty(size)
    dist.all_to_all_single(recv, send)
    expect(recv, torch.tensor([10.0 * r + rank for r in range(size)]), "all_to_all_single")
    # Uneven: rank r sends j + 1 elements to rank j.
    send = torch.cat([torch.full((j + 1,), float(rank)) for j in range(size)])
    recv = torch.empty(size * (rank + 1))
    dist.all_to_all_single(
        recv, send, output_split_sizes=[rank + 1] * size, input_split_sizes=[j + 1 for j in range(size)]
    )
    expect(recv, torch.cat([torch.full((rank + 1,), float(r)) for r in range(size)]), "uneven all_to_all_single")
    outputs = [torch.empty(2) for _ in range(size)]
    dist.all_to_all(outputs, [torch.full((2,), float(10 * rank + j)) for j in range(size)])
    for r, o in enumerate(outputs):
        expect(o, torch.full((2,), float(10 * r + rank)), "all_to_all")

    # A ring of point-to-point messages: even ranks send first, odd ranks receive first.
    right, left = (rank + 1) % size, (rank - 1) % size
    got = torch.empty(3, dtype=torch.int64)
    mine = torch.full((3,), rank, dtype=torch.int64)
    if rank % 2 == 0:
        dist.send(mine, right)
        dist.recv(got, left)
    else:
        dist.recv(got, left)
        dist.send(mine, right)
    expect(got, torch.full((3,), left, dtype=torch.int64), "send/recv")

    dist.barrier()
    print("rank {} of {}: torch.distributed on hoop ok".format(rank, size))
