/* All-to-all with a count and a displacement per pair (weft_alltoallv), on
 * the pairwise schedule of coll_alltoall.c: in step k (1 .. size-1) rank r
 * sends its block for rank r+k and receives rank r-k's block, its own block
 * being a local copy.
 *
 * MPI leaves a count that differs between sender and receiver undefined;
 * here it must never hang or cut data silently, so before any data moves
 * the ranks share their counts (agree_counts: up to 128 ranks one
 * allgather of every rank's counts; beyond, an alltoall of the counts and
 * an allgather of what each receiver found). Every rank then returns the
 * same error, naming the lowest receiver that expects another count (and
 * its lowest such sender), and the communicator stays usable: nothing else
 * moved. The exchanges are of fixed size, so ranks that disagree still
 * complete them; they are pairwise exchanges on the transports, not
 * weft_allgather, which a forced plan or algorithm (WEFT_PLAN, WEFT_ALGO)
 * of another collective would refuse.
 *
 * Alltoallv plans (weft/plan.h, "Alltoallv"): a plan's traffic matrix fixes
 * every block's bytes, and a rank knows only its own row and column of the
 * call's, so the same exchange also checks that every rank's counts (times
 * the dtype's size) are the plan's row: with the receivers agreeing, the
 * columns are then the plan's too. A call that does not match fails on
 * every rank with one message naming the lowest sender and receiver that
 * differ. weft_comm_plan_run_v runs a prepared plan so; weft_alltoallv runs
 * the forced plan (WEFT_PLAN) when it is an alltoallv plan, and then a call
 * whose counts are not its matrix fails alike (a forced plan never falls
 * back silently); with any other plan forced, or none, it runs its own
 * pairwise schedule.
 *
 * Memory running out on one rank (its counts' buffers, its requests, the
 * in-place copy, the plan's run state) leaves it unable to take part in an
 * exchange its peers are in or about to enter: the communicator then fails
 * on that rank (weft__comm_fail, as the ring does without scratch,
 * coll_ring.c), which tells the peers, so that they return WEFT_EPEER at
 * once instead of waiting for the timeout. A communicator of one rank has
 * nobody waiting and stays usable. */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "run/coll_alltoallv.h"
#include "run/coll_busy.h"
#include "run/coll_ring.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/exec_plan.h"
#include "run/p2p.h"
#include "run/select.h"

#define NONE UINT64_MAX

/* The message for the first difference, the same on every rank. */
weft_err weft__alltoallv_differ(weft_diag *d, uint64_t sender, uint64_t sent, weft_dtype dtype,
                                uint32_t receiver, uint64_t expected)
{
    return weft_diag_set(d, WEFT_EINVAL,
                         "comm: ranks disagree on the counts of alltoallv: rank %llu sends %llu "
                         "elements (%s) to rank %u, which expects %llu",
                         (unsigned long long)sender, (unsigned long long)sent,
                         weft_dtype_name(dtype), receiver, (unsigned long long)expected);
}

static weft_err differ_dtype(weft_diag *d, uint64_t t0, uint32_t r, uint64_t tr)
{
    return weft_diag_set(d, WEFT_EINVAL,
                         "comm: ranks disagree on the dtype of alltoallv: rank 0 has %s, rank %u "
                         "has %s",
                         weft_dtype_name((weft_dtype)t0), r, weft_dtype_name((weft_dtype)tr));
}

/* The matrix a call must match: an alltoallv plan's (weft/plan.h), named
 * in messages as `name` ("the plan x.plan (WEFT_PLAN)"). */
typedef struct want_matrix {
    const weft_traffic *t; /* NULL: any counts */
    const char *name;
} want_matrix;

/* True when count elements of es bytes are b bytes. */
static bool same_bytes(uint64_t count, size_t es, uint64_t b)
{
    return count <= UINT64_MAX / es && count * es == b;
}

static weft_err differ_plan(weft_diag *d, const want_matrix *m, uint64_t sender, uint32_t to,
                            uint64_t count, weft_dtype dtype)
{
    size_t es = weft_dtype_size(dtype);
    uint64_t b = m->t->bytes[(size_t)sender * m->t->ranks + to];
    char bytes[48] = "more than 2^64 bytes";
    if (count <= UINT64_MAX / es)
        snprintf(bytes, sizeof bytes, "%llu bytes", (unsigned long long)(count * es));
    return weft_diag_set(d, WEFT_EINVAL,
                         "comm: the counts of alltoallv differ from the traffic matrix of %s: "
                         "rank %llu sends rank %u %llu elements of %s (%s), the matrix %llu bytes",
                         m->name, (unsigned long long)sender, to, (unsigned long long)count,
                         weft_dtype_name(dtype), bytes, (unsigned long long)b);
}

