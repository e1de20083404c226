/* Small calls of the MPI library through a ring of slots per rank (see
 * coll_tiny.h). */
#include "run/coll_tiny.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "run/call_agree.h"
#include "run/cause.h"
#include "run/clock.h"
#include "run/comm_fail.h"
#include "run/p2p.h"
#include "run/reduce.h"
#include "run/transport/shm/bell.h"
#include "run/transport/shm/region.h"

/* A rank's ring: a line with its consumed counter (rewritten every call),
 * a line with its fault (written once, when it found a disagreement; read
 * by every ring call, so it stays in the readers' caches), then the
 * slots, each a 32-byte head and its data, so that up to 32 bytes of data
 * share the head's cache line. */
typedef struct tiny_head {
    _Atomic uint64_t seq; /* stored last, release */
    uint32_t kind;        /* call_agree.c's kind word */
    uint32_t pad;
    uint64_t count;
    uint64_t aux;
} tiny_head;

#define TINY_FAULT_OFF 64u
#define TINY_SLOTS_OFF 128u
#define TINY_STRIDE ((size_t)WEFT__TINY_BYTES + 64u)
_Static_assert(sizeof(tiny_head) == 32, "a slot's head is 32 bytes");
_Static_assert(TINY_SLOTS_OFF + WEFT__TINY_SLOTS * TINY_STRIDE == WEFT__REGION_TINY_BYTES,
               "region.h reserves the ring");

/* Polls of a wait before it yields the CPU (with CPUs for every rank; with
 * more ranks than CPUs it yields at once): REGION_SPIN_POLLS of region.c,
 * for the same reason (about 10 us of `pause`). */
#define TINY_SPIN_POLLS 256u
/* How often a yielding wait checks the waited-on peer's liveness, and
 * after how long it naps TINY_NAP_NS between polls instead of only
 * yielding (a rank that yields keeps its CPU busy while the rank it waits
 * for is queued on another: region.c, wait_slow). */
#define TINY_CHECK_NS 20000000LL
#define TINY_NAP_AFTER_NS 1000000LL
#define TINY_NAP_NS 50000L
/* With more ranks than CPUs, how long a wait yields before it sleeps on
 * the awaited peer's doorbell, which the peer rings after it publishes:
 * REGION_YIELD_NS of region.c, for the reason given there (a yielding rank
 * keeps its CPU busy while the rank it waits for is queued). */
#define TINY_YIELD_NS 100000LL

static unsigned char *ring_of(const weft_comm *c, uint32_t q)
{
    return c->tiny->rings[q];
}

static _Atomic uint64_t *consumed_of(const weft_comm *c, uint32_t q)
{
    return (_Atomic uint64_t *)(void *)ring_of(c, q);
}

static _Atomic uint64_t *fault_of(const weft_comm *c, uint32_t q)
{
    return (_Atomic uint64_t *)(void *)(ring_of(c, q) + TINY_FAULT_OFF);
}

/* Where call seq's slot lies in a ring. */
static size_t slot_off(uint64_t seq)
{
    return TINY_SLOTS_OFF + (seq % WEFT__TINY_SLOTS) * TINY_STRIDE;
}

static tiny_head *head_of(const weft_comm *c, uint32_t q, uint64_t seq)
{
    return (tiny_head *)(void *)(ring_of(c, q) + slot_off(seq));
}

/* Rank q's slot of call t (t->off, computed once per call). */
static tiny_head *slot_of(const weft__tiny *t, uint32_t q)
{
    return (tiny_head *)(void *)(t->c->tiny->rings[q] + t->off);
}

bool weft__tiny_ready(const weft_comm *c)
{
    /* Asked on every small call: weft__region_records looks at every peer,
     * and its answer does not change. */
    weft__region_tiny_state *st = c->tiny;
    if (!st)
        return false;
    if (!st->ready)
        st->ready = weft__region_records(c) ? 1 : 2;
    return st->ready == 1;
}

uint64_t weft__tiny_calls(const weft_comm *c)
{
    return weft__tiny_ready(c) ? c->tiny->calls : 0;
}

const unsigned char **weft__tiny_ptrs(const weft_comm *c)
{
    return (const unsigned char **)weft__region_ptrs(c);
}

static weft_err check_faults(weft_comm *c, weft_diag *d);

