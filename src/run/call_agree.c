/* Agreement on a collective call's arguments (see call_agree.h). */
#include "run/call_agree.h"

#include <string.h>

#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/p2p.h"
#include "run/transport/shm/region.h"

/* A record holds the call in two words: count, and kind = collective (bits
 * 0-3), dtype (4-7), reduction (8-15) and root (16-31), so that the check
 * between weft__region_post and the eager combine reads two fields per
 * rank. Reading root, dtype and op as fields of their own there measured
 * 0.49 against 0.39 us per 8-byte eager call (2 ranks, bench_run_small,
 * alternated runs in one session; the development VM's timings also move
 * by that much from one run to the next, so take it as a hint). */
_Static_assert(WEFT__COLL_COUNT <= 16 && WEFT__DTYPE_COUNT <= 16 && WEFT_MAX_RANKS <= 65536,
               "a call fits the record's kind word");

static weft__call from_rec(const weft__region_rec *r)
{
    return (weft__call){.coll = r->kind & 0xfu,
                        .dtype = r->kind >> 4 & 0xfu,
                        .op = r->kind >> 8 & 0xffu,
                        .root = r->kind >> 16,
                        .count = r->count};
}

/* The fields in the order they are compared. */
enum { F_SAME = -1, F_COLL, F_DTYPE, F_OP, F_ROOT, F_COUNT };

/* The first field in which a and b differ (F_SAME if none), and in *sign
 * whether a orders before (-1) or after (1) b. */
static int differ(const weft__call *a, const weft__call *b, int *sign)
{
    uint64_t va[] = {a->coll, a->dtype, a->op, a->root, a->count};
    uint64_t vb[] = {b->coll, b->dtype, b->op, b->root, b->count};
    for (int f = 0; f < 5; f++) {
        if (va[f] != vb[f]) {
            *sign = va[f] < vb[f] ? -1 : 1;
            return f;
        }
    }
    *sign = 0;
    return F_SAME;
}

/* The least and the greatest arguments seen, each with the lowest rank
 * holding them. */
typedef struct span {
    weft__call lo, hi;
    uint32_t lo_rank, hi_rank;
} span;

static void span_add(span *s, const weft__call *k, uint32_t rank_lo, const weft__call *kh,
                     uint32_t rank_hi)
{
    int sign;
    differ(k, &s->lo, &sign);
    if (sign < 0 || (sign == 0 && rank_lo < s->lo_rank)) {
        s->lo = *k;
        s->lo_rank = rank_lo;
    }
    differ(kh, &s->hi, &sign);
    if (sign > 0 || (sign == 0 && rank_hi < s->hi_rank)) {
        s->hi = *kh;
        s->hi_rank = rank_hi;
    }
}

static const char *op_name(uint32_t op)
{
    return op == WEFT__CALL_NO_OP ? "none" : weft_redop_name((weft_redop)op);
}

/* WEFT_EINVAL naming the two ranks of s (lower rank first) and the first
 * field in which they differ; WEFT_OK when s holds one call. */
static weft_err verdict(weft_comm *c, const span *s, weft_diag *d)
{
    int sign;
    int f = differ(&s->lo, &s->hi, &sign);
    if (f == F_SAME) {
        c->call_agreed = true;
        return WEFT_OK;
    }
    bool lo_first = s->lo_rank < s->hi_rank;
    uint32_t ra = lo_first ? s->lo_rank : s->hi_rank, rb = lo_first ? s->hi_rank : s->lo_rank;
    const weft__call *a = lo_first ? &s->lo : &s->hi, *b = lo_first ? &s->hi : &s->lo;
    const char *coll = weft_coll_name((weft_coll)a->coll);
    switch (f) {
    case F_COLL:
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the collective: rank %u called %s, rank %u "
                             "%s",
                             ra, coll, rb, weft_coll_name((weft_coll)b->coll));
    case F_DTYPE:
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the dtype of %s: rank %u has %s, rank %u "
                             "has %s",
                             coll, ra, weft_dtype_name((weft_dtype)a->dtype), rb,
                             weft_dtype_name((weft_dtype)b->dtype));
    case F_OP:
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the reduction of %s: rank %u has %s, rank "
                             "%u has %s",
                             coll, ra, op_name(a->op), rb, op_name(b->op));
    case F_ROOT:
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the root of %s: rank %u has %u, rank %u has "
                             "%u",
                             coll, ra, a->root, rb, b->root);
    default:
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: ranks disagree on the count of %s: rank %u has %llu, rank %u "
                             "has %llu",
                             coll, ra, (unsigned long long)a->count, rb,
                             (unsigned long long)b->count);
    }
}

