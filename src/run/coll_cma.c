/* Single-copy collectives on ordinary buffers (see coll_cma.h).
 *
 * Why. On private buffers the built-in schedules move every byte through
 * the shared-memory transport's slots: the sender copies into a slot, the
 * receiver copies (or reduces) out of it, and a ring allreduce on n ranks
 * takes 2(n-1) steps, each a wake-up of the next rank. With 8 ranks on the
 * 2 cores of the development host a step waits until the next rank is
 * scheduled, so a 4 MiB allreduce paid 14 scheduling delays per round on
 * top of two copies of every byte (the profile in docs/run.md, "Ordinary
 * buffers at 8-16 ranks"). Here a call costs two waits for every rank
 * (the record exchange before and the done counter after), whatever n.
 *
 * How. Each call publishes a record in the control pages (region.h) with
 * the addresses of its sendbuf and recvbuf and whether this process can
 * reach its peers' memory (weft__cma_available), and waits for everyone's
 * (weft__region_post, which also compares the call's arguments,
 * call_agree.h). When every rank can, each rank moves its share directly
 * between the processes with process_vm_readv/writev, which copy once,
 * kernel to user, without a bounce buffer:
 *  allreduce: the workers (weft__region_workers: the ranks, or as many as
 *    the host has CPUs) own one block each; a worker reads tile after tile
 *    of its block from every rank's sendbuf into the communicator's scratch
 *    (a cache-sized tile of each peer), combines them in rank order
 *    ((in_0 op in_1) op in_2 ..., the order of every other path, with the
 *    reduction's line kernels, coll_shared_core.h) into its own recvbuf
 *    and writes the result tile into every peer's recvbuf. Per byte of the
 *    buffer: one read from each rank and one write to each, as the
 *    single-pass path on shared buffers (coll_shared.c), plus the copy
 *    through the tile.
 *  reduce: as allreduce, the result tiles written to the root only.
 *  reduce-scatter: every rank reads its block of every peer's sendbuf and
 *    combines it into its recvbuf.
 *  allgather, broadcast, all-to-all: every rank reads what it receives
 *    straight from the peers' sendbufs into its recvbuf, one system call
 *    per peer (an all-to-all in place first copies its input: peers read
 *    blocks of it that this rank overwrites).
 * Then every rank publishes that it is done and waits for everyone
 * (weft__region_done): a peer may still be reading this rank's sendbuf or
 * writing its recvbuf until then.
 *
 * In place. Block b (allreduce, reduce) of any rank's buffers is read and
 * written by its worker only, every source tile is read before the result
 * tile is written, and the reduce-scatter, allgather and broadcast write
 * only what no peer reads.
 *
 * Access. process_vm_readv needs ptrace access to the peer: the same user,
 * and under Yama's ptrace_scope 1 the peer's permission, which each
 * process grants with PR_SET_PTRACER_ANY on its first check (a peer of the
 * same user can then read it as under ptrace_scope 0; scopes 2 and 3 turn
 * the path off). A seccomp policy that refuses the call (some container
 * runtimes without CAP_SYS_PTRACE) shows in the check, which reads the
 * process's own memory. A rank that cannot takes the transport's slots,
 * and so do all ranks of that call (the record says so). A transfer that
 * fails anyway fails the communicator naming the peer and the system
 * call's error, unless the peer failed or died (a failed rank leaves its
 * call and may free its buffers or exit while peers still copy): then
 * the peer's failure is the cause, which every rank names.
 *
 * Thresholds. Below weft__cma_min_bytes the two waits and the system calls
 * (about 1 us each) cost more than the slots; the limits were measured
 * with bench/run.sh on the 2-core development host (docs/run.md).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/block.h"
#include "run/call_agree.h"
#include "run/cause.h"
#include "run/coll_cma.h"
#include "run/coll_shared_core.h"
#include "run/comm_fail.h"
#include "run/p2p.h"
#include "run/transport/shm/region.h"

/* Scratch for one round of tiles: one tile per peer and the result's. */
#define CMA_STAGE_BYTES ((size_t)512 << 10)
#define CMA_TILE_MIN ((size_t)4 << 10)
#define CMA_TILE_MAX ((size_t)256 << 10)

/* 0: not checked yet; 1: available; -1: not. */
static _Atomic int g_cma;

