/* Shared buffers (weft_comm_alloc) and the single-pass collectives on them
 * (coll_shared.c), with 2 to 8 forked ranks on shared memory.
 *
 * allreduce, reduce-scatter and allgather on weft_comm_alloc memory, in
 * place and out of place, for integer, 16-bit float, float and double types
 * and every op, counts 1, primes and several work pieces, compared byte for
 * byte with a reference reduced locally in rank order, with guard bytes
 * that must stay untouched; the test checks that these calls ran
 * single-pass (weft__region_fast_calls). Calls where one rank's buffer is
 * ordinary memory, or the ranks use different allocations, must give the
 * same results through the ordinary schedule on every rank. Allocation
 * errors (one rank's impossible size, a NULL out) fail on every rank with
 * named messages and leave the communicator usable; no segment name stays
 * in /dev/shm. Ranks calling different collectives get WEFT_EINVAL. A rank killed while the others
 * run single-pass allreduces makes them return WEFT_EPEER quickly, each naming the dead rank even
 * when it learnt of the death from another rank's failure. Over TCP the memory is allocated
 * but every call runs the ordinary schedule. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/coll_small.h"
#include "run/comm_internal.h"
#include "run/testing_ranks.h"
#include "run/transport/shm/region.h"
#include "weft/comm.h"

/* Largest count * element size used below, per buffer. */
#define MAX_BYTES ((size_t)3 << 20)

static size_t g_shift; /* element index of the checked block (reduce-scatter) */

/* Rank r's element i: small integers, exact in every type and order. */
static double val(weft_redop op, uint32_t r, size_t i)
{
    return weft__test_small(op, r, i + g_shift);
}

typedef struct bufs {
    unsigned char *a, *b, *other; /* two allocations and ordinary memory */
} bufs;

static void report(weft_comm *c, const char *what, weft_dtype t, weft_redop op, size_t count,
                   bool in_place, size_t bad)
{
    if (bad)
        fprintf(stderr, "rank %u of %u: %s %s %s count %zu %s: %zu wrong\n", weft_comm_rank(c),
                weft_comm_size(c), what, weft_dtype_name(t), weft_redop_name(op), count,
                in_place ? "in place" : "out of place", bad);
    CHECK_INT(bad, 0);
}

/* One allreduce from s into r (r == s: in place); `fast` says whether it
 * must run single-pass. */
static void allreduce(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, weft_redop op,
                      size_t count, bool fast)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), bytes = count * es;
    g_shift = 0;
    weft__test_fill(val, t, op, s, me, count);
    s[bytes] = 0x5a;
    if (r != s)
        memset(r, 0xa5, bytes + 1);
    uint64_t before = weft__region_fast_calls(c), small0 = weft__region_small_calls(c);
    bool small = weft__small_allreduce_fits(c, bytes); /* coll_small_test covers it */
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, s, r, count, t, op, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: allreduce: %s\n", me, d.msg);
    CHECK_INT(weft__region_fast_calls(c) - before, fast && !small ? 1 : 0);
    CHECK_INT(weft__region_small_calls(c) - small0, small ? 1 : 0);
    report(c, "allreduce", t, op, count, r == s, weft__test_reduce_wrong(val, t, op, r, n, count));
    CHECK_INT(r[bytes], r == s ? 0x5a : 0xa5);
    if (r != s) {
        unsigned char *orig = malloc(bytes + 1);
        weft__test_fill(val, t, op, orig, me, count);
        CHECK(memcmp(orig, s, bytes) == 0);
        free(orig);
    }
}

/* Reduce-scatter of count elements per rank; in place when in_place. */
static void reduce_scatter(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t,
                           weft_redop op, size_t count, bool in_place, bool fast)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), block = count * es;
    g_shift = 0;
    weft__test_fill(val, t, op, s, me, count * n);
    s[block * n] = 0x5a;
    unsigned char *out = in_place ? s + (size_t)me * block : r;
    if (!in_place)
        memset(r, 0xa5, block + 1);
    uint64_t before = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_reduce_scatter(c, s, out, count, t, op, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: reduce-scatter: %s\n", me, d.msg);
    CHECK_INT(weft__region_fast_calls(c) - before,
              fast && !weft__small_fits(c, WEFT_COLL_REDUCESCATTER, count, es) ? 1 : 0);
    g_shift = (size_t)me * count;
    report(c, "reduce-scatter", t, op, count, in_place,
           weft__test_reduce_wrong(val, t, op, out, n, count));
    g_shift = 0;
    CHECK_INT(s[block * n], 0x5a);
    if (!in_place)
        CHECK_INT(r[block], 0xa5);
}