/* MPI_Reduce_scatter's recvcounts at the start of n slots' data: the
 * first rank and index that differ from rank 0's, the same message
 * wherever computed; WEFT_OK when all are rank 0's. */
static weft_err counts_differ(uint32_t n, const unsigned char *const *src, weft_diag *d)
{
    for (uint32_t q = 1; q < n; q++) {
        if (memcmp(src[q], src[0], (size_t)n * 4) == 0)
            continue;
        const int32_t *a = (const int32_t *)(const void *)src[0];
        const int32_t *b = (const int32_t *)(const void *)src[q];
        uint32_t i = 0;
        while (a[i] == b[i])
            i++;
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the recvcounts of reduce_scatter: rank 0 "
                             "has recvcounts[%u] = %d, rank %u has %d",
                             i, (int)a[i], q, (int)b[i]);
    }
    return WEFT_OK;
}

/* What a sleeping wait re-checks (weft__region_sleep). */
typedef struct awaited {
    const _Atomic uint64_t *w;
    uint64_t want;
} awaited;

static bool reached(void *arg)
{
    const awaited *a = arg;
    return atomic_load_explicit(a->w, memory_order_acquire) >= a->want;
}

/* Waits until *w >= want, rank q being the one that stores it: polls,
 * then yields, checking q's liveness, the communicator's timeout and (with
 * faults) the peers' faults. Out of line: a caller tests *w first, and
 * inlined, this loop's registers cost weft__tiny_read and weft__tiny_begin
 * 20 instructions a call of saves and restores on the path that does not
 * wait (callgrind). */
static __attribute__((noinline)) weft_err wait_word(weft_comm *c, const _Atomic uint64_t *w,
                                                    uint64_t want, uint32_t q, bool faults,
                                                    weft_diag *d)
{
    if (atomic_load_explicit(w, memory_order_acquire) >= want)
        return WEFT_OK;
    unsigned spins = weft__region_oversubscribed(c) ? 0 : TINY_SPIN_POLLS;
    for (unsigned i = 0; i < spins; i++) {
        weft__poll_pause();
        if (atomic_load_explicit(w, memory_order_acquire) >= want)
            return WEFT_OK;
    }
    bool over = spins == 0;
    int64_t start = weft__now_ns(), next_check = start + TINY_CHECK_NS, now = start;
    for (unsigned polls = 1;; polls++) {
        bool sleeping = over && now - start >= TINY_YIELD_NS;
        if (sleeping) {
            awaited a = {w, want};
            weft__region_sleep(c, q, reached, &a, TINY_NAP_NS);
        } else {
            sched_yield();
        }
        if (atomic_load_explicit(w, memory_order_acquire) >= want)
            return WEFT_OK;
        if (!sleeping && polls % 16)
            continue;
        weft_err e;
        if (faults && (e = check_faults(c, d)))
            return e;
        now = weft__now_ns();
        if (!over && now - start >= TINY_NAP_AFTER_NS) {
            struct timespec nap = {0, TINY_NAP_NS};
            nanosleep(&nap, NULL);
        }
        if (now >= next_check) {
            next_check = now + TINY_CHECK_NS;
            weft__cause why;
            if (weft__region_peer_gone(c, q, &why)) {
                /* A peer that published and then closed or exited. */
                if (atomic_load_explicit(w, memory_order_acquire) >= want)
                    return WEFT_OK;
                return weft__comm_fail_cause(c, weft__cause_diag(d, "shm", &why, c->rank), &why, d);
            }
        }
        if (now - start >= c->timeout_ns)
            return weft__comm_stalled(c, q, d);
    }
}

/* The verdict on ring call seq, which some rank found to disagree: waits
 * for every rank's slot of it, compares them all as call_agree.c does (the
 * same message on every rank), publishes the fault and fails the
 * communicator. Out of line, as wait_word. */
