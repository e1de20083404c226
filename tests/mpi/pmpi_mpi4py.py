#!/usr/bin/python3
"""An mpi4py program for libweft_mpi.so (tests/mpi/pmpi_mpi4py.sh, CTest
pmpi_mpi4py_test), run by tests/mpi/pmpi_case.sh plainly and preloaded.

mpi4py initializes MPI with MPI_THREAD_MULTIPLE; the first versions of the
library then switched weft off (none of ~76,000 calls of mpi4py's test suite
served). Here every collective below is served. It uses the buffer API on
numpy arrays (MPI_Allreduce, in place too, MPI_Bcast from every root,
MPI_Allgather, MPI_Reduce_scatter_block, in place as mpi4py's
testReduceScatterBlock does, MPI_Iallreduce), the pickle API (bcast,
allgather, allreduce of Python objects), a duplicate communicator, and two
Python threads each on a duplicate of its own (mpi4py releases the GIL in MPI
calls, so they call at once). Every result is checked exactly (sums of small
integers, exact in float64), and each rank prints one line of result digests
("expects result"), which pmpi_case.sh requires to be the same plainly and
preloaded.

The pickle API's MPI calls are mpi4py 3.1's (src/mpi4py/MPI/msgpickle.pxi,
as the finalize counts of Debian's python3-mpi4py 3.1.4 show): bcast(obj) is
two MPI_Bcast on the communicator (the length, then the bytes); allgather(obj)
one MPI_Allgather (the lengths; the bytes go by MPI_Allgatherv, which the
library does not intercept); allreduce(obj) a reduction by point-to-point
messages on a private duplicate of the communicator that mpi4py makes on
first use (an MPI_Comm_dup, so a "dup" communicator with a weft side),
then two MPI_Bcast on it. pmpi_mpi4py.sh skips other versions.
Usage: pmpi_mpi4py.py
"""
import hashlib
import threading

import numpy as np
from mpi4py import MPI

PROG = "pmpi_mpi4py.py"
KINDS = ["world", "dup", "split", "split_type", "create", "other"]
NAMES = ["Allreduce", "Allgather", "Reduce_scatter_block", "Bcast", "Reduce", "Alltoall",
         "Reduce_scatter", "Alltoallv", "Alltoallw", "Iallreduce", "Iallgather",
         "Ireduce_scatter_block", "Ibcast", "Ireduce", "Ialltoall", "Ireduce_scatter",
         "Ialltoallv", "Ibarrier"]
COUNTS = [1, 5, 1000, 20011]
DTYPES = [np.float64, np.int32, np.int64]
THREAD_ROUNDS = 30

world = MPI.COMM_WORLD
me, n = world.Get_rank(), world.Get_size()
served = {k: {c: 0 for c in NAMES} for k in KINDS}
lock = threading.Lock()
checks = 0
failures = 0
digest = hashlib.sha256()


def expect(ok, what):
    global checks, failures
    with lock:
        checks += 1
        if not ok:
            failures += 1
            if failures <= 10:
                print(f"{PROG}: rank {me}: {what}", flush=True)


def served_call(kind, coll, times=1):
    with lock:
        served[kind][coll] += times


def note(a):
    digest.update(np.ascontiguousarray(a).tobytes())


