"""Every hoop.torch collective on every dtype, checked exactly with integer-valued data.

Run on any number of ranks: hooprun -np N python3 collectives.py [step ...] (steps: main()).
"""

import os
import sys

import torch

import data_parallel
import errors
import hoop.torch as hvd

DTYPES = [
    torch.int8,
    torch.uint8,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def expect_equal(actual, expected, what):
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        raise AssertionError(
            "{}: got {} {} expected {} {}".format(
                what, actual.dtype, tuple(actual.shape), expected.dtype, tuple(expected.shape)
            )
        )
    if not torch.equal(actual, expected):
        raise AssertionError("{}: got {} expected {}".format(what, actual, expected))


def values(dtype, count, rank):
    # Small integers that every dtype (int8, fp16, bf16) holds exactly, also when summed.
    return (torch.arange(count, dtype=torch.int64) % 5 + rank + 1).to(dtype)


def check_allreduce(rank, size):
    count = 37
    for dtype in DTYPES:
        per_rank = [values(dtype, count, r) for r in range(size)]
        total = sum(p.to(torch.int64) for p in per_rank)
        expect_equal(
            hvd.allreduce(per_rank[rank], op=hvd.Sum, name="sum." + str(dtype)),
            total.to(dtype),
            "allreduce Sum " + str(dtype),
        )
        stacked = torch.stack([p.to(torch.int64) for p in per_rank])
        expect_equal(
            hvd.allreduce(per_rank[rank], op=hvd.Min), stacked.min(0).values.to(dtype), "Min"
        )
        expect_equal(
            hvd.allreduce(per_rank[rank], op=hvd.Max), stacked.max(0).values.to(dtype), "Max"
        )
        small = (torch.arange(count) % 2 + 1).to(dtype)  # 1s and 2s: products stay exact
        expect_equal(
            hvd.allreduce(small, op=hvd.Product),
            (small.to(torch.int64) ** size).to(dtype),
            "Product " + str(dtype),
        )
        # Average of size * rank-independent values is exact for every dtype.
        same = (torch.arange(count) % 7 * size).to(dtype)
        expect_equal(hvd.allreduce(same), same, "Average " + str(dtype))
        in_place = per_rank[rank].clone()
        result = hvd.allreduce_(in_place, op=hvd.Sum)
        if result.data_ptr() != in_place.data_ptr():
            raise AssertionError("allreduce_ did not reduce in place")
        expect_equal(in_place, total.to(dtype), "allreduce_ " + str(dtype))
    # Average of different values, and the deprecated average= flag.
    data = torch.full((4,), float(2 * (rank + 1)))
    expect_equal(hvd.allreduce(data), torch.full((4,), float(size + 1)), "Average")
    expect_equal(hvd.allreduce(data, average=False), torch.full((4,), float(size * (size + 1))), "average=False")
    # Scale factors: (2 * x) summed, then halved, gives the plain sum.
    scaled = hvd.allreduce(data, op=hvd.Sum, prescale_factor=2.0, postscale_factor=0.5)
    expect_equal(scaled, torch.full((4,), float(size * (size + 1))), "prescale/postscale")
    # Integer-valued fp32 through fp16 compression comes back exact and fp32.
    compressed = hvd.allreduce(data, op=hvd.Sum, compression=hvd.Compression.fp16)
    expect_equal(compressed, torch.full((4,), float(size * (size + 1))), "fp16 compression")
    # Multi-dimensional and empty tensors.
    matrix = torch.arange(12, dtype=torch.float32).reshape(3, 4) * (rank + 1)
    expect_equal(
        hvd.allreduce(matrix, op=hvd.Sum),
        torch.arange(12, dtype=torch.float32).reshape(3, 4) * (size * (size + 1) // 2),
        "2-D allreduce",
    )
    expect_equal(hvd.allreduce(torch.zeros(0)), torch.zeros(0), "empty allreduce")


def check_async(rank, size):
    tensors = [torch.full((1000 * (i + 1),), float(rank + i)) for i in range(4)]
    handles = [
        hvd.allreduce_async(t, op=hvd.Sum, name="async.{}".format(i)) for i, t in enumerate(tensors)
    ]
    in_place = torch.full((10,), float(rank))
    handles.append(hvd.allreduce_async_(in_place, op=hvd.Max, name="async.inplace"))
    while not all(hvd.poll(h) for h in handles):
        pass
    for i, h in enumerate(handles[:4]):
        expected = float(sum(r + i for r in range(size)))
        expect_equal(hvd.synchronize(h), torch.full((1000 * (i + 1),), expected), "async")
    if hvd.synchronize(handles[4]) is not in_place:
        raise AssertionError("allreduce_async_ must return the tensor it reduced")
    expect_equal(in_place, torch.full((10,), float(size - 1)), "async in place")
    try:
        hvd.synchronize(handles[0])
    except ValueError:
        pass
    else:
        raise AssertionError("a handle synchronized twice must raise")


def check_any_order(rank, size):
    """With the engine, ranks may submit named requests in different orders."""
    if os.environ.get("HOOP_TORCH_ENGINE") == "0":
        return  # the direct runner needs one order on every rank
    names = ["order.{}".format(i) for i in range(6)]
    order = names if rank % 2 == 0 else list(reversed(names))
    tensors = {n: torch.full((i + 1,), float(rank + i)) for i, n in enumerate(names)}
    handles = {n: hvd.allreduce_async(tensors[n], name=n, op=hvd.Sum) for n in order}
    gathered = hvd.allgather_async(torch.full((rank + 1,), rank), name="order.gather")
    for i, n in enumerate(names):
        expected = float(sum(r + i for r in range(size)))
        expect_equal(hvd.synchronize(handles[n]), torch.full((i + 1,), expected), "order " + n)
    expect_equal(
        hvd.synchronize(gathered),
        torch.cat([torch.full((r + 1,), r) for r in range(size)]),
        "allgather among reordered requests",
    )


def check_grouped(rank, size):
    tensors = [
        torch.full((3,), rank + 1, dtype=torch.int32),
        torch.full((2, 2), float(rank + 1)),
        torch.full((5,), rank + 1, dtype=torch.int64),
        torch.full((1,), float(rank + 1), dtype=torch.float64),
    ]
    total = size * (size + 1) // 2
    runner = hvd.mpi_ops._get_runner()
    engine = hasattr(runner, "stats")
    fused_before = runner.stats()["fused_tensors"] if engine else 0
    results = hvd.grouped_allreduce(tensors, op=hvd.Sum)
    same_dtype = [torch.full((4,), float(rank + i)) for i in range(3)]
    summed = hvd.grouped_allreduce(same_dtype, op=hvd.Sum)
    for i, r in enumerate(summed):
        expect_equal(r, torch.full((4,), float(sum(q + i for q in range(size)))), "grouped fp32")
    if engine and size > 1 and runner.stats()["fused_tensors"] < fused_before + 3:
        raise AssertionError("a grouped allreduce of three float32 tensors was not fused")
    for t, r in zip(tensors, results):
        expect_equal(r, torch.full(t.shape, total, dtype=t.dtype), "grouped_allreduce")
    copies = [t.clone() for t in tensors]
    hvd.synchronize(hvd.grouped_allreduce_async_(copies, op=hvd.Max))
    for c in copies:
        expect_equal(c, torch.full(c.shape, size, dtype=c.dtype), "grouped_allreduce_async_")
    results = hvd.grouped_allreduce_(copies, op=hvd.Min)
    for c in results:
        expect_equal(c, torch.full(c.shape, size, dtype=c.dtype), "grouped_allreduce_")


def check_allgather(rank, size):
    for dtype in DTYPES:
        # Rank r contributes r + 1 rows of 3 columns holding r.
        mine = torch.full((rank + 1, 3), rank, dtype=dtype)
        expected = torch.cat([torch.full((r + 1, 3), r, dtype=dtype) for r in range(size)])
        expect_equal(hvd.allgather(mine), expected, "allgather " + str(dtype))
        expect_equal(
            hvd.synchronize(hvd.allgather_async(mine, name="ag." + str(dtype))),
            expected,
            "allgather_async",
        )
    same = torch.full((2,), float(rank))
    expect_equal(
        hvd.allgather(same),
        torch.tensor([float(r) for r in range(size) for _ in range(2)]),
        "allgather equal sizes",
    )


def check_broadcast(rank, size):
    root = size - 1
    for dtype in DTYPES:
        mine = torch.full((6,), rank, dtype=dtype)
        expected = torch.full((6,), root, dtype=dtype)
        out = hvd.broadcast(mine, root_rank=root)
        expect_equal(out, expected, "broadcast " + str(dtype))
        expect_equal(mine, torch.full((6,), rank, dtype=dtype), "broadcast leaves input")
        hvd.broadcast_(mine, root_rank=root)
        expect_equal(mine, expected, "broadcast_ " + str(dtype))
    handle = hvd.broadcast_async(torch.full((2,), float(rank)), 0)
    expect_equal(hvd.synchronize(handle), torch.zeros(2), "broadcast_async")
    target = torch.full((2,), float(rank))
    hvd.synchronize(hvd.broadcast_async_(target, 0))
    expect_equal(target, torch.zeros(2), "broadcast_async_")


def check_alltoall(rank, size):
    for dtype in DTYPES:
        # Equal pieces: row j of rank r holds 10 * r + j and goes to rank j.
        send = torch.tensor([10 * rank + j for j in range(size)], dtype=dtype)
        expect_equal(
            hvd.alltoall(send),
            torch.tensor([10 * r + rank for r in range(size)], dtype=dtype),
            "alltoall " + str(dtype),
        )
    # Uneven: rank r sends j + 1 rows to rank j, each row (r, j).
    splits = [j + 1 for j in range(size)]
    rows = [torch.tensor([[rank, j]] * (j + 1)) for j in range(size)]
    output, received = hvd.alltoall(torch.cat(rows), splits=splits)
    expected = torch.cat([torch.tensor([[r, rank]] * (rank + 1)) for r in range(size)])
    expect_equal(output, expected, "alltoall with splits")
    expect_equal(received, torch.tensor([rank + 1] * size), "alltoall received splits")
    # Nothing goes to rank 0, two rows of 3 columns to every other rank, in bfloat16.
    splits = [0] + [2] * (size - 1)
    send = torch.cat([torch.full((2, 3), 10 * rank + j) for j in range(1, size)])
    output, received = hvd.alltoall(send.to(torch.bfloat16), splits=splits)
    if rank == 0:
        expected = torch.zeros((0, 3))
    else:
        expected = torch.cat([torch.full((2, 3), 10 * r + rank) for r in range(size)])
    expect_equal(output, expected.to(torch.bfloat16), "alltoall with an empty piece")
    expect_equal(received, torch.tensor([0 if rank == 0 else 2] * size), "empty piece splits")


def check_reducescatter(rank, size):
    for dtype in DTYPES:
        data = torch.arange(2 * size, dtype=torch.int64).reshape(size, 2) % 7 + rank
        total = sum((torch.arange(2 * size).reshape(size, 2) % 7 + r) for r in range(size))
        expect_equal(
            hvd.reducescatter(data.to(dtype), op=hvd.Sum),
            total[rank : rank + 1].to(dtype),
            "reducescatter " + str(dtype),
        )
    # Uneven rows: size + 1 rows, rank 0 keeps two.
    data = torch.arange(size + 1, dtype=torch.float32) * size
    pieces = [2 if r == 0 else 1 for r in range(size)]
    start = sum(pieces[:rank])
    expect_equal(
        hvd.reducescatter(data),  # Average of equal data is the data
        data[start : start + pieces[rank]],
        "uneven reducescatter",
    )


def check_objects(rank, size):
    obj = {"rank": rank, "list": list(range(rank)), "tensor": torch.arange(rank + 1)}
    got = hvd.broadcast_object(obj, root_rank=size - 1)
    if got["rank"] != size - 1 or not torch.equal(got["tensor"], torch.arange(size)):
        raise AssertionError("broadcast_object: got {}".format(got))
    everyone = hvd.allgather_object(obj)
    if [o["rank"] for o in everyone] != list(range(size)) or everyone[-1]["list"] != list(
        range(size - 1)
    ):
        raise AssertionError("allgather_object: got {}".format(everyone))


def check_autograd(rank, size):
    x = torch.full((3,), float(rank + 1), requires_grad=True)
    y = hvd.allreduce(x, op=hvd.Sum)
    (y * (rank + 1)).sum().backward()
    # d/dx_r of sum_k (k+1) * sum_r x_r = sum_k (k+1).
    expect_equal(x.grad, torch.full((3,), float(size * (size + 1) // 2)), "allreduce grad")
    x = torch.full((rank + 1, 2), float(rank), requires_grad=True)
    hvd.allgather(x).sum().backward()
    expect_equal(x.grad, torch.full((rank + 1, 2), float(size)), "allgather grad")


def check_barrier_and_join(rank, size):
    hvd.barrier()
    last = hvd.join()
    if not 0 <= last < size:
        raise AssertionError("join returned {}".format(last))


def main():
    # Each launch costs every rank a torch import, so one job runs several steps in turn:
    # "all" (every check_ below), a check's name, "data_parallel:sgd|adam:STEPS"
    # (data_parallel.py) and "errors" (errors.py; last, its final call fails on purpose).
    checks = [name[len("check_") :] for name in globals() if name.startswith("check_")]
    steps = []
    for step in sys.argv[1:] or ["all"]:
        steps += checks if step == "all" else [step]
    if "errors" in steps:
        errors.check_before_init()
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    if hvd.local_rank() != rank or hvd.local_size() != size:
        raise AssertionError("one host: local rank/size must be rank/size")
    if hvd.cross_size() != 1 or hvd.cross_rank() != 0:
        raise AssertionError("one host: cross size 1")
    for step in steps:
        if step.startswith("data_parallel:"):
            _, kind, count = step.split(":")
            data_parallel.train_and_compare(kind, int(count))
        elif step == "errors":
            errors.check_after_init(rank, size)
        else:
            globals()["check_" + step](rank, size)
    hvd.shutdown()
    if hvd.is_initialized():
        raise AssertionError("still initialized after shutdown")
    steps_given = " ".join(sys.argv[1:] or ["all"])
    print("rank {} of {}: every step passed: {}".format(rank, size, steps_given))


if __name__ == "__main__":
    main()