size_t weft__cma_min_bytes(weft_coll coll, uint32_t size)
{
    if (size < 2 || coll < 0 || coll >= WEFT__COLL_COUNT)
        return SIZE_MAX;
    /* Against the ring (allreduce: 2(n-1) steps, the others n-1), each
     * step a wake-up of the next rank. With 2 ranks the ring has one step
     * per phase, and a kernel copy costs about three user-space copies on
     * the development VM (docs/run.md, "Not done yet"): single copy was
     * level with the ring from 64 KiB to 4 MiB, so 2 ranks keep the
     * slots, but for broadcast from 32 KiB and allgather from 64 KiB of
     * output (issue 28; docs/interop.md, "Mid-size messages at 2 ranks"):
     * OSU 7.4 through libweft_mpi.so against Open MPI 4.1.4, whose vader
     * moves messages above its 4 KiB eager limit with one CMA copy. Through
     * the slots a call costs two copies of every byte one after the other
     * (the receiver starts once the sender's copy is in the slot), and lost
     * on a quiet host (chrt -f 10, medians of 5-7 alternating runs):
     * osu_bcast 1.10-1.47x at 32-128 KiB, osu_allgather 0.92-1.10x at
     * 32-64 KiB blocks, where single copy was level with Open MPI (bcast
     * 1.00-1.04x, allgather 0.83-0.96x). From 256 KiB the slots were
     * faster there (bcast 0.48-0.88x against single copy's 0.98-1.06x),
     * but with other jobs on the host (load average 5-8) they were
     * 2.2-4.2x slower than Open MPI from 256 KiB to 1 MiB, single copy
     * 0.58-1.33x: single copy lost far less. Below, the slots won
     * (bcast 16 KiB 2.52 us against 3.10; allgather 16 KiB blocks 3.12
     * against 3.96). With 4 (oversubscribed on 2 CPUs), single copy was level
     * at 64 KiB and twice as fast from 256 KiB (79 against 159 us, 4 MiB
     * 1.56 against 3.0 ms); with 8 and 16 ranks it was 3-5 times as fast
     * at 16 KiB (8 ranks: 48 against 152 us; 16: 91 against 426 us).
     * From 8 ranks every call that no small-message path takes first
     * (coll_small.c, coll_direct.c) runs single-copy: two barriers and
     * at most 2(n-1) system calls against the ring's 7 to 14 wake-ups. */
    if (size == 2)
        return coll == WEFT_COLL_BROADCAST   ? (size_t)32 << 10
               : coll == WEFT_COLL_ALLGATHER ? (size_t)64 << 10
                                             : SIZE_MAX;
    if (size <= 4)
        return (size_t)128 << 10;
    if (size < 8)
        return (size_t)16 << 10;
    return 1;
}

/* Yama's ptrace_scope (0 when Yama is absent). */
static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (!f)
        return 0;
    int v = 0;
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

bool weft__cma_available(void)
{
    int s = atomic_load(&g_cma);
    if (s)
        return s > 0;
    int scope = yama_scope();
    bool ok = scope < 2;
    if (ok && scope == 1)
        ok = prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0;
    if (ok) {
        char a = 42, b = 0;
        struct iovec l = {&b, 1}, r = {&a, 1};
        ok = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 1 && b == 42;
    }
    atomic_store(&g_cma, ok ? 1 : -1);
    return ok;
}

void weft__cma_disable(void)
{
    atomic_store(&g_cma, -1);
}

/* Bytes of a tile on n ranks: n tiles fit CMA_STAGE_BYTES, a multiple of
 * 4 KiB (so of every element size and cache line). */
static size_t tile_bytes(uint32_t n)
{
    size_t t = CMA_STAGE_BYTES / n / CMA_TILE_MIN * CMA_TILE_MIN;
    if (t < CMA_TILE_MIN)
        t = CMA_TILE_MIN;
    if (t > CMA_TILE_MAX)
        t = CMA_TILE_MAX;
    return t;
}

/* Publishes this rank's record and decides with everyone's (see the top);
 * *seq is the call's number for weft__region_done. */
static weft_err cma_agree(weft_comm *c, const void *sendbuf, const void *recvbuf, bool able,
                          uint64_t *seq, bool *ran, weft_diag *d)
{
    weft__region_rec me = {.seq = weft__region_next_seq(c)};
    weft__call_to_rec(c, &me);
    if (able && weft__cma_available()) {
        me.flags = WEFT__REC_CMA;
        me.soff = (uint64_t)(uintptr_t)sendbuf;
        me.roff = (uint64_t)(uintptr_t)recvbuf;
    }
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e)
        return e;
    *seq = me.seq;
    if ((e = weft__call_check_recs(c, recs, d)))
        return e;
    bool all = true;
    for (uint32_t q = 0; q < c->size; q++)
        all = all && (recs[q].flags & WEFT__REC_CMA);
    *ran = all;
    if (all)
        weft__region_count_cma(c);
    return WEFT_OK;
}