static __attribute__((noinline, cold)) weft_err verdict(weft_comm *c, uint64_t seq, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    weft__region_rec *recs = weft__region_recs(c);
    for (uint32_t q = 0; q < n; q++) {
        tiny_head *h = head_of(c, q, seq);
        weft_err e = wait_word(c, &h->seq, seq, q, false, d);
        if (e)
            return e;
        memset(&recs[q], 0, sizeof recs[q]);
        recs[q].seq = seq;
        recs[q].kind = h->kind;
        recs[q].count = h->count;
    }
    weft__call_from_rec(c, &recs[me]);
    weft_err e = weft__call_check_recs(c, recs, d);
    /* Arguments alike: recvcounts that differ, where every slot carries
     * them (weft__tiny_counts). */
    bool counts = true;
    for (uint32_t q = 0; !e && q < n; q++)
        counts = counts && head_of(c, q, seq)->aux == WEFT__TINY_AUX_COUNTS;
    if (!e && counts) {
        const unsigned char **src = weft__tiny_ptrs(c);
        for (uint32_t q = 0; q < n; q++)
            src[q] = (const unsigned char *)head_of(c, q, seq) + sizeof(tiny_head);
        e = counts_differ(n, src, d);
    }
    if (!e)
        e = weft_diag_set(d, WEFT_EINVAL, "comm: ring call %llu disagreed, then agreed",
                          (unsigned long long)seq);
    atomic_store_explicit(fault_of(c, me), seq, memory_order_release);
    weft__region_ring(c);
    return weft__comm_fail(c, e, d);
}

/* A peer's fault, if any: the verdict on the call it names, once this
 * rank published its slot of that call (a rank behind it goes on until it
 * has: the verdict compares every rank's slot). */
static __attribute__((noinline)) weft_err faults_found(weft_comm *c, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    uint64_t published = c->tiny->published;
    for (uint32_t q = 0; q < n; q++) {
        if (q == me)
            continue;
        uint64_t f = atomic_load_explicit(fault_of(c, q), memory_order_acquire);
        if (f && f <= published)
            return verdict(c, f, d);
    }
    return WEFT_OK;
}

/* As faults_found, which runs only where some rank published a fault:
 * every rank's fault word or-ed, one load per rank and one branch (this
 * rank's own is set only as it fails the communicator, after which no
 * ring call gets here). 27 instructions a call at 2 ranks as a loop that
 * skipped this rank and tested each word, 12 so (callgrind). */
static inline weft_err check_faults(weft_comm *c, weft_diag *d)
{
    unsigned char *const *rings = c->tiny->rings;
    uint32_t n = c->size;
    uint64_t any = 0;
    for (uint32_t q = 0; q < n; q++)
        any |= atomic_load_explicit((_Atomic uint64_t *)(void *)(rings[q] + TINY_FAULT_OFF),
                                    memory_order_acquire);
    return any ? faults_found(c, d) : WEFT_OK;
}

/* Slot s held call s - WEFT__TINY_SLOTS: waits until every peer consumed
 * it, and notes how far they all are (st->room). Out of line, as
 * wait_word: once every WEFT__TINY_SLOTS calls or fewer. */
static __attribute__((noinline)) weft_err make_room(weft_comm *c, uint64_t s, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    uint64_t least = UINT64_MAX;
    for (uint32_t q = 0; q < n; q++) {
        if (q == me)
            continue;
        _Atomic uint64_t *w = consumed_of(c, q);
        weft_err e;
        if (s > WEFT__TINY_SLOTS && (e = wait_word(c, w, s - WEFT__TINY_SLOTS, q, true, d)))
            return e;
        uint64_t got = atomic_load_explicit(w, memory_order_acquire);
        least = got < least ? got : least;
    }
    c->tiny->room = least + WEFT__TINY_SLOTS;
    return WEFT_OK;
}

weft_err weft__tiny_begin(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype, uint32_t op,
                          uint32_t root, weft__tiny *t, weft_diag *d)
{
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    /* Before the fault check, so that no argument is kept across it (a
     * verdict there records the call it judges itself). */
    weft__call_begin(c, coll, count, dtype, op, root);
    weft_err e = check_faults(c, d);
    if (e)
        return e;
    weft__region_tiny_state *st = c->tiny;
    uint64_t s = ++st->seq;
    if (s > st->room && (e = make_room(c, s, d)))
        return e;
    t->c = c;
    t->seq = s;
    t->off = slot_off(s);
    t->data = st->rings[c->rank] + t->off + sizeof(tiny_head);
    t->aux = 0;
    return WEFT_OK;
}

static weft_err compare_published(weft__tiny *t, weft_diag *d);

/* Writes this rank's slot head of call t (all but its sequence word,
 * which the caller stores last, to publish it) and returns it. */
