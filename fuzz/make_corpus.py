#!/usr/bin/env python3
"""Writes the hand-made seed inputs in fuzz/corpus/<target>/: one valid message of each kind, so
the fuzzers start past the magic numbers. Run it after a wire format changes."""
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent
AF_INET, AF_INET6 = 2, 10
SECRET = bytes(range(16))


def address(family, port, raw):
    return struct.pack("<HH", family, port) + raw.ljust(16, b"\0")


# The rendezvous messages' version (core/bootstrap_wire.h), and what a peer carries after its
# address: its CPU mask (CPU_SETSIZE bits, here CPUs 0 and 1), the level-2 cache per CPU, and its
# digests of the settings every rank must share (core/agreed_settings.h), then its RDMA summary
# (transport/rdma/rdma_reach.h: here a usable RoCE v2 port rxe0:1).
BOOTSTRAP_VERSION = 4
CPU_MASK_WORDS = 1024 // 64
AGREED_SETTINGS = 11


def peer(pid, host_id, name, family, port, raw):
    cpus = struct.pack(f"<{CPU_MASK_WORDS}Q", 0b11, *([0] * (CPU_MASK_WORDS - 1)))
    settings = struct.pack(f"<{AGREED_SETTINGS}Q", *range(1, AGREED_SETTINGS + 1))
    return (struct.pack("<IQ", pid, host_id) + name.ljust(64, b"\0") + address(family, port, raw) +
            cpus + struct.pack("<Q", 1 << 20) + settings + rdma_reach())


def rdma_reach():
    return struct.pack("<BBBBIQ", 5, 2, 3, 1, 0, 0) + b"rxe0".ljust(16, b"\0")


def registration(nranks, rank, family=AF_INET, raw=bytes([127, 0, 0, 1])):
    return (struct.pack("<IHH", 0x42504F48, BOOTSTRAP_VERSION, 0) + SECRET +
            struct.pack("<QII", 7, nranks, rank) +
            peer(4242, 99, b"node0", family, 5000, raw))


def unique_id(family, raw):
    body = struct.pack("<IHH", 0x50494F48, 1, 1) + address(family, 29500, raw) + SECRET
    return (body + struct.pack("<Q", 7)).ljust(128, b"\0")


def answer(peers):
    return struct.pack("<IHHI", 0x42504F48, BOOTSTRAP_VERSION, 0, len(peers)) + b"".join(peers)


def error_answer(text):
    return struct.pack("<IHHI", 0x42504F48, BOOTSTRAP_VERSION, 1, len(text)) + text


def hello(streams, index, from_rank, to_rank):
    return (struct.pack("<IHHHH", 0x43504F48, 1, streams, index, 0) + SECRET +
            struct.pack("<QII", 7, from_rank, to_rank))


def status(rank, text):
    op = lambda kind, seq: struct.pack("<BBHIQ", kind, 7, 0, seq, 1024)
    return (struct.pack("<IHBBQI", 0x54534F48, 1, 0, 0, 0x0123456789ABCDEF, rank) + op(1, 57) +
            op(1, 56) + struct.pack("<H", len(text)) + text)


def notice(rank, code, text):
    # A failure notice (core/failure_notice.h): magic "HOFN", version 1, code, job tag, reporter,
    # the operation, the cause.
    op = lambda kind, seq: struct.pack("<BBHIQ", kind, 7, 0, seq, 1024)
    return (struct.pack("<IHHQI", 0x4E464F48, 1, code, 0x0123456789ABCDEF, rank) + op(1, 57) +
            struct.pack("<H", len(text)) + text)


def frame(kind, seq, payload):
    # Version 2: the call's count, type, op and root follow (zero here, as the harness posts).
    return struct.pack("<HBBIQQBBHI", 0x4F48, 2, kind, seq, len(payload), 0, 0, 0, 0, 0) + payload


def receives(layout, posts, split=0):
    return bytes([1, layout]) + b"".join(struct.pack("<BBH", k, s, n) for k, s, n in posts) + \
        struct.pack("<H", split)


def rdma_setup(rails, queue_pairs):
    # An rdma setup message (transport/rdma/rdma_setup_wire.h): magic "HRDM", version 1, ok, no
    # error text, job tag, ranks, 8 slots of 512 KiB, the rails, then the queue pairs.
    body = struct.pack("<IBBHQIIIQBB", 0x4D445248, 1, 1, 0, 7, 0, 1, 8, 512 << 10, len(rails),
                       len(queue_pairs))
    for port in rails:
        gid = bytes(10) + b"\xff\xff" + bytes([10, 0, 2, 15])
        body += gid + struct.pack("<HBBBBQI", 0, port, 3, 2, 1, 0x7F0000001000, 0x1234)
    for rail, number, psn in queue_pairs:
        body += struct.pack("<BII", rail, number, psn)
    return body


ipv6_loopback = bytes(15) + b"\1"
corpus = {
    "bootstrap_fuzz": {
        "registration_ipv4": b"\0" + registration(2, 1),
        "registration_ipv6": b"\0" + registration(4, 3, AF_INET6, ipv6_loopback),
        "unique_id_ipv4": b"\1" + unique_id(AF_INET, bytes([127, 0, 0, 1])),
        "unique_id_ipv6": b"\1" + unique_id(AF_INET6, ipv6_loopback),
        "answer_two_ranks": b"\2\1" + answer([peer(10, 1, b"a", AF_INET, 6000, b"\x7f\0\0\1"),
                                             peer(11, 1, b"a", AF_INET, 6001, b"\x7f\0\0\1")]),
        "answer_error": b"\2\1" + error_answer(b"rank 1 registered twice"),
    },
    "tcp_fuzz": {
        "hello": b"\0" + hello(1, 0, 0, 1),
        "hello_streams": b"\0" + hello(4, 3, 2, 5),
        "status_answer": b"S" + status(3, b"data from rank 2 (host a, pid 9)"),
        "failure_notice": b"N" + notice(3, 6, b"rank 1 (host a, pid 9) exited while rank 3 waited"),
        "frames_one_stream": receives(1, [(1, 0, 8), (7, 1, 0)]) +
        frame(1, 0, bytes(range(8))) + frame(7, 1, b""),
        "frames_two_streams": receives(8 + 2, [(4, 3, 4), (4, 3, 4), (4, 3, 2)],
                                       split=2 * 32 + 6) +
        frame(4, 3, b"abcd") + frame(4, 3, b"ij") + frame(4, 3, b"efgh"),
    },
    "rdma_setup_fuzz": {
        "setup_one_rail": b"\0" + rdma_setup([1], [(0, 0x11, 0x22)]),
        "setup_two_rails": b"\0" + rdma_setup([1, 2], [(0, 0x11, 0x22), (1, 0x33, 0x44)]),
        "setup_failure": b"\0" + struct.pack("<IBBH", 0x4D445248, 1, 0, 5) + b"no qp" +
        bytes(33),
        "reach_usable": b"\1" + rdma_reach(),
        "hca": b"\2^=mlx5_0:1,rxe",
    },
    "env_fuzz": {
        "sizes_ifname": b"4M\0=lo,eth\0lo\0^shm",
        "plain": b"512\0^docker,lo\0eth0\0tcp",
        "secret": b"0123456789abcdef0123456789ABCDEF\0eth\0eth1\0shm,tcp",
    },
}

for target, seeds in corpus.items():
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in seeds.items():
        (folder / name).write_bytes(data)