/* Allgather of count elements per rank; in place when in_place. */
static void allgather(weft_comm *c, unsigned char *s, unsigned char *r, weft_dtype t, size_t count,
                      bool in_place, bool fast)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t), block = count * es;
    g_shift = 0;
    memset(r, 0xa5, block * n + 1);
    unsigned char *in = in_place ? r + (size_t)me * block : s;
    weft__test_fill(val, t, WEFT_SUM, in, me, count);
    uint64_t before = weft__region_fast_calls(c);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allgather(c, in, r, count, t, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: allgather: %s\n", me, d.msg);
    CHECK_INT(weft__region_fast_calls(c) - before,
              fast && !weft__small_fits(c, WEFT_COLL_ALLGATHER, count, es) ? 1 : 0);
    unsigned char *want = malloc(block);
    size_t bad = 0;
    for (uint32_t q = 0; q < n; q++) {
        weft__test_fill(val, t, WEFT_SUM, want, q, count);
        bad += memcmp(want, r + (size_t)q * block, block) != 0;
    }
    free(want);
    report(c, "allgather", t, WEFT_SUM, count, in_place, bad);
    CHECK_INT(r[block * n], 0xa5);
}

/* No name of this job's segments is left in /dev/shm once every rank has
 * returned from its allocations. */
static void check_unlinked(weft_comm *c)
{
    CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "weft-%016llx-", (unsigned long long)c->job_tag);
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    size_t left = 0;
    for (struct dirent *e; (e = readdir(dir));)
        left += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    CHECK_INT(left, 0);
}

static void alloc_errors(weft_comm *c)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    void *p = (void *)1;
    weft_diag d;
    /* The last rank asks for more than /dev/shm can hold. */
    weft_diag_clear(&d);
    weft_err e = weft_comm_alloc(c, me == n - 1 ? (size_t)1 << 52 : 4096, &p, &d);
    if (me == n - 1) {
        CHECK_ERR(e, WEFT_ENOMEM);
        CHECK(
            strstr(d.msg, "comm_alloc: cannot reserve 4503599627370496 bytes for segment /weft-") !=
            NULL);
    } else {
        char want[128];
        snprintf(want, sizeof want, "comm_alloc: rank %u could not allocate its segment", n - 1);
        CHECK_ERR(e, WEFT_EIO);
        CHECK_STR(d.msg, want);
    }
    CHECK(p == NULL);
    /* Rank 0 passes no out pointer. */
    weft_diag_clear(&d);
    e = weft_comm_alloc(c, 100, me == 0 ? NULL : &p, &d);
    if (me == 0) {
        CHECK_ERR(e, WEFT_EINVAL);
        CHECK_STR(d.msg, "comm_alloc: out is NULL");
    } else {
        CHECK_ERR(e, WEFT_EIO);
        CHECK_STR(d.msg, "comm_alloc: rank 0 could not allocate its segment");
    }
    CHECK(!weft_comm_failed(c));
    /* Still usable: 0 bytes gives a page. */
    CHECK_ERR(weft_comm_alloc(c, 0, &p, NULL), WEFT_OK);
    CHECK(p != NULL && ((unsigned char *)p)[0] == 0);
    weft_comm_free_mem(c, p);
}