static inline tiny_head *fill_head(weft__tiny *t)
{
    weft_comm *c = t->c;
    tiny_head *h = slot_of(t, c->rank);
    h->kind = c->call_kind;
    h->count = c->call.count;
    h->aux = t->aux;
    c->tiny->published = t->seq;
    return h;
}

weft_err weft__tiny_publish(weft__tiny *t, bool reads_all, weft_diag *d)
{
    weft_comm *c = t->c;
    tiny_head *h = fill_head(t);
    if (reads_all) {
        atomic_store_explicit(&h->seq, t->seq, memory_order_release);
        weft__region_ring(c);
        return WEFT_OK;
    }
    /* Published with a full barrier (an exchange), then every peer's slot
     * that holds the call already is compared: of two ranks that publish
     * call s, the one that publishes later sees the other's slot (both
     * sides' operations are sequentially consistent), so any two that
     * disagree are found by one of them in this call. A slot that holds an
     * earlier call is that peer's to compare; none holds a later one (no
     * peer rewrites its slot of s before this rank consumed s). */
    atomic_exchange_explicit(&h->seq, t->seq, memory_order_seq_cst);
    /* No doorbell here: a rank that reads not every slot ends the call
     * right after (a broadcast's root, a reduce's non-roots), and
     * weft__tiny_end rings once for both, or reads only the root's (a
     * broadcast's non-roots), whose slot no peer waits for. */
    return compare_published(t, d);
}

/* After this rank published call t with a full barrier: compares every
 * peer's slot that holds the call already (see weft__tiny_publish). */
static weft_err compare_published(weft__tiny *t, weft_diag *d)
{
    weft_comm *c = t->c;
    uint32_t n = c->size, me = c->rank;
    for (uint32_t q = 0; q < n; q++) {
        const tiny_head *p = slot_of(t, q);
        if (q != me && atomic_load_explicit(&p->seq, memory_order_seq_cst) == t->seq &&
            (p->kind != c->call_kind || p->count != c->call.count))
            return verdict(c, t->seq, d);
    }
    return WEFT_OK;
}

weft_err weft__tiny_publish_for(weft__tiny *t, uint32_t q, weft_diag *d)
{
    weft_comm *c = t->c;
    tiny_head *h = fill_head(t);
    /* No doorbell: as weft__tiny_publish's. */
    atomic_exchange_explicit(&h->seq, t->seq, memory_order_seq_cst);
    /* q's slot when it holds the call: a difference is found, and a root
     * that agrees names itself (a reduce's root reads every slot; a
     * broadcast's compares every published one). Else every published
     * slot, as weft__tiny_publish's (q's alone missed a reduce to a rank
     * that broadcast from a third rank: coll_tiny.h). */
    const tiny_head *p = slot_of(t, q);
    if (atomic_load_explicit(&p->seq, memory_order_seq_cst) != t->seq)
        return compare_published(t, d);
    if (p->kind != c->call_kind || p->count != c->call.count)
        return verdict(c, t->seq, d);
    return WEFT_OK;
}

/* weft__tiny_read where rank q's slot is not published yet or differs:
 * waits, then compares. */
static __attribute__((noinline)) weft_err
read_slow(weft__tiny *t, uint32_t q, const unsigned char **data, uint64_t *aux, weft_diag *d)
{
    weft_comm *c = t->c;
    tiny_head *h = slot_of(t, q);
    weft_err e;
    if (atomic_load_explicit(&h->seq, memory_order_acquire) < t->seq &&
        (e = wait_word(c, &h->seq, t->seq, q, true, d)))
        return e;
    if (h->kind != c->call_kind || h->count != c->call.count)
        return verdict(c, t->seq, d);
    *data = (const unsigned char *)h + sizeof(tiny_head);
    if (aux)
        *aux = h->aux;
    return WEFT_OK;
}

/* The slot published and alike, the common case, without a register saved
 * (everything else in read_slow: one path that could wait cost 19
 * instructions a read of saves and restores, callgrind). */
static inline weft_err read_one(weft__tiny *t, uint32_t q, const unsigned char **data,
                                uint64_t *aux, weft_diag *d)
{
    const weft_comm *c = t->c;
    const tiny_head *h = slot_of(t, q);
    if (atomic_load_explicit(&h->seq, memory_order_acquire) < t->seq || h->kind != c->call_kind ||
        h->count != c->call.count)
        return read_slow(t, q, data, aux, d);
    *data = (const unsigned char *)h + sizeof(tiny_head);
    if (aux)
        *aux = h->aux;
    return WEFT_OK;
}