/* One block to and from every other rank, all posted at once and waited
 * for together: one message latency, where the pairwise exchanges before
 * (size - 1 blocking steps, each waiting for its peer) took size - 1 (4
 * ranks, 8 B an alltoallv: 3 rounds for the counts and 3 for the data).
 * Block j goes from sbase + soff[j] (slen[j] bytes) and arrives at rbase +
 * roff[j] (rlen[j] bytes); empty blocks are skipped (their peer's is empty
 * too once the counts agree, and the counts' own exchanges have fixed
 * sizes). Own block: not touched. */
static weft_err exchange_all(weft_comm *c, const unsigned char *sbase, const size_t *soff,
                             const size_t *slen, unsigned char *rbase, const size_t *roff,
                             const size_t *rlen, weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    if (n < 2)
        return WEFT_OK;
    weft__xreq *req = weft__calloc(2 * ((size_t)n - 1), sizeof *req);
    weft__xreq **w = weft__calloc(2 * ((size_t)n - 1), sizeof *w);
    weft_err e = req && w ? WEFT_OK : weft_diag_code(d, WEFT_ENOMEM);
    size_t k = 0;
    for (uint32_t i = 1; !e && i < n; i++) {
        uint32_t from = (r + n - i) % n, to = (r + i) % n;
        if (rlen[from]) {
            req[k] = (weft__xreq){.peer = from, .buf = rbase + roff[from], .len = rlen[from]};
            w[k] = &req[k];
            if (!(e = weft__comm_post(c, &req[k], d)))
                k++;
        }
        if (!e && slen[to]) {
            req[k] = (weft__xreq){.peer = to,
                                  .is_send = true,
                                  .buf = (unsigned char *)sbase + soff[to],
                                  .len = slen[to]};
            w[k] = &req[k];
            if (!(e = weft__comm_post(c, &req[k], d)))
                k++;
        }
    }
    /* A failed post failed the communicator (as in coll_direct.c, nothing
     * is waited for then). */
    if (!e && k)
        e = weft__comm_wait(c, w, k, d);
    weft__free(w);
    weft__free(req);
    return e;
}

/* Every rank's w words into all (rank r's at all + r*w), by one exchange
 * with every other rank (exchange_all), and below the alltoall of one
 * word per pair: on the transports, not through the schedule selection,
 * where a forced plan or algorithm (WEFT_PLAN, WEFT_ALGO) of another
 * collective would refuse the call. */
static weft_err gather_words(weft_comm *c, const uint64_t *mine, uint64_t *all, size_t w,
                             weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    memcpy(all + (size_t)r * w, mine, w * sizeof *all);
    size_t *room = weft__malloc(4 * (size_t)n * sizeof *room);
    if (!room)
        return weft_diag_code(d, WEFT_ENOMEM);
    size_t *zero = room, *len = room + n, *roff = room + 2 * (size_t)n;
    for (uint32_t j = 0; j < n; j++) {
        zero[j] = 0;
        len[j] = w * sizeof *all;
        roff[j] = (size_t)j * w * sizeof *all;
    }
    weft_err e =
        exchange_all(c, (const unsigned char *)mine, zero, len, (unsigned char *)all, roff, len, d);
    weft__free(room);
    return e;
}

static weft_err exchange_words(weft_comm *c, const uint64_t *mine, uint64_t *theirs, weft_diag *d)
{
    uint32_t n = c->size, r = c->rank;
    theirs[r] = mine[r];
    size_t *room = weft__malloc(2 * (size_t)n * sizeof *room);
    if (!room)
        return weft_diag_code(d, WEFT_ENOMEM);
    size_t *off = room, *len = room + n;
    for (uint32_t j = 0; j < n; j++) {
        off[j] = (size_t)j * sizeof *mine;
        len[j] = sizeof *mine;
    }
    weft_err e = exchange_all(c, (const unsigned char *)mine, off, len, (unsigned char *)theirs,
                              off, len, d);
    weft__free(room);
    return e;
}

/* Up to weft__alltoallv_all_max ranks (128), one allgather of every rank's dtype, sendcounts and
 * recvcounts (2n + 1 words each: 256 KiB at 128 ranks) tells every rank
 * everything in size - 1 exchanges; beyond, an alltoall of the counts and
 * an allgather of what each rank found (six words each). */
uint32_t weft__alltoallv_all_max = 128;