void weft__call_to_rec(const weft_comm *c, weft__region_rec *rec)
{
    rec->kind = c->call_kind;
    rec->count = c->call.count;
}

void weft__call_from_rec(weft_comm *c, const weft__region_rec *rec)
{
    c->call = from_rec(rec);
    c->call_kind = rec->kind;
    c->call_agreed = false;
}

weft_err weft__call_check_recs(weft_comm *c, const weft__region_rec *recs, weft_diag *d)
{
    weft_err e;
    /* The common case first: every record equals this rank's call, two
     * words each (see weft__call_to_rec). */
    uint32_t kind = c->call_kind;
    uint64_t count = c->call.count;
    bool same = true;
    for (uint32_t q = 0; q < c->size; q++)
        same &= recs[q].kind == kind && recs[q].count == count;
    if (same) {
        c->call_agreed = true;
        return WEFT_OK;
    }
    span s = {.lo = c->call, .hi = c->call, .lo_rank = c->rank, .hi_rank = c->rank};
    bool sent = false;
    for (uint32_t q = 0; q < c->size; q++) {
        weft__call k = from_rec(&recs[q]);
        span_add(&s, &k, q, &k, q);
        sent = sent || (recs[q].flags & WEFT__REC_SENT);
    }
    if ((e = verdict(c, &s, d)) && sent)
        weft__comm_fail(c, e, d);
    return e;
}

/* ---- Over the transports ------------------------------------------------- */

#define CALL_BYTES 24u
#define SPAN_BYTES (2u * (CALL_BYTES + 4u))

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_call(unsigned char *p, const weft__call *k, uint32_t rank)
{
    put32(p, k->coll);
    put32(p + 4, k->dtype);
    put32(p + 8, k->op);
    put32(p + 12, k->root);
    put32(p + 16, (uint32_t)k->count);
    put32(p + 20, (uint32_t)(k->count >> 32));
    put32(p + 24, rank);
}

static void get_call(const unsigned char *p, weft__call *k, uint32_t *rank)
{
    k->coll = get32(p);
    k->dtype = get32(p + 4);
    k->op = get32(p + 8);
    k->root = get32(p + 12);
    k->count = (uint64_t)get32(p + 16) | (uint64_t)get32(p + 20) << 32;
    *rank = get32(p + 24);
}

/* Dissemination: after round k a rank's span covers ranks r - 2^(k+1) + 1
 * .. r, so after ceil(log2 size) rounds it covers every rank. A rank
 * number out of range (a corrupt message) is not passed on. */
static weft_err agree_xport(weft_comm *c, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    span s = {.lo = c->call, .hi = c->call, .lo_rank = me, .hi_rank = me};
    unsigned char out[SPAN_BYTES], in[SPAN_BYTES];
    for (uint32_t dist = 1; dist < n; dist *= 2) {
        put_call(out, &s.lo, s.lo_rank);
        put_call(out + SPAN_BYTES / 2, &s.hi, s.hi_rank);
        weft_err e = weft__comm_exchange(c, (me + dist) % n, out, sizeof out, (me + n - dist) % n,
                                         in, sizeof in, NULL, 1, d);
        if (e)
            return e;
        weft__call lo, hi;
        uint32_t rl, rh;
        get_call(in, &lo, &rl);
        get_call(in + SPAN_BYTES / 2, &hi, &rh);
        if (rl >= n || rh >= n) {
            weft_diag_set(d, WEFT_EPARSE, "comm: rank %u sent a malformed call agreement",
                          (me + n - dist) % n);
            return weft__comm_fail(c, WEFT_EPARSE, d);
        }
        span_add(&s, &lo, rl, &hi, rh);
    }
    return verdict(c, &s, d);
}

/* ---- Every rank to every rank (up to WEFT__CALL_ALL_MAX ranks) ------------ */

#define MSG_SENT 1u