static int body(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    bufs b = {0};
    weft_diag d;
    weft_diag_clear(&d);
    void *pa = NULL, *pb = NULL;
    CHECK_ERR(weft_comm_alloc(c, MAX_BYTES + 64, &pa, &d), WEFT_OK);
    /* Each rank its own size. */
    CHECK_ERR(weft_comm_alloc(c, MAX_BYTES + 64 + me * 4096, &pb, &d), WEFT_OK);
    if (!pa || !pb) {
        fprintf(stderr, "rank %u: weft_comm_alloc: %s\n", me, d.msg);
        return 90;
    }
    b.a = pa;
    b.b = pb;
    b.other = malloc(MAX_BYTES + 64);
    check_unlinked(c);
    static const weft_dtype types[] = {WEFT_INT8, WEFT_UINT16,   WEFT_INT32, WEFT_UINT64,
                                       WEFT_HALF, WEFT_BFLOAT16, WEFT_FLOAT, WEFT_DOUBLE};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        weft_dtype t = types[k];
        size_t es = weft_dtype_size(t);
        /* Several work pieces per block with a ragged end. */
        size_t big = (n * (size_t)(WEFT__REGION_WORK * 2 + 40) + 7) / es;
        size_t counts[] = {1, 2, 13, 1009, big};
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
            weft_redop op = (weft_redop)((j + k) % WEFT__REDOP_COUNT);
            bool in_place = (j + k) % 2 == 0;
            allreduce(c, b.a, in_place ? b.a : b.b, t, op, counts[j], true);
            if (counts[j] * n * es > MAX_BYTES)
                continue;
            reduce_scatter(c, b.a, b.b, t, op, counts[j], in_place, true);
            allgather(c, b.a, b.b, t, counts[j], in_place, true);
        }
        for (int op = 0; op < WEFT__REDOP_COUNT; op++)
            allreduce(c, b.b, op % 2 ? b.b : b.a, t, (weft_redop)op, 13, true);
    }
    /* Ordinary memory on one rank, or different allocations: the ordinary
     * schedule on every rank. */
    unsigned char *odd = me == n - 1 ? b.other : b.a;
    allreduce(c, odd, b.b, WEFT_INT32, WEFT_SUM, 100003, false);
    allreduce(c, odd, odd, WEFT_FLOAT, WEFT_MAX, 5, false);
    allreduce(c, me == 0 ? b.b : b.a, me == 0 ? b.a : b.b, WEFT_INT16, WEFT_MIN, 4099, false);
    reduce_scatter(c, odd, b.b, WEFT_INT32, WEFT_SUM, 1009, false, false);
    allgather(c, b.a, me == 1 ? b.other : b.b, WEFT_DOUBLE, 1009, false, false);
    /* Sendbuf of allgather may be anywhere. */
    allgather(c, b.other, b.b, WEFT_INT32, 77, false, true);
    /* Ranks that call different collectives are told so, all alike, and
     * the communicator stays usable. */
    weft_diag_clear(&d);
    weft_err e = me == 0 ? weft_allreduce(c, b.a, b.b, 1009, WEFT_INT32, WEFT_SUM, &d)
                         : weft_allgather(c, b.a, b.b, 1009, WEFT_INT32, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    CHECK_STR(d.msg,
              "comm: ranks disagree on the collective: rank 0 called allreduce, rank 1 allgather");
    CHECK(!weft_comm_failed(c));
    /* Count 0 does nothing. */
    CHECK_ERR(weft_allreduce(c, b.a, b.b, 0, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    alloc_errors(c);
    /* After one rank frees, calls on its old buffer run the ordinary way. */
    if (me == 0) {
        weft_comm_free_mem(c, pa);
        b.a = b.other;
    }
    allreduce(c, b.a, b.b, WEFT_UINT64, WEFT_SUM, 65537, false);
    check_unlinked(c);
    CHECK(!weft_comm_failed(c));
    free(b.other);
    /* The rest is released by weft_comm_free. */
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* Over TCP (peers not on shared memory) the memory is still allocated,
 * but every call takes the ordinary schedule. */
static int tcp_body(weft_comm *c, void *arg)
{
    (void)arg;
    void *pa = NULL, *pb = NULL;
    CHECK_ERR(weft_comm_alloc(c, 1 << 20, &pa, NULL), WEFT_OK);
    CHECK_ERR(weft_comm_alloc(c, 1 << 20, &pb, NULL), WEFT_OK);
    if (!pa || !pb)
        return 90;
    allreduce(c, pa, pb, WEFT_INT32, WEFT_SUM, 100003, false);
    allreduce(c, pa, pa, WEFT_DOUBLE, WEFT_MAX, 13, false);
    reduce_scatter(c, pa, pb, WEFT_INT32, WEFT_SUM, 1009, false, false);
    allgather(c, pa, pb, WEFT_INT32, 1009, true, false);
    CHECK_INT(weft__region_fast_calls(c), 0);
    weft_comm_free_mem(c, pa);
    weft_comm_free_mem(c, pb);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

enum { KILL_RANKS = 4, VICTIM = 2, WITNESS = 1, CODE_BASE = 50, MSG_BYTES = 256 };

/* Shared with the children: each rank's pid and the message of its error. */
typedef struct kill_log {
    int pid[KILL_RANKS];
    char msg[KILL_RANKS][MSG_BYTES];
} kill_log;

/* Single-pass allreduces until one fails. At call 20 the victim kills
 * itself, and the witness waits to receive from it (in the transport)
 * instead of calling: the others wait in their single-pass call for the
 * witness, which fails only once it sees the victim die, so they must
 * learn from the witness's abort whom to blame. Exit code CODE_BASE + the
 * error, 90 when the shared buffer cannot be had. No clock decides the
 * result: the communicator's timeout is longer than CTest's (run_kill), so
 * only the detection of the death ends the loop, and WEFT_EPEER (not
 * WEFT_ETIMEDOUT) says that it did. */
static int kill_body(weft_comm *c, void *arg)
{
    kill_log *log = arg;
    uint32_t me = weft_comm_rank(c);
    log->pid[me] = (int)getpid();
    size_t count = 1 << 18;
    void *p = NULL;
    if (weft_comm_alloc(c, count * 4, &p, NULL))
        return 90;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    int64_t got = 0;
    for (int it = 0; !e; it++) {
        if (it == 20 && me == VICTIM)
            kill(getpid(), SIGKILL);
        if (it == 20 && me == WITNESS)
            e = weft_recv(c, VICTIM, &got, sizeof got, &d);
        else
            e = weft_allreduce(c, p, p, count, WEFT_INT32, WEFT_MAX, &d);
    }
    if (e)
        fprintf(stderr, "rank %u (expected): %s: %s\n", me, weft_err_name(e), d.msg);
    memcpy(log->msg[me], d.msg, MSG_BYTES - 1);
    return CODE_BASE + (int)e;
}

static void run(uint32_t n, weft_transport_choice t, weft__comm_body fn)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    weft__test_comm_ranks_ok(n, &cfg, fn, NULL, 120000,
                             t == WEFT_TRANSPORT_SHM ? "shared buffers, shm"
                                                     : "shared buffers, tcp");
}

static void run_kill(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 600000; /* longer than CTest's TIMEOUT: only detection ends it */
    kill_log *log =
        mmap(NULL, sizeof *log, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (log == MAP_FAILED)
        return;
    memset(log, 0, sizeof *log);
    int codes[KILL_RANKS];
    CHECK_INT(weft__test_comm_ranks(KILL_RANKS, &cfg, kill_body, log, 1200000, codes, NULL), 0);
    /* Every survivor names the rank that died: the witness as it saw it,
     * the others as the witness reported it. */
    char died[64], reported[96];
    snprintf(died, sizeof died, "shm: rank %d (pid %d) died", VICTIM, log->pid[VICTIM]);
    snprintf(reported, sizeof reported, "%s (reported by rank %d)", died, WITNESS);
    for (uint32_t r = 0; r < KILL_RANKS; r++) {
        CHECK_INT(codes[r], r == VICTIM ? 128 + SIGKILL : CODE_BASE + (int)WEFT_EPEER);
        if (r != VICTIM)
            CHECK_STR(log->msg[r], r == WITNESS ? died : reported);
    }
    munmap(log, sizeof *log);
}

int main(void)
{
    for (uint32_t n = 2; n <= 8; n++)
        run(n, WEFT_TRANSPORT_SHM, body);
    run(3, WEFT_TRANSPORT_TCP, tcp_body);
    run_kill();
    return weft_test_done();
}
