/* The pipelined eager paths (coll_eager.c) on 3, 5 and 8 forked ranks run
 * as on a host with a CPU per rank (config cpus 64, whatever this host
 * has; on 2 CPUs the ranks then poll as they would on their own cores).
 *
 * Allreduce and reduce at one chunk, exactly one eager area, several
 * chunks with a prime remainder and counts that n does not divide, every
 * dtype and reduction at one size and the core ones (float sum, int32 max)
 * at all, in place and out of place, every root for reduce (recvbuf NULL
 * off the root); broadcast at one byte past the one-barrier path, one
 * area, and several areas with a remainder, from every root, in place. Each
 * call's path is checked (weft__region_pipe_calls counts a call exactly
 * when weft__eager_fits says so), results byte for byte against a
 * reference reduced in rank order, guard bytes after every buffer, sendbuf
 * unchanged. Ranks that disagree on the count get WEFT_EINVAL, all alike,
 * and the communicator stays usable; a rank killed between pipelined calls
 * makes the others return WEFT_EPEER within 3 s. The paths' limits
 * themselves are checked, and that with fewer CPUs than ranks (cpus 2)
 * nothing runs here. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/coll_eager.h"
#include "run/coll_small.h"
#include "run/comm_internal.h"
#include "run/testing_ranks.h"
#include "run/transport/shm/region.h"
#include "weft/comm.h"

#define GUARD 64

static size_t g_shift;

static double val(weft_redop op, uint32_t r, size_t i)
{
    return weft__test_small(op, r, i + g_shift);
}

static bool guard_ok(const unsigned char *p, unsigned char v)
{
    for (size_t i = 0; i < GUARD; i++)
        if (p[i] != v)
            return false;
    return true;
}

/* Whether an allreduce or reduce of count elements of es bytes takes the
 * pipelined path: past the one-barrier eager path, within the limit. */
static bool want_pipe(weft_comm *c, weft_coll coll, size_t count, size_t es)
{
    size_t bytes = count * es;
    bool small = coll == WEFT_COLL_ALLREDUCE ? weft__small_allreduce_fits(c, bytes)
                                             : weft__small_fits(c, coll, count, es);
    return !small && weft__eager_fits(c, coll, bytes);
}

static void reducing(weft_comm *c, weft_coll coll, weft_dtype t, weft_redop op, size_t count,
                     uint32_t root, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), bytes = count * es;
    unsigned char *s = malloc(bytes + GUARD), *r = malloc(bytes + GUARD);
    weft__test_fill(val, t, op, s, me, count);
    memset(s + bytes, 0x5a, GUARD);
    memset(r, 0xa5, bytes + GUARD);
    unsigned char *out = in_place ? s : r;
    uint64_t before = weft__region_pipe_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = coll == WEFT_COLL_ALLREDUCE
                     ? weft_allreduce(c, s, out, count, t, op, &d)
                     : weft_reduce(c, s, me == root ? out : NULL, count, t, op, root, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: %s\n", me, d.msg);
    CHECK_INT(weft__region_pipe_calls(c) - before, want_pipe(c, coll, count, es) ? 1 : 0);
    bool has = coll == WEFT_COLL_ALLREDUCE || me == root;
    if (has) {
        size_t wrong = weft__test_reduce_wrong(val, t, op, out, n, count);
        if (wrong)
            fprintf(stderr, "rank %u of %u: %s %s %s count %zu root %u %s: %zu wrong\n", me, n,
                    weft_coll_name(coll), weft_dtype_name(t), weft_redop_name(op), count, root,
                    in_place ? "in place" : "out of place", wrong);
        CHECK_INT(wrong, 0);
    }
    CHECK(guard_ok(s + bytes, 0x5a));
    CHECK(guard_ok(r + bytes, 0xa5));
    if (!in_place) {
        unsigned char *orig = malloc(bytes);
        weft__test_fill(val, t, op, orig, me, count);
        CHECK(memcmp(orig, s, bytes) == 0);
        free(orig);
        if (!has)
            CHECK(r[0] == 0xa5);
    }
    free(s);
    free(r);
}

static unsigned char pat(uint32_t root, size_t b)
{
    return (unsigned char)(root * 31u + b * 13u + (b >> 9) + 1u);
}