/* Every rank's view, agreed: WEFT_OK, or WEFT_EINVAL with the same message
 * on every rank. Checked in order: the dtype, counts a receiver does not
 * expect, then (with m->t) the lowest sender and receiver whose count is
 * not m's bytes (the rows of m: with the receivers agreeing, its columns
 * follow). */
static weft_err agree_counts(weft_comm *c, const size_t *sendcounts, const size_t *recvcounts,
                             weft_dtype dtype, const want_matrix *m, weft_diag *d)
{
    uint32_t n = c->size;
    size_t es = weft_dtype_size(dtype);
    weft_err e = WEFT_OK;
    if (n <= weft__alltoallv_all_max) {
        size_t w = 2 * (size_t)n + 1;
        uint64_t *mine = weft__malloc(w * (n + 1u) * sizeof *mine);
        if (!mine)
            return weft_diag_code(d, WEFT_ENOMEM);
        uint64_t *all = mine + w;
        mine[0] = (uint64_t)dtype;
        for (uint32_t j = 0; j < n; j++) {
            mine[1 + j] = sendcounts[j];
            mine[1 + n + j] = recvcounts[j];
        }
        e = gather_words(c, mine, all, w, d);
        for (uint32_t r = 1; !e && r < n; r++)
            if (all[r * w] != all[0])
                e = differ_dtype(d, all[0], r, all[r * w]);
        /* Receiver r expects all[r*w + 1 + n + s] from s, which sends
         * all[s*w + 1 + r]. */
        for (uint32_t r = 0; !e && r < n; r++)
            for (uint32_t s = 0; !e && s < n; s++)
                if (all[(size_t)s * w + 1 + r] != all[(size_t)r * w + 1 + n + s])
                    e = weft__alltoallv_differ(d, s, all[(size_t)s * w + 1 + r], dtype, r,
                                               all[(size_t)r * w + 1 + n + s]);
        for (uint32_t s = 0; !e && m->t && s < n; s++)
            for (uint32_t r = 0; !e && r < n; r++)
                if (!same_bytes(all[(size_t)s * w + 1 + r], es, m->t->bytes[(size_t)s * n + r]))
                    e = differ_plan(d, m, s, r, all[(size_t)s * w + 1 + r], dtype);
        weft__free(mine);
        return e;
    }
    enum { REC = 6 };
    uint64_t *mine = weft__malloc((size_t)n * sizeof *mine * 2 + (size_t)n * REC * sizeof *mine);
    if (!mine)
        return weft_diag_code(d, WEFT_ENOMEM);
    uint64_t *theirs = mine + n, *all = theirs + n;
    for (uint32_t j = 0; j < n; j++)
        mine[j] = sendcounts[j];
    e = exchange_words(c, mine, theirs, d);
    /* dtype; the first sender whose count this rank does not expect, what
     * it expects and what it sends; the first receiver this rank sends a
     * count that m does not have, and that count. */
    uint64_t rec[REC] = {(uint64_t)dtype, NONE, 0, 0, NONE, 0};
    for (uint32_t j = 0; !e && j < n && rec[1] == NONE; j++)
        if (theirs[j] != recvcounts[j]) {
            rec[1] = j;
            rec[2] = recvcounts[j];
            rec[3] = theirs[j];
        }
    for (uint32_t j = 0; !e && m->t && j < n && rec[4] == NONE; j++)
        if (!same_bytes(sendcounts[j], es, m->t->bytes[(size_t)c->rank * n + j])) {
            rec[4] = j;
            rec[5] = sendcounts[j];
        }
    if (!e)
        e = gather_words(c, rec, all, REC, d);
    for (uint32_t r = 1; !e && r < n; r++)
        if (all[REC * r] != all[0])
            e = differ_dtype(d, all[0], r, all[REC * r]);
    for (uint32_t r = 0; !e && r < n; r++)
        if (all[REC * r + 1] != NONE)
            e = weft__alltoallv_differ(d, all[REC * r + 1], all[REC * r + 3], dtype, r,
                                       all[REC * r + 2]);
    for (uint32_t r = 0; !e && r < n; r++)
        if (all[REC * r + 4] != NONE)
            e = differ_plan(d, m, r, (uint32_t)all[REC * r + 4], all[REC * r + 5], dtype);
    weft__free(mine);
    return e;
}