static void put_msg(unsigned char *p, const weft__call *k, uint32_t rank, uint32_t flags)
{
    put_call(p, k, rank);
    put32(p + 28, flags);
}

/* Posts this rank's arguments to every peer and the receives of theirs. */
static weft_err all_start(weft_comm *c, weft__call_early_state *s, uint32_t flags, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    put_msg(s->out, &c->call, me, flags);
    for (uint32_t k = 1; k < n; k++) {
        weft__xreq *tx = &s->req[k - 1], *rx = &s->req[n - 1 + k - 1];
        *tx = (weft__xreq){
            .peer = (me + k) % n, .is_send = true, .buf = s->out, .len = WEFT__CALL_MSG_BYTES};
        *rx = (weft__xreq){
            .peer = (me + n - k) % n, .buf = s->in[k - 1], .len = WEFT__CALL_MSG_BYTES};
        weft_err e = weft__comm_post(c, tx, d);
        if (!e)
            e = weft__comm_post(c, rx, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

/* Waits for every peer's arguments (and this rank's sends of its own) and
 * compares them all, as weft__call_check_recs does with records. */
static weft_err all_finish(weft_comm *c, weft__call_early_state *s, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    weft__xreq *w[2 * (WEFT__CALL_ALL_MAX - 1)];
    for (uint32_t i = 0; i < 2 * (n - 1); i++)
        w[i] = &s->req[i];
    weft_err e = weft__comm_wait(c, w, 2 * (n - 1), d);
    if (e)
        return e;
    span sp = {.lo = c->call, .hi = c->call, .lo_rank = me, .hi_rank = me};
    bool sent = false;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t from = (me + n - k) % n, rank;
        weft__call got;
        get_call(s->in[k - 1], &got, &rank);
        if (rank != from) {
            weft_diag_set(d, WEFT_EPARSE, "comm: rank %u sent a malformed call agreement", from);
            return weft__comm_fail(c, WEFT_EPARSE, d);
        }
        span_add(&sp, &got, from, &got, from);
        sent = sent || (get32(s->in[k - 1] + 28) & MSG_SENT);
    }
    if (get32(s->out + 28) & MSG_SENT)
        sent = true;
    if ((e = verdict(c, &sp, d)) && sent)
        weft__comm_fail(c, e, d);
    return e;
}

bool weft__call_early(weft_comm *c, weft__call_early_state *s, weft_err *e, weft_diag *d)
{
    *e = WEFT_OK;
    if (c->call_agreed || c->size < 2)
        return false;
    s->records = weft__region_records(c);
    if (s->records) {
        weft__region_rec me;
        memset(&me, 0, sizeof me);
        me.seq = s->seq = weft__region_next_seq(c);
        me.flags = WEFT__REC_SENT;
        weft__call_to_rec(c, &me);
        weft__region_publish(c, &me);
        return true;
    }
    if (c->size > WEFT__CALL_ALL_MAX)
        return false;
    *e = all_start(c, s, MSG_SENT, d);
    return true;
}

weft_err weft__call_late(weft_comm *c, weft__call_early_state *s, weft_diag *d)
{
    if (!s->records)
        return all_finish(c, s, d);
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_gather(c, s->seq, recs, d);
    if (e)
        return e;
    return weft__call_check_recs(c, recs, d);
}

weft_err weft__call_agree(weft_comm *c, weft_diag *d)
{
    if (c->call_agreed || c->size < 2)
        return WEFT_OK;
    if (!weft__region_records(c)) {
        if (c->size > WEFT__CALL_ALL_MAX)
            return agree_xport(c, d);
        weft__call_early_state s;
        weft_err e = all_start(c, &s, 0, d);
        return e ? e : all_finish(c, &s, d);
    }
    return weft__call_post_seq(c, weft__region_next_seq(c), d);
}

weft_err weft__call_post_seq(weft_comm *c, uint64_t seq, weft_diag *d)
{
    weft__region_rec me;
    memset(&me, 0, sizeof me);
    me.seq = seq;
    weft__call_to_rec(c, &me);
    weft__region_rec *recs = weft__region_recs(c);
    weft_err e = weft__region_post(c, &me, recs, d);
    if (e)
        return e;
    return weft__call_check_recs(c, recs, d);
}