/* Copies len bytes between local memory and rank q's address remote
 * (write: local to q). Any failure fails the communicator. When q failed
 * or died (its control page or its process says so), that is the cause
 * (cause.h), so that every rank names the rank that failed first: a rank
 * that failed returns from its call and may free its buffers or exit
 * while a peer still copies, which then sees EFAULT or ESRCH. ESRCH is
 * q's death even while its process still shows: an exiting process
 * loses its memory before it becomes a zombie. */
static weft_err xfer(weft_comm *c, uint32_t q, bool write, unsigned char *local, uint64_t remote,
                     size_t len, weft_diag *d)
{
    pid_t pid = (pid_t)weft__region_pid(c, q);
    size_t total = len;
    while (len) {
        struct iovec l = {local, len}, r = {(void *)(uintptr_t)remote, len};
        ssize_t k = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                          : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (k > 0) {
            local += k;
            remote += (uint64_t)k;
            len -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        int err = k < 0 ? errno : EFAULT;
        weft__cause why;
        bool gone = weft__region_peer_gone(c, q, &why);
        if (!gone && err == ESRCH) {
            /* Exiting: its memory is gone before its process is. */
            why = (weft__cause){
                .kind = WEFT__CAUSE_DIED, .rank = q, .pid = (uint32_t)pid, .witness = c->rank};
            gone = true;
        }
        if (gone) {
            weft__cause_diag(d, "shm", &why, c->rank);
            return weft__comm_fail_cause(c, WEFT_EPEER, &why, d);
        }
        weft_diag_set(d, WEFT_EIO,
                      "comm: rank %u cannot %s %zu bytes %s rank %u's memory at %#llx: %s", c->rank,
                      write ? "write" : "read", total, write ? "into" : "from", q,
                      (unsigned long long)(remote - (total - len)), strerror(err));
        return weft__comm_fail(c, WEFT_EIO, d);
    }
    return WEFT_OK;
}

/* Ends a call that ran: the done wait, unless a transfer failed the
 * communicator (e). */
static weft_err finish(weft_comm *c, uint64_t seq, weft_err e, weft_diag *d)
{
    return e ? e : weft__region_done(c, seq, d);
}

enum { TO_ALL, TO_SELF, TO_ROOT };

/* A range of a reduction: len bytes at src0 of every rank's sendbuf,
 * combined into dst0 of the recvbuf of every rank (TO_ALL), this rank
 * (TO_SELF) or the root (TO_ROOT). in and out are this rank's buffers (out
 * may be NULL off the root of TO_ROOT). */
typedef struct cma_range {
    const unsigned char *in;
    unsigned char *out;
    size_t src0, dst0, len;
    int to;
    uint32_t root;
} cma_range;

static weft_err no_scratch(weft_comm *c, weft_diag *d)
{
    weft_diag_set(d, WEFT_ENOMEM, "comm: rank %u: out of memory for the single-copy tiles",
                  c->rank);
    return weft__comm_fail(c, WEFT_ENOMEM, d);
}

static weft_err reduce_range(weft_comm *c, const cma_range *j, const weft__reducer *red,
                             weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    size_t tile = tile_bytes(n);
    unsigned char *stage = weft__comm_scratch(c, (size_t)n * tile);
    if (!stage)
        return no_scratch(c, d);
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char **src = weft__region_ptrs(c);
    bool local_out = j->to != TO_ROOT || me == j->root;
    for (size_t x = 0; x < j->len; x += tile) {
        size_t k = j->len - x < tile ? j->len - x : tile;
        for (uint32_t q = 0; q < n; q++) {
            if (q == me) {
                src[q] = (unsigned char *)j->in + j->src0 + x;
                continue;
            }
            src[q] = stage + (size_t)(q < me ? q : q - 1) * tile;
            weft_err e = xfer(c, q, false, src[q], recs[q].soff + j->src0 + x, k, d);
            if (e)
                return e;
        }
        unsigned char *dst = local_out ? j->out + j->dst0 + x : stage + (size_t)(n - 1) * tile;
        weft__shared_combine(weft__region_work(c), src, n, &dst, 1, k, red, false);
        for (uint32_t q = 0; q < n; q++) {
            if (q == me || (j->to == TO_SELF) || (j->to == TO_ROOT && q != j->root))
                continue;
            weft_err e = xfer(c, q, true, dst, recs[q].roff + j->dst0 + x, k, d);
            if (e)
                return e;
        }
    }
    return WEFT_OK;
}

static bool fits(const weft_comm *c, weft_coll coll, size_t bytes)
{
    return weft__region_records(c) && bytes >= weft__cma_min_bytes(coll, c->size);
}

weft_err weft__cma_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t es = red->es;
    if (!fits(c, WEFT_COLL_ALLREDUCE, count * es))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = cma_agree(c, sendbuf, recvbuf, true, &seq, ran, d);
    if (e || !*ran)
        return e;
    uint32_t r = c->rank, w = weft__region_workers(c);
    if (r < w) {
        size_t lo = weft__block_at(count, w, r) * es, hi = weft__block_at(count, w, r + 1) * es;
        cma_range j = {
            .in = sendbuf, .out = recvbuf, .src0 = lo, .dst0 = lo, .len = hi - lo, .to = TO_ALL};
        e = reduce_range(c, &j, red, d);
    }
    return finish(c, seq, e, d);
}

