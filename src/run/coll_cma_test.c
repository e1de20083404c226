/* The paths of ordinary buffers at 8 and 16 forked ranks on shared memory
 * (oversubscribed on a 2-CPU host): the small-message paths through the
 * eager areas (coll_small.c) and the single-copy collectives
 * (coll_cma.c).
 *
 * Every collective at both edges: the largest count of the small path and
 * one more (counted by weft__region_small_calls), one element below where
 * single-copy starts (weft__cma_min_bytes, past the small paths: the
 * ordinary schedule), at it and a prime count well above it, several
 * tiles (single-copy, counted by weft__region_cma_calls),
 * in place and out of place, every dtype and reduction for the reducing
 * ones, results compared byte for byte with a reference reduced locally in
 * rank order, with guard bytes after every buffer that must stay
 * untouched. A rank that cannot use the path (weft__cma_disable) sends
 * every rank to the ordinary schedule with the same results; ranks whose
 * counts straddle the threshold get WEFT_EINVAL, all alike, and the
 * communicator stays usable. A rank out of memory for the tiles fails
 * every rank, named; a rank killed between single-copy calls, or in the
 * middle of one, makes every other rank return WEFT_EPEER naming it and
 * its pid. The thresholds
 * themselves are checked. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/testing.h"
#include "run/coll.h"
#include "run/coll_cma.h"
#include "run/coll_eager.h"
#include "run/coll_small.h"
#include "run/testing_ranks.h"
#include "run/transport/shm/region.h"
#include "weft/comm.h"

#define GUARD 64
#define ROOT_SEED 5u

static size_t g_shift;

static double val(weft_redop op, uint32_t r, size_t i)
{
    return weft__test_small(op, r, i + g_shift);
}

typedef struct job {
    bool disable_rank1; /* rank 1 cannot use the path */
    bool full;          /* every dtype and op (else float sum and int32 max) */
} job;

static int g_fail_rank;

static void expect(bool ok, weft_comm *c, const char *what, weft_dtype t, weft_redop op,
                   size_t count, bool in_place)
{
    if (!ok && g_fail_rank < 5) {
        g_fail_rank++;
        fprintf(stderr, "rank %u of %u: %s %s %s count %zu %s: wrong\n", weft_comm_rank(c),
                weft_comm_size(c), what, weft_dtype_name(t), weft_redop_name(op), count,
                in_place ? "in place" : "out of place");
    }
    CHECK(ok);
}

static bool guard_ok(const unsigned char *p, unsigned char v)
{
    for (size_t i = 0; i < GUARD; i++)
        if (p[i] != v)
            return false;
    return true;
}

/* Whether a call of bytes (as weft__cma_min_bytes counts them) may run
 * single-copy on c: at the threshold, and for allreduce beyond the
 * small-message paths that come first. */
static bool cma_size(weft_comm *c, weft_coll coll, size_t bytes)
{
    uint32_t n = weft_comm_size(c);
    if (bytes < weft__cma_min_bytes(coll, n))
        return false;
    if (weft__eager_fits(c, coll, bytes))
        return false;
    return coll != WEFT_COLL_ALLREDUCE ||
           (!weft__small_allreduce_fits(c, bytes) && !weft__allreduce_direct_fits(n, bytes));
}

/* Whether the call must run single-copy on this communicator. */
static bool want_cma(weft_comm *c, const job *j, weft_coll coll, size_t bytes)
{
    return !j->disable_rank1 && cma_size(c, coll, bytes);
}

/* Whether a call of count elements of es bytes runs through the eager
 * areas (allreduce: count elements; the others as weft__small_fits). */
static bool want_small(weft_comm *c, weft_coll coll, size_t count, size_t es)
{
    if (coll == WEFT_COLL_ALLREDUCE)
        return weft__small_allreduce_fits(c, count * es);
    return weft__small_fits(c, coll, count, es);
}