static void broadcasting(weft_comm *c, size_t bytes, uint32_t root, bool in_place)
{
    uint32_t me = weft_comm_rank(c);
    unsigned char *s = malloc(bytes + GUARD), *r = malloc(bytes + GUARD);
    for (size_t b = 0; b < bytes; b++)
        s[b] = me == root ? pat(root, b) : 0x11;
    memset(s + bytes, 0x5a, GUARD);
    memset(r, 0xa5, bytes + GUARD);
    if (in_place && me == root)
        memcpy(r, s, bytes);
    uint64_t before = weft__region_pipe_calls(c);
    weft_err e = weft_broadcast(c, in_place ? r : s, r, bytes, WEFT_UINT8, root, NULL);
    CHECK_ERR(e, WEFT_OK);
    bool pipe = !weft__small_fits(c, WEFT_COLL_BROADCAST, bytes, 1) &&
                weft__eager_fits(c, WEFT_COLL_BROADCAST, bytes);
    CHECK_INT(weft__region_pipe_calls(c) - before, pipe ? 1 : 0);
    size_t bad = 0;
    for (size_t b = 0; b < bytes; b++)
        bad += r[b] != pat(root, b);
    if (bad)
        fprintf(stderr, "rank %u: broadcast %zu bytes from %u: %zu wrong\n", me, bytes, root, bad);
    CHECK_INT(bad, 0);
    CHECK(guard_ok(r + bytes, 0xa5));
    CHECK(guard_ok(s + bytes, 0x5a));
    free(s);
    free(r);
}

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c);
    size_t area = weft__region_eager_bytes(c);
    /* The limits: 3 ranks or more with CPUs of their own. */
    CHECK(!weft__region_oversubscribed(c));
    CHECK(weft__eager_fits(c, WEFT_COLL_ALLREDUCE, (size_t)1 << 34));
    CHECK(weft__eager_fits(c, WEFT_COLL_REDUCE, (size_t)1 << 34));
    CHECK(weft__eager_fits(c, WEFT_COLL_BROADCAST, (size_t)1 << 34));
    CHECK(!weft__eager_fits(c, WEFT_COLL_ALLGATHER, 4096));
    CHECK(!weft__eager_fits(c, WEFT_COLL_ALLREDUCE, 0));
    static const weft_coll colls[] = {WEFT_COLL_ALLREDUCE, WEFT_COLL_REDUCE};
    for (size_t k = 0; k < 2; k++) {
        weft_coll coll = colls[k];
        for (int t = 0; t < WEFT__DTYPE_COUNT; t++)
            for (int op = 0; op < WEFT__REDOP_COUNT; op++) {
                size_t es = weft_dtype_size((weft_dtype)t);
                bool core =
                    (t == WEFT_FLOAT && op == WEFT_SUM) || (t == WEFT_INT32 && op == WEFT_MAX);
                /* Past the one-barrier path: 8 KiB of reads over n - 1
                 * peers, plus one element, and a count n does not divide. */
                size_t first = ((size_t)8 << 10) / (n - 1) / es + 1;
                size_t counts[] = {first, first + n + 1, area / es,
                                   2 * area / es + 7919 % (area / es)};
                for (size_t i = 0; i < 4; i++) {
                    if (i && !core)
                        continue;
                    for (uint32_t root = 0; root < (coll == WEFT_COLL_REDUCE && core ? n : 1);
                         root++) {
                        reducing(c, coll, (weft_dtype)t, (weft_redop)op, counts[i], root, false);
                        reducing(c, coll, (weft_dtype)t, (weft_redop)op, counts[i], root, true);
                    }
                }
            }
    }
    size_t edge = 0;
    while (weft__small_fits(c, WEFT_COLL_BROADCAST, edge + 1, 1))
        edge++;
    size_t sizes[] = {edge + 1, area, 3 * area + 4099};
    for (size_t i = 0; i < 3; i++)
        for (uint32_t root = 0; root < n; root++) {
            broadcasting(c, sizes[i], root, false);
            broadcasting(c, sizes[i], root, true);
        }
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Rank 0 asks for more elements than the others: every rank gets the same
 * error at the first chunk, and the next call runs. */