static weft_err alltoallv_call(weft_comm *c, const void *sendbuf, const size_t *sendcounts,
                               const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                               const size_t *rdispls, weft_dtype dtype, weft_diag *d)
{
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e)
        return e;
    bool in_place = sendbuf == recvbuf;
    if (in_place) {
        /* The data to send lies where it will be received. */
        sendcounts = recvcounts;
        sdispls = rdispls;
    }
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return weft_diag_set(d, WEFT_EINVAL, "comm: alltoallv needs counts and displacements");
    want_matrix m = {NULL, NULL};
    const weft_plan *plan = NULL;
    weft_comm_plan *cp = weft__select_alltoallv(c, &plan, &m.name);
    char name[WEFT_DIAG_MSG_SIZE];
    if (cp) {
        snprintf(name, sizeof name, "the plan %s (WEFT_PLAN)", m.name);
        m.name = name;
        m.t = weft_plan_traffic(plan);
    }
    if ((e = agree_counts(c, sendcounts, recvcounts, dtype, &m, d)))
        return e;
    uint32_t n = c->size, r = c->rank;
    size_t es = weft_dtype_size(dtype);
    if (cp)
        return weft__comm_plan_run_v(cp, sendbuf, sdispls, recvbuf, rdispls, es, d);
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, *copy = NULL;
    if (in_place && n > 1) {
        size_t end = 0; /* elements */
        for (uint32_t j = 0; j < n; j++)
            if (recvcounts[j] && rdispls[j] + recvcounts[j] > end)
                end = rdispls[j] + recvcounts[j];
        if (!(copy = weft__malloc(end ? end * es : 1)))
            return weft_diag_code(d, WEFT_ENOMEM);
        if (end)
            memcpy(copy, recvbuf, end * es);
        in = copy;
    }
    if (sendcounts[r] && in + sdispls[r] * es != out + rdispls[r] * es)
        memmove(out + rdispls[r] * es, in + sdispls[r] * es, sendcounts[r] * es);
    /* Bytes and byte offsets of every block, for exchange_all. */
    size_t *room = weft__malloc(4 * (size_t)n * sizeof *room);
    if (!room)
        e = weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t j = 0; !e && j < n; j++) {
        room[j] = sdispls[j] * es;
        room[n + j] = sendcounts[j] * es;
        room[2 * n + j] = rdispls[j] * es;
        room[3 * n + j] = recvcounts[j] * es;
    }
    if (!e)
        e = exchange_all(c, in, room, room + n, out, room + 2 * n, room + 3 * n, d);
    weft__free(room);
    weft__free(copy);
    return e;
}

static weft_err plan_run_v_call(weft_comm_plan *cp, const void *sendbuf, const size_t *sendcounts,
                                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                const size_t *rdispls, weft_dtype dtype, weft_diag *d)
{
    weft_comm *c = weft__comm_plan_comm(cp);
    const weft_plan *p = weft__comm_plan_plan(cp);
    weft_err e = weft__coll_check(c, dtype, WEFT_SUM, false, d);
    if (e)
        return e;
    if (!weft_plan_traffic(p))
        return weft_diag_set(d, WEFT_EINVAL,
                             "plan: weft_comm_plan_run_v runs alltoallv plans (with a traffic "
                             "matrix); this plan has equal chunks: weft_comm_plan_run runs it");
    if (sendbuf == recvbuf) {
        sendcounts = recvcounts;
        sdispls = rdispls;
    }
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return weft_diag_set(d, WEFT_EINVAL, "comm: alltoallv needs counts and displacements");
    want_matrix m = {weft_plan_traffic(p), "the plan"};
    if ((e = agree_counts(c, sendcounts, recvcounts, dtype, &m, d)))
        return e;
    return weft__comm_plan_run_v(cp, sendbuf, sdispls, recvbuf, rdispls, weft_dtype_size(dtype), d);
}

/* A call that ran out of memory here fails the communicator, which tells
 * the peers (the header comment), unless a transport already failed it
 * (a post without memory, p2p.c); e otherwise. */
static weft_err out_of_memory(weft_comm *c, weft_err e, weft_diag *d)
{
    return weft__comm_fail_oom(c, e, "alltoallv", d);
}

weft_err weft_alltoallv(weft_comm *c, const void *sendbuf, const size_t *sendcounts,
                        const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                        const size_t *rdispls, weft_dtype dtype, weft_diag *d)
{
    weft__coll_enter(c);
    weft_err e =
        alltoallv_call(c, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, d);
    return weft__coll_leave(c, out_of_memory(c, e, d));
}

weft_err weft_comm_plan_run_v(weft_comm_plan *cp, const void *sendbuf, const size_t *sendcounts,
                              const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                              const size_t *rdispls, weft_dtype dtype, weft_diag *d)
{
    weft_comm *c = weft__comm_plan_comm(cp);
    weft__coll_enter(c);
    weft_err e =
        plan_run_v_call(cp, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, d);
    return weft__coll_leave(c, out_of_memory(c, e, d));
}