static void check_path(weft_comm *c, uint64_t before, uint64_t small0, bool small, bool cma)
{
    CHECK_INT(weft__region_small_calls(c) - small0, small ? 1 : 0);
    CHECK_INT(weft__region_cma_calls(c) - before, cma && !small ? 1 : 0);
}

/* The largest count (es-byte elements) that runs through the eager areas,
 * 0 when none does. */
static size_t small_edge(weft_comm *c, weft_coll coll, size_t es)
{
    size_t k = 0;
    while (want_small(c, coll, k + 1, es))
        k++;
    return k;
}

static void reducing(weft_comm *c, const job *j, weft_coll coll, weft_dtype t, weft_redop op,
                     size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c), root = ROOT_SEED % n;
    size_t es = weft_dtype_size(t);
    /* allreduce, reduce: count elements; reduce-scatter: count per rank. */
    size_t in_count = coll == WEFT_COLL_REDUCESCATTER ? count * n : count;
    size_t in_bytes = in_count * es, out_bytes = count * es;
    unsigned char *s = malloc(in_bytes + GUARD), *r = malloc(out_bytes + GUARD);
    g_shift = 0;
    weft__test_fill(val, t, op, s, me, in_count);
    memset(s + in_bytes, 0x5a, GUARD);
    memset(r, 0xa5, out_bytes + GUARD);
    unsigned char *out = r;
    if (in_place)
        out = coll == WEFT_COLL_REDUCESCATTER ? s + (size_t)me * out_bytes : s;
    uint64_t before = weft__region_cma_calls(c), small0 = weft__region_small_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e;
    const char *what;
    if (coll == WEFT_COLL_ALLREDUCE) {
        what = "allreduce";
        e = weft_allreduce(c, s, out, count, t, op, &d);
    } else if (coll == WEFT_COLL_REDUCE) {
        what = "reduce";
        e = weft_reduce(c, s, me == root ? out : NULL, count, t, op, root, &d);
    } else {
        what = "reduce-scatter";
        e = weft_reduce_scatter(c, s, out, count, t, op, &d);
    }
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: %s: %s\n", me, what, d.msg);
    check_path(c, before, small0, want_small(c, coll, count, es), want_cma(c, j, coll, in_bytes));
    if (coll == WEFT_COLL_REDUCESCATTER)
        g_shift = (size_t)me * count;
    bool has = coll != WEFT_COLL_REDUCE || me == root;
    if (has)
        expect(weft__test_reduce_wrong(val, t, op, out, n, count) == 0, c, what, t, op, count,
               in_place);
    g_shift = 0;
    CHECK(guard_ok(s + in_bytes, 0x5a));
    CHECK(guard_ok(r + out_bytes, 0xa5));
    if (!in_place) {
        unsigned char *orig = malloc(in_bytes);
        weft__test_fill(val, t, op, orig, me, in_count);
        CHECK(memcmp(orig, s, in_bytes) == 0);
        free(orig);
        if (!has)
            CHECK(r[0] == 0xa5);
    }
    free(s);
    free(r);
}

/* Byte b of rank q's input block k (all-to-all; allgather uses k = 0). */
static unsigned char pat(uint32_t q, size_t k, size_t b)
{
    return (unsigned char)(q * 31u + k * 7u + b * 13u + (b >> 8) + 1u);
}