static int disagree_body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t count = weft__region_eager_bytes(c) / 2; /* floats: 2 areas */
    float *b = calloc(count + 1, sizeof *b);
    weft_diag d;
    weft_diag_clear(&d);
    CHECK(want_pipe(c, WEFT_COLL_ALLREDUCE, count, 4) &&
          want_pipe(c, WEFT_COLL_ALLREDUCE, count + 1, 4));
    weft_err e = weft_allreduce(c, b, b, me == 0 ? count + 1 : count, WEFT_FLOAT, WEFT_SUM, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    char want[160];
    snprintf(want, sizeof want,
             "comm: ranks disagree on the count of allreduce: rank 0 has %zu, rank 1 has %zu",
             count + 1, count);
    CHECK_STR(d.msg, want);
    CHECK(!weft_comm_failed(c));
    for (size_t i = 0; i < count; i++)
        b[i] = (float)(me + 1);
    CHECK_ERR(weft_allreduce(c, b, b, count, WEFT_FLOAT, WEFT_SUM, NULL), WEFT_OK);
    CHECK(b[0] == (float)(n * (n + 1) / 2) && b[count - 1] == b[0]);
    free(b);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

enum { KILL_RANKS = 4, VICTIM = 2, CODE_BASE = 50 };

/* Pipelined allreduces until one fails; the victim kills itself after 20.
 * Exit code CODE_BASE + the error. No clock decides the result: the
 * communicator's timeout is longer than CTest's (main), so only the
 * detection of the death ends the loop, and WEFT_EPEER (not
 * WEFT_ETIMEDOUT) says that it did. */
static int kill_body(weft_comm *c, void *arg)
{
    (void)arg;
    size_t count = weft__region_eager_bytes(c) / 2; /* floats: 2 chunks */
    float *v = calloc(count, sizeof *v);
    if (!want_pipe(c, WEFT_COLL_ALLREDUCE, count, 4))
        return 92;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    for (int it = 0; !e; it++) {
        if (it == 20 && weft_comm_rank(c) == VICTIM)
            kill(getpid(), SIGKILL);
        e = weft_allreduce(c, v, v, count, WEFT_FLOAT, WEFT_SUM, &d);
    }
    free(v);
    if (e)
        fprintf(stderr, "rank %u (expected): %s: %s\n", weft_comm_rank(c), weft_err_name(e), d.msg);
    return CODE_BASE + (int)e;
}

static int few_cpus_body(weft_comm *c, void *arg)
{
    (void)arg;
    CHECK(weft__region_oversubscribed(c));
    CHECK(!weft__eager_fits(c, WEFT_COLL_ALLREDUCE, 64 << 10));
    CHECK(!weft__eager_fits(c, WEFT_COLL_BROADCAST, 1 << 20));
    reducing(c, WEFT_COLL_ALLREDUCE, WEFT_FLOAT, WEFT_SUM, 100000, 0, false);
    broadcasting(c, 300000, 1, false);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static weft_comm_config config(uint32_t cpus)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 60000;
    cfg.cpus = cpus;
    return cfg;
}

int main(void)
{
    weft_comm_config cfg = config(64);
    static const uint32_t ranks[] = {3, 5, 8};
    for (size_t i = 0; i < 3; i++)
        weft__test_comm_ranks_ok(ranks[i], &cfg, body, NULL, 240000, "pipelined eager paths");
    weft__test_comm_ranks_ok(4, &cfg, disagree_body, NULL, 120000, "counts that disagree");
    int codes[KILL_RANKS];
    weft_comm_config kill_cfg = cfg;
    kill_cfg.timeout_ms = 600000; /* longer than CTest's TIMEOUT: only detection ends it */
    CHECK_INT(weft__test_comm_ranks(KILL_RANKS, &kill_cfg, kill_body, NULL, 1200000, codes, NULL),
              0);
    for (uint32_t r = 0; r < KILL_RANKS; r++)
        CHECK_INT(codes[r], r == VICTIM ? 128 + SIGKILL : CODE_BASE + (int)WEFT_EPEER);
    weft_comm_config few = config(2);
    weft__test_comm_ranks_ok(4, &few, few_cpus_body, NULL, 120000, "fewer CPUs than ranks");
    return weft_test_done();
}