def buffers(comm, kind):
    """The buffer API on numpy arrays: every count and type."""
    for dt in DTYPES:
        for count in COUNTS:
            i = np.arange(count, dtype=np.int64)
            mine = ((i % 97) + 10 * me).astype(dt)
            want = sum(((i % 97) + 10 * q) for q in range(n)).astype(dt)
            out = np.zeros(count, dtype=dt)
            comm.Allreduce(mine, out, op=MPI.SUM)
            served_call(kind, "Allreduce")
            expect(np.array_equal(out, want), f"Allreduce {dt.__name__} x{count}")
            note(out)
            buf = mine.copy()
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.MAX)
            served_call(kind, "Allreduce")
            expect(np.array_equal(buf, ((i % 97) + 10 * (n - 1)).astype(dt)),
                   f"Allreduce in place {dt.__name__} x{count}")
            for root in range(n):
                buf = (i * 3 + root).astype(dt) if me == root else np.zeros(count, dtype=dt)
                comm.Bcast(buf, root=root)
                served_call(kind, "Bcast")
                expect(np.array_equal(buf, (i * 3 + root).astype(dt)),
                       f"Bcast root {root} {dt.__name__} x{count}")
            out = np.zeros(n * count, dtype=dt)
            comm.Allgather(mine, out)
            served_call(kind, "Allgather")
            expect(np.array_equal(out, np.concatenate(
                [((i % 97) + 10 * q).astype(dt) for q in range(n)])),
                f"Allgather {dt.__name__} x{count}")
            note(out)
            # Reduce_scatter_block, then in place: block me of the sum goes
            # to the first block, the other blocks keep the input (the
            # case mpi4py's testReduceScatterBlock failed on).
            full = np.concatenate([(i + 7 * b + me).astype(dt) for b in range(n)])
            wantb = (n * (i + 7 * me) + n * (n - 1) // 2).astype(dt)
            out = np.zeros(count, dtype=dt)
            comm.Reduce_scatter_block(full, out, op=MPI.SUM)
            served_call(kind, "Reduce_scatter_block")
            expect(np.array_equal(out, wantb), f"Reduce_scatter_block {dt.__name__} x{count}")
            buf = full.copy()
            comm.Reduce_scatter_block(MPI.IN_PLACE, buf, op=MPI.SUM)
            served_call(kind, "Reduce_scatter_block")
            expect(np.array_equal(buf[:count], wantb) and
                   np.array_equal(buf[count:], full[count:]),
                   f"Reduce_scatter_block in place {dt.__name__} x{count}")
            note(buf)
            out = np.zeros(count, dtype=dt)
            comm.Iallreduce(mine, out, op=MPI.SUM).Wait()
            served_call(kind, "Iallreduce")
            expect(np.array_equal(out, want), f"Iallreduce {dt.__name__} x{count}")


def objects(comm, kind):
    """The pickle API (see the module's note on its MPI calls)."""
    for root in range(n):
        obj = {"root": root, "list": list(range(root + 3)), "text": "w" * (root * 50)}
        got = comm.bcast(obj if me == root else None, root=root)
        served_call(kind, "Bcast", 2)
        expect(got == obj, f"bcast object root {root}")
        digest.update(repr(got).encode())
    got = comm.allgather((me, "r" * me))
    served_call(kind, "Allgather")
    expect(got == [(q, "r" * q) for q in range(n)], "allgather objects")
    digest.update(repr(got).encode())
    for op, want in ((MPI.SUM, n * (n - 1) // 2), (MPI.MAX, n - 1), (MPI.MIN, 0)):
        got = comm.allreduce(me, op=op)
        served_call("dup", "Bcast", 2)
        expect(got == want, f"allreduce object {op}: {got}, want {want}")
    got = comm.allreduce([me], op=MPI.SUM)
    served_call("dup", "Bcast", 2)
    expect(sorted(got) == list(range(n)), f"allreduce list: {got}")


def thread_body(t, comm):
    for r in range(THREAD_ROUNDS):
        a = np.full(64 + t * 100 + r, me * 1000 + t * 10 + r % 7, dtype=np.int64)
        out = np.zeros_like(a)
        comm.Allreduce(a, out, op=MPI.SUM)
        served_call("dup", "Allreduce")
        want = sum(q * 1000 + t * 10 + r % 7 for q in range(n))
        expect(bool(np.all(out == want)), f"thread {t} round {r}: {out[0]}, want {want}")


def main():
    expect(MPI.Query_thread() == MPI.THREAD_MULTIPLE, "thread level is not MULTIPLE")
    buffers(world, "world")
    objects(world, "world")
    dup = world.Dup()
    buffers(dup, "dup")
    dup.Free()
    comms = [world.Dup() for _ in range(2)]
    threads = [threading.Thread(target=thread_body, args=(t, c)) for t, c in enumerate(comms)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for c in comms:
        c.Free()
    print(f"{PROG}: rank {me} expects result: {digest.hexdigest()}")
    totals = {c: sum(served[k][c] for k in KINDS) for c in NAMES}
    totals["Allreduce"] += 1  # the tally's sum below
    served["world"]["Allreduce"] += 1
    print(f"{PROG}: rank {me} expects weft/MPI: " +
          ", ".join(f"{c} {totals[c]}/0" for c in NAMES))
    for k in KINDS:
        line = ", ".join(f"{c} {served[k][c]}/0" for c in NAMES if served[k][c])
        if line:
            print(f"{PROG}: rank {me} expects on {k}: {line}")
    mine = np.array([failures, checks], dtype=np.int64)
    total = np.zeros(2, dtype=np.int64)
    world.Allreduce(mine, total, op=MPI.SUM)
    if me == 0:
        print(f"{PROG}: {n} ranks, {total[1]} checks, {total[0]} failed", flush=True)


main()