weft_err weft__tiny_read(weft__tiny *t, uint32_t q, const unsigned char **data, uint64_t *aux,
                         weft_diag *d)
{
    return read_one(t, q, data, aux, d);
}

void weft__tiny_end(weft__tiny *t, weft_err e)
{
    weft_comm *c = t->c;
    if (e && c->failed)
        return;
    atomic_store_explicit(consumed_of(c, c->rank), t->seq, memory_order_release);
    weft__region_ring(c);
    c->tiny->calls++;
}

weft_err weft__tiny_counts(weft__tiny *t, const unsigned char *const *src, weft_diag *d)
{
    weft_comm *c = t->c;
    weft_err e = counts_differ(c->size, src, d);
    if (!e)
        return WEFT_OK;
    /* Where every rank has a block by its own recvcounts, every rank read
     * every slot and found this: the call fails, the communicator stays
     * usable. Else the fault, for the ranks that returned from the call
     * without reading (verdict: the same message). */
    bool all_read = true;
    for (uint32_t q = 0; q < c->size; q++)
        all_read = all_read && ((const int32_t *)(const void *)src[q])[q] != 0;
    if (all_read)
        return e;
    atomic_store_explicit(fault_of(c, c->rank), t->seq, memory_order_release);
    weft__region_ring(c);
    return weft__comm_fail(c, e, d);
}

weft_err weft__tiny_read_all(weft__tiny *t, const unsigned char **src, weft_diag *d)
{
    uint32_t n = t->c->size;
    for (uint32_t q = 0; q < n; q++) {
        weft_err e = read_one(t, q, &src[q], NULL, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

void weft__tiny_fold(weft__reduce_fn fn, void *dst, const unsigned char *const *src, uint32_t n,
                     size_t offset, size_t count, size_t es)
{
    memcpy(dst, src[0] + offset, count * es);
    for (uint32_t q = 1; q < n; q++)
        fn(dst, src[q] + offset, count);
}

weft_err weft__tiny_reduction(weft_comm *c, const weft__tiny_red *r, weft_diag *d)
{
    weft_coll coll = r->coll;
    if (!r->fn)
        return weft_diag_set(d, WEFT_EINVAL, "%s: no reduction %s of %s", weft_coll_name(coll),
                             weft_redop_name(r->op), weft_dtype_name(r->dtype));
    weft__tiny t;
    weft_err e = weft__tiny_begin(c, coll, r->count, r->dtype, (uint32_t)r->op, r->root, &t, d);
    if (e)
        return e;
    /* A reduce-scatter's input is n blocks; this rank folds block `offset`
     * of every slot (a reduce or allreduce: the whole of each). */
    size_t block = r->count * r->es, in_bytes = block, offset = 0;
    bool scatter = coll == WEFT_COLL_REDUCESCATTER;
    if (scatter) {
        in_bytes = block * c->size;
        offset = block * c->rank;
    }
    bool want = coll != WEFT_COLL_REDUCE || c->rank == r->root;
    /* The part of the input only this rank folds stays out of its slot
     * (no peer reads it) and is folded from in, in its place in rank
     * order (the same result): a reduce's root publishes no data, a
     * reduce-scatter all but its own block (at 2 ranks half the bytes a
     * peer pulls from this rank's core: docs/interop.md). Not in place,
     * where the fold's output may overlap the input it still reads. */
    const unsigned char *in = r->in;
    bool skip = want && r->in != r->out && coll != WEFT_COLL_ALLREDUCE;
    if (skip && scatter) {
        memcpy(t.data, in, offset);
        memcpy(t.data + offset + block, in + offset + block, in_bytes - offset - block);
    } else if (!skip)
        memcpy(t.data, in, in_bytes);
    /* A reduce's non-root compares the root's slot, if published (see the top). */
    e = !want ? weft__tiny_publish_for(&t, r->root, d) : weft__tiny_publish(&t, true, d);
    if (!e && want) {
        const unsigned char **src = weft__tiny_ptrs(c);
        e = weft__tiny_read_all(&t, src, d);
        if (!e && skip)
            src[c->rank] = in;
        if (!e)
            weft__tiny_fold(r->fn, r->out, src, c->size, offset, r->count, r->es);
    }
    weft__tiny_end(&t, e);
    return e;
}