weft_err weft__cma_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                          const weft__reducer *red, uint32_t root, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t es = red->es;
    if (!fits(c, WEFT_COLL_REDUCE, count * es))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = cma_agree(c, sendbuf, c->rank == root ? recvbuf : NULL, true, &seq, ran, d);
    if (e || !*ran)
        return e;
    uint32_t r = c->rank, w = weft__region_workers(c);
    if (r < w) {
        size_t lo = weft__block_at(count, w, r) * es, hi = weft__block_at(count, w, r + 1) * es;
        cma_range j = {.in = sendbuf,
                       .out = recvbuf,
                       .src0 = lo,
                       .dst0 = lo,
                       .len = hi - lo,
                       .to = TO_ROOT,
                       .root = root};
        e = reduce_range(c, &j, red, d);
    }
    return finish(c, seq, e, d);
}

weft_err weft__cma_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                  const weft__reducer *red, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t block = count * red->es;
    if (!fits(c, WEFT_COLL_REDUCESCATTER, block * c->size))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = cma_agree(c, sendbuf, recvbuf, true, &seq, ran, d);
    if (e || !*ran)
        return e;
    cma_range j = {.in = sendbuf,
                   .out = recvbuf,
                   .src0 = (size_t)c->rank * block,
                   .dst0 = 0,
                   .len = block,
                   .to = TO_SELF};
    e = reduce_range(c, &j, red, d);
    return finish(c, seq, e, d);
}

weft_err weft__cma_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    uint32_t n = c->size, me = c->rank;
    size_t block = count * es;
    if (!fits(c, WEFT_COLL_ALLGATHER, block * n))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = cma_agree(c, sendbuf, recvbuf, true, &seq, ran, d);
    if (e || !*ran)
        return e;
    const weft__region_rec *recs = weft__region_recs(c);
    unsigned char *out = recvbuf;
    if (sendbuf != out + (size_t)me * block)
        memcpy(out + (size_t)me * block, sendbuf, block);
    /* Peers in the order me+1, me+2, ...: not every rank reads rank 0
     * first. */
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t q = (me + k) % n;
        e = xfer(c, q, false, out + (size_t)q * block, recs[q].soff, block, d);
    }
    return finish(c, seq, e, d);
}

weft_err weft__cma_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                             size_t es, uint32_t root, bool *ran, weft_diag *d)
{
    *ran = false;
    size_t bytes = count * es;
    if (!fits(c, WEFT_COLL_BROADCAST, bytes))
        return WEFT_OK;
    uint64_t seq;
    weft_err e = cma_agree(c, c->rank == root ? sendbuf : NULL, recvbuf, true, &seq, ran, d);
    if (e || !*ran)
        return e;
    if (c->rank == root) {
        if (sendbuf != recvbuf)
            memcpy(recvbuf, sendbuf, bytes);
    } else {
        e = xfer(c, root, false, recvbuf, weft__region_recs(c)[root].soff, bytes, d);
    }
    return finish(c, seq, e, d);
}

weft_err weft__cma_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                            size_t es, bool *ran, weft_diag *d)
{
    *ran = false;
    uint32_t n = c->size, me = c->rank;
    size_t block = count * es;
    if (!fits(c, WEFT_COLL_ALLTOALL, block * n))
        return WEFT_OK;
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, *copy = NULL;
    if (sendbuf == recvbuf) {
        /* Peers read blocks of the input that this rank overwrites:
         * they read a copy instead. A rank out of memory for it says so in
         * its record, and every rank takes the ordinary schedule. */
        copy = weft__malloc(block * n);
        if (copy)
            memcpy(copy, sendbuf, block * n);
        in = copy;
    }
    uint64_t seq;
    weft_err e = cma_agree(c, in, recvbuf, in != NULL, &seq, ran, d);
    if (e || !*ran)
        goto free_copy;
    const weft__region_rec *recs = weft__region_recs(c);
    memcpy(out + (size_t)me * block, in + (size_t)me * block, block);
    for (uint32_t k = 1; k < n && !e; k++) {
        uint32_t q = (me + k) % n;
        e = xfer(c, q, false, out + (size_t)q * block, recs[q].soff + (uint64_t)me * block, block,
                 d);
    }
    e = finish(c, seq, e, d);
free_copy:
    weft__free(copy);
    return e;
}