/* Allgather, broadcast or all-to-all of count bytes per block. */
static void moving(weft_comm *c, const job *j, weft_coll coll, size_t count, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c), root = ROOT_SEED % n;
    size_t block = count;
    size_t in_bytes = coll == WEFT_COLL_ALLTOALL ? block * n : block;
    size_t out_bytes = coll == WEFT_COLL_BROADCAST ? block : block * n;
    size_t perf_bytes = coll == WEFT_COLL_BROADCAST ? block : block * n;
    unsigned char *s = malloc(in_bytes + GUARD), *r = malloc(out_bytes + GUARD);
    memset(r, 0xa5, out_bytes + GUARD);
    memset(s + in_bytes, 0x5a, GUARD);
    for (size_t k = 0; k < in_bytes / block; k++)
        for (size_t b = 0; b < block; b++)
            s[k * block + b] = pat(me, k, b);
    const void *send = s;
    if (in_place && coll == WEFT_COLL_ALLGATHER) {
        memcpy(r + (size_t)me * block, s, block);
        send = r + (size_t)me * block;
    } else if (in_place && coll == WEFT_COLL_ALLTOALL) {
        memcpy(r, s, in_bytes);
        send = r;
    } else if (in_place && coll == WEFT_COLL_BROADCAST && me == root) {
        memcpy(r, s, block);
        send = r;
    }
    uint64_t before = weft__region_cma_calls(c), small0 = weft__region_small_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e;
    const char *what;
    if (coll == WEFT_COLL_ALLGATHER) {
        what = "allgather";
        e = weft_allgather(c, send, r, count, WEFT_UINT8, &d);
    } else if (coll == WEFT_COLL_ALLTOALL) {
        what = "alltoall";
        e = weft_alltoall(c, send, r, count, WEFT_UINT8, &d);
    } else {
        what = "broadcast";
        e = weft_broadcast(c, send, r, count, WEFT_UINT8, root, &d);
    }
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: %s: %s\n", me, what, d.msg);
    check_path(c, before, small0, want_small(c, coll, count, 1), want_cma(c, j, coll, perf_bytes));
    bool ok = true;
    for (size_t q = 0; q < out_bytes / block && ok; q++)
        for (size_t b = 0; b < block && ok; b++) {
            unsigned char want = coll == WEFT_COLL_ALLGATHER  ? pat((uint32_t)q, 0, b)
                                 : coll == WEFT_COLL_ALLTOALL ? pat((uint32_t)q, me, b)
                                                              : pat(root, 0, b);
            ok = r[q * block + b] == want;
        }
    expect(ok, c, what, WEFT_UINT8, WEFT_SUM, count, in_place);
    CHECK(guard_ok(r + out_bytes, 0xa5));
    CHECK(guard_ok(s + in_bytes, 0x5a));
    free(s);
    free(r);
}

/* Counts (of es-byte elements) around where coll starts to run
 * single-copy on c, where `per` is how many units of count the threshold's
 * bytes hold per element (n for allgather, reduce-scatter and all-to-all,
 * whose bytes are n blocks). */
static void edges(weft_comm *c, weft_coll coll, size_t es, size_t per, size_t out[3])
{
    size_t unit = es * per;
    size_t at = weft__cma_min_bytes(coll, weft_comm_size(c)) / unit;
    if (weft__eager_fits(c, coll, (size_t)1 << 40)) {
        /* Pipelined through the eager areas at every size: never
         * single-copy. */
        out[0] = out[1] = out[2] = 0;
        return;
    }
    /* The least count that runs single-copy. */
    while (!cma_size(c, coll, at * unit) || want_small(c, coll, at, es))
        at++;
    out[0] = at - 1;
    out[1] = at;
    out[2] = at * 3 + 7919; /* several tiles, a prime remainder */
}

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    uint32_t n = weft_comm_size(c);
    if (j->disable_rank1 && weft_comm_rank(c) == 1)
        weft__cma_disable();
    static const weft_coll red_colls[] = {WEFT_COLL_ALLREDUCE, WEFT_COLL_REDUCE,
                                          WEFT_COLL_REDUCESCATTER};
    for (size_t k = 0; k < 3; k++) {
        weft_coll coll = red_colls[k];
        for (int t = 0; t < WEFT__DTYPE_COUNT; t++) {
            for (int op = 0; op < WEFT__REDOP_COUNT; op++) {
                bool core =
                    (t == WEFT_FLOAT && op == WEFT_SUM) || (t == WEFT_INT32 && op == WEFT_MAX);
                if (!j->full && !core)
                    continue;
                size_t es = weft_dtype_size((weft_dtype)t), cnt[3];
                edges(c, coll, es, coll == WEFT_COLL_REDUCESCATTER ? n : 1, cnt);
                for (int i = 0; i < 3; i++) {
                    /* The largest count only for the core types: it is the
                     * slow one oversubscribed and tests the tiles, which
                     * do not depend on the type. */
                    if ((i == 2 && !core) || !cnt[i])
                        continue;
                    reducing(c, j, coll, (weft_dtype)t, (weft_redop)op, cnt[i], false);
                    if (i != 0)
                        reducing(c, j, coll, (weft_dtype)t, (weft_redop)op, cnt[i], true);
                }
                size_t edge = small_edge(c, coll, es);
                for (size_t x = edge ? edge : 1; x <= edge + 1; x++) {
                    reducing(c, j, coll, (weft_dtype)t, (weft_redop)op, x, false);
                    reducing(c, j, coll, (weft_dtype)t, (weft_redop)op, x, true);
                }
                if (edge > 2)
                    reducing(c, j, coll, (weft_dtype)t, (weft_redop)op, 1, false);
            }
        }
    }
    static const weft_coll move_colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_BROADCAST,
                                           WEFT_COLL_ALLTOALL};
    for (size_t k = 0; k < 3; k++) {
        weft_coll coll = move_colls[k];
        size_t cnt[3];
        edges(c, coll, 1, coll == WEFT_COLL_BROADCAST ? 1 : n, cnt);
        size_t edge = small_edge(c, coll, 1);
        size_t more[3] = {1, edge, edge + 1};
        for (int i = 0; i < 6; i++) {
            size_t x = i < 3 ? cnt[i] : more[i - 3];
            if (!x)
                continue;
            moving(c, j, coll, x, false);
            moving(c, j, coll, x, true);
        }
    }
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* 2 ranks: broadcast and allgather run single-copy from their thresholds
 * (weft__cma_min_bytes), through the slots below; the others never
 * single-copy. Each one element of a block below the threshold (bytes as
 * weft__cma_min_bytes counts them: the broadcast's buffer, the
 * allgather's output of 2 blocks), at it, and at 1 MiB + 1 block, in
 * place and not, checked byte for byte and by path; with rank 1 unable
 * to, every call takes the slots. */
static int two_body(weft_comm *c, void *arg)
{
    const job *j = arg;
    if (j->disable_rank1 && weft_comm_rank(c) == 1)
        weft__cma_disable();
    static const struct {
        weft_coll coll;
        size_t lo; /* bytes */
    } w[] = {{WEFT_COLL_BROADCAST, 32 << 10}, {WEFT_COLL_ALLGATHER, 64 << 10}};
    for (size_t k = 0; k < 2; k++) {
        size_t per = w[k].coll == WEFT_COLL_BROADCAST ? 1 : 2;
        size_t counts[] = {w[k].lo / per - 1, w[k].lo / per, ((size_t)1 << 20) / per + 1};
        for (size_t i = 0; i < 3; i++) {
            uint64_t before = weft__region_cma_calls(c);
            moving(c, j, w[k].coll, counts[i], false);
            moving(c, j, w[k].coll, counts[i], true);
            bool in = i > 0 && !j->disable_rank1;
            CHECK_INT(weft__region_cma_calls(c) - before, in ? 2 : 0);
        }
    }
    uint64_t before = weft__region_cma_calls(c);
    moving(c, j, WEFT_COLL_ALLTOALL, 64 << 10, false);
    CHECK_INT(weft__region_cma_calls(c) - before, 0);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* A large reduction that runs single-copy on c: the allreduce where it
 * does (more ranks than CPUs), else the reduce-scatter (with a CPU per
 * rank every allreduce runs pipelined, coll_eager.c), both through the
 * same tiles (reduce_range). cma_count: the elements of the input (at
 * least `least`), *allreduce which call; cma_reduction runs it on v,
 * which holds count + count / n floats (the reduce-scatter's output
 * after its input). */
static size_t cma_count(weft_comm *c, size_t least, bool *allreduce)
{
    uint32_t n = weft_comm_size(c);
    size_t cnt[3];
    edges(c, WEFT_COLL_ALLREDUCE, 4, 1, cnt);
    *allreduce = cnt[1] != 0;
    size_t count = cnt[2];
    if (!*allreduce) {
        edges(c, WEFT_COLL_REDUCESCATTER, 4, n, cnt);
        count = cnt[2] * n;
    }
    if (count < least)
        count = (least + n - 1) / n * n;
    return count;
}

static weft_err cma_reduction(weft_comm *c, float *v, size_t count, bool allreduce, weft_diag *d)
{
    if (allreduce)
        return weft_allreduce(c, v, v, count, WEFT_FLOAT, WEFT_SUM, d);
    return weft_reduce_scatter(c, v, v + count, count / weft_comm_size(c), WEFT_FLOAT, WEFT_SUM, d);
}

/* Rank 0 asks for one element more than the others, which sits at the
 * threshold while theirs is below it: every rank gets the same error.
 * Below the threshold runs a path that agrees through the records before
 * it moves anything (the eager areas, one barrier or pipelined), so the
 * communicator stays usable; were it the direct allreduce, which sends
 * before it has everyone's arguments (call_agree.h), the disagreement
 * would fail the communicator, and the test says so. */
static int straddle_body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t cnt[3];
    edges(c, WEFT_COLL_ALLREDUCE, 4, 1, cnt);
    /* With a CPU per rank no allreduce runs single-copy (the pipelined
     * path takes every size): straddle the one-barrier path's edge. */
    bool cma = cnt[1] != 0;
    size_t min = cma ? cnt[1] : small_edge(c, WEFT_COLL_ALLREDUCE, 4) + 1;
    size_t count = me == 0 ? min : min - 1;
    float *b = calloc(min, sizeof *b);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, b, b, count, WEFT_FLOAT, WEFT_SUM, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    char want[160];
    snprintf(want, sizeof want,
             "comm: ranks disagree on the count of allreduce: rank 0 has %zu, rank 1 has %zu", min,
             min - 1);
    CHECK_STR(d.msg, want);
    size_t below = (min - 1) * sizeof *b;
    bool sent = !weft__small_allreduce_fits(c, below) &&
                !weft__eager_fits(c, WEFT_COLL_ALLREDUCE, below) &&
                weft__allreduce_direct_fits(n, below);
    CHECK(!sent);
    /* Still usable, on the single-copy path (or the pipelined one). */
    for (size_t i = 0; i < min; i++)
        b[i] = (float)(me + 1);
    uint64_t before = cma ? weft__region_cma_calls(c) : weft__region_pipe_calls(c);
    CHECK_ERR(weft_allreduce(c, b, b, min, WEFT_FLOAT, WEFT_SUM, NULL), WEFT_OK);
    CHECK_INT((cma ? weft__region_cma_calls(c) : weft__region_pipe_calls(c)) - before, 1);
    CHECK(b[0] == (float)(n * (n + 1) / 2) && b[min - 1] == b[0]);
    free(b);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* A rank that cannot allocate the tiles fails the communicator: the
 * others end with WEFT_EPEER naming it, not after the timeout. */
static int oom_body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c), n = weft_comm_size(c);
    bool all;
    size_t count = cma_count(c, 0, &all);
    float *v = calloc(count + count / n, sizeof *v);
    weft_diag d;
    weft_diag_clear(&d);
    if (me == 1)
        weft__alloc_fail_after(0);
    weft_err e = cma_reduction(c, v, count, all, &d);
    weft__alloc_fail_after(-1);
    if (me == 1) {
        CHECK_ERR(e, WEFT_ENOMEM);
        CHECK_STR(d.msg, "comm: rank 1: out of memory for the single-copy tiles");
    } else {
        CHECK_ERR(e, WEFT_EPEER);
        int pid = 0;
        char want[128];
        if (sscanf(d.msg, "shm: rank 1 (pid %d)", &pid) != 1)
            pid = -1;
        snprintf(want, sizeof want, "shm: rank 1 (pid %d) failed: out of memory", pid);
        if (strncmp(d.msg, want, strlen(want)) != 0)
            fprintf(stderr, "rank %u of %u: \"%s\"\n", me, n, d.msg);
        CHECK(strncmp(d.msg, want, strlen(want)) == 0);
    }
    CHECK(weft_comm_failed(c));
    free(v);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

enum { KILL_RANKS = 8, VICTIM = 2, KILL_CODE = 50, MSG_BYTES = 200 };

typedef struct kill_log {
    int pid[KILL_RANKS];
    char msg[KILL_RANKS][MSG_BYTES];
} kill_log;

/* Single-copy reductions (cma_reduction) until one fails; the victim kills itself at call
 * 10 (before it publishes, so the others wait for it in their first
 * barrier, or while they copy). Exit code KILL_CODE + the error. */
static int kill_body(weft_comm *c, void *arg)
{
    kill_log *log = arg;
    uint32_t me = weft_comm_rank(c);
    log->pid[me] = (int)getpid();
    bool all;
    size_t count = cma_count(c, 0, &all);
    float *v = calloc(count + count / weft_comm_size(c), sizeof *v);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    for (int it = 0; !e; it++) {
        if (it == 10 && me == VICTIM)
            kill(getpid(), SIGKILL);
        e = cma_reduction(c, v, count, all, &d);
    }
    memcpy(log->msg[me], d.msg, MSG_BYTES - 1);
    free(v);
    return KILL_CODE + (int)e;
}

static void run_kill(void)
{
    kill_log *log =
        mmap(NULL, sizeof *log, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (log == MAP_FAILED)
        return;
    memset(log, 0, sizeof *log);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 600000; /* only detection can end the calls */
    int codes[KILL_RANKS];
    CHECK_INT(weft__test_comm_ranks(KILL_RANKS, &cfg, kill_body, log, 200000, codes, NULL), 0);
    char died[80];
    snprintf(died, sizeof died, "shm: rank %d (pid %d) died", VICTIM, log->pid[VICTIM]);
    for (uint32_t r = 0; r < KILL_RANKS; r++) {
        CHECK_INT(codes[r], r == VICTIM ? 128 + SIGKILL : KILL_CODE + (int)WEFT_EPEER);
        if (r == VICTIM)
            continue;
        bool ok = strncmp(log->msg[r], died, strlen(died)) == 0;
        if (!ok)
            fprintf(stderr, "killed: rank %u: \"%s\"\n", r, log->msg[r]);
        CHECK(ok);
    }
    munmap(log, sizeof *log);
}

/* The victim killed by the parent while every rank loops on large
 * single-copy reductions (tens of ms each on 2 CPUs, so the kill lands in
 * the middle of one: survivors find its memory gone, ESRCH, or wait for
 * it): every survivor names it. */
typedef struct mid_job {
    int ready[2];
    kill_log *log;
} mid_job;

static int mid_body(weft_comm *c, void *arg)
{
    mid_job *j = arg;
    uint32_t me = weft_comm_rank(c);
    j->log->pid[me] = (int)getpid();
    bool all;
    size_t count = cma_count(c, (size_t)4 << 20, &all); /* 16 MiB of floats */
    float *v = calloc(count + count / weft_comm_size(c), sizeof *v);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    for (int it = 0; !e; it++) {
        uint64_t before = weft__region_cma_calls(c);
        e = cma_reduction(c, v, count, all, &d);
        if (it == 0 && !e) {
            CHECK_INT(weft__region_cma_calls(c) - before, 1);
            char one = 1;
            if (write(j->ready[1], &one, 1) != 1)
                return 98;
        }
    }
    memcpy(j->log->msg[me], d.msg, MSG_BYTES - 1);
    free(v);
    return KILL_CODE + (int)e;
}

static int mid_child(const weft_comm_config *cfg, void *arg)
{
    mid_job *j = arg;
    close(j->ready[0]);
    return weft__test_with_comm(cfg, mid_body, arg);
}

static void mid_strike(const pid_t *pids, uint32_t n, int port, void *arg)
{
    (void)port;
    mid_job *j = arg;
    close(j->ready[1]);
    char b;
    uint32_t got = 0;
    struct pollfd p = {.fd = j->ready[0], .events = POLLIN};
    while (got < n && poll(&p, 1, -1) > 0 && read(j->ready[0], &b, 1) == 1)
        got++;
    CHECK_INT(got, n);
    if (got == n)
        kill(pids[VICTIM], SIGKILL);
}

static void run_kill_mid(void)
{
    mid_job j;
    j.log = mmap(NULL, sizeof *j.log, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (j.log == MAP_FAILED || pipe(j.ready) < 0)
        return;
    memset(j.log, 0, sizeof *j.log);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 600000;
    int codes[KILL_RANKS];
    CHECK_INT(weft__test_ranks(KILL_RANKS, &cfg, mid_child, mid_strike, &j, 200000, codes, NULL),
              0);
    close(j.ready[0]);
    char died[80];
    snprintf(died, sizeof died, "shm: rank %d (pid %d) died", VICTIM, j.log->pid[VICTIM]);
    for (uint32_t r = 0; r < KILL_RANKS; r++) {
        CHECK_INT(codes[r], r == VICTIM ? 128 + SIGKILL : KILL_CODE + (int)WEFT_EPEER);
        if (r == VICTIM)
            continue;
        bool ok = strncmp(j.log->msg[r], died, strlen(died)) == 0;
        if (!ok)
            fprintf(stderr, "killed mid-call: rank %u: \"%s\"\n", r, j.log->msg[r]);
        CHECK(ok);
    }
    munmap(j.log, sizeof *j.log);
}

static void run(uint32_t n, weft__comm_body fn, job *j, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 60000;
    weft__test_comm_ranks_ok(n, &cfg, fn, j, 200000, what);
}

int main(void)
{
    if (!weft__cma_available()) {
        fprintf(stderr, "coll_cma_test: process_vm_readv is not allowed here\n");
        return WEFT_TEST_SKIP;
    }
    /* The thresholds (coll_cma.c; measured, docs/run.md). */
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 1), SIZE_MAX);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 2), SIZE_MAX);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_BROADCAST, 2), 32 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLGATHER, 2), 64 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLTOALL, 2), SIZE_MAX);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_REDUCE, 2), SIZE_MAX);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 3), 128 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 4), 128 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 5), 16 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 7), 16 << 10);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 8), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLREDUCE, 16), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_REDUCE, 16), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_REDUCESCATTER, 8), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLGATHER, 8), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_BROADCAST, 8), 1);
    CHECK_INT(weft__cma_min_bytes(WEFT_COLL_ALLTOALL, 8), 1);
    CHECK_INT(weft__cma_min_bytes((weft_coll)99, 8), SIZE_MAX);
    job full = {.full = true}, core = {0}, off = {.disable_rank1 = true};
    run(2, two_body, &core, "single-copy broadcast and allgather, 2 ranks");
    run(2, two_body, &off, "single-copy refused by rank 1, 2 ranks");
    run(8, body, &full, "single-copy, 8 ranks, every type");
    run(16, body, &core, "single-copy, 16 ranks");
    run(8, body, &off, "single-copy refused by rank 1, 8 ranks");
    run(8, straddle_body, NULL, "counts across the threshold, 8 ranks");
    run(8, oom_body, NULL, "no memory for the tiles, 8 ranks");
    run_kill();
    run_kill_mid();
    return weft_test_done();
}
