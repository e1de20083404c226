/* Alltoallv plans (a traffic matrix fixes every block's bytes) run for real
 * on forked ranks over shared memory and TCP, 2 to 4 ranks: direct,
 * pairwise, Bruck (scratch relays whose slots hold blocks of several
 * sizes), hier and flash (gathers through a box's scratch) on skewed
 * matrices with zero entries, and two plans written here: an in-place
 * plan relaying through scratch, and one with two chunks per block whose
 * op of four slots crosses a block boundary into a relay's scratch. Each
 * runs twice with weft_comm_plan_run_v on MPI layouts with gaps and blocks
 * received in reverse order, small and large (several slices per chunk),
 * compared byte for byte; gaps and sendbufs are left as they were. Counts
 * that are not the plan's matrix fail on every rank with one message (both
 * ways of agreeing on counts), the communicator staying usable; a forced
 * alltoallv plan (WEFT_PLAN) runs under weft_alltoallv, and is refused by
 * weft_alltoall and by the calls that take one count. Preparing and
 * running under injected allocation failures fail cleanly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/coll_alltoallv.h"
#include "run/exec_plan.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"
#include "weft/exec_model.h"
#include "weft/synth.h"

/* Two boxes of two ranks: fast links inside a box, a slower network
 * between (hier and flash need boxes). */
static const char *boxes_4 = "node g0 compute host=0\nnode g1 compute host=0\n"
                             "node g2 compute host=1\nnode g3 compute host=1\n"
                             "node nv0 switch\nnode nv1 switch\nnode net switch\n"
                             "duplex g0 nv0 300GB/s\nduplex g1 nv0 300GB/s\n"
                             "duplex g2 nv1 300GB/s\nduplex g3 nv1 300GB/s\n"
                             "duplex g0 net 50GB/s\nduplex g1 net 50GB/s\n"
                             "duplex g2 net 50GB/s\nduplex g3 net 50GB/s\n";

/* In place, two ranks: each sends its block for the other into the
 * other's scratch, which then lands where the sent block was (so that slot
 * holds blocks of two sizes). */
static const char *inplace_2 = "weft-plan 1\ncoll alltoall\nranks 2\nchunks 1\nscratch 1\n"
                               "inplace yes\n"
                               "op 0 copy 0:in[1] 1:scratch[0]\n"
                               "op 1 copy 1:in[0] 0:scratch[0]\n"
                               "op 2 copy 0:scratch[0] 0:out[1] deps=0,1\n"
                               "op 3 copy 1:scratch[0] 1:out[0] deps=0,1\n";

/* Three ranks, two chunks per block: rank 0's blocks for ranks 1 and 2
 * travel in one op of four slots to rank 1's scratch, which keeps its own
 * and forwards rank 2's; every other block goes straight. */
static const char *relay_3 = "weft-plan 1\ncoll alltoall\nranks 3\nchunks 2\nscratch 4\n"
                             "inplace no\n"
                             "op 0 copy 0:in[2] 1:scratch[0] n=4\n"
                             "op 1 copy 1:scratch[0] 1:out[0] n=2 deps=0\n"
                             "op 2 copy 1:scratch[2] 2:out[0] n=2 deps=0 ch=1\n"
                             "op 3 copy 0:in[0] 0:out[0] n=2\n"
                             "op 4 copy 1:in[0] 0:out[2] n=2\n"
                             "op 5 copy 1:in[2] 1:out[2] n=2\n"
                             "op 6 copy 1:in[4] 2:out[2] n=2\n"
                             "op 7 copy 2:in[0] 0:out[4] n=2\n"
                             "op 8 copy 2:in[2] 1:out[4] n=2\n"
                             "op 9 copy 2:in[4] 2:out[4] n=2\n";

/* What rank s sends rank d, in elements: skewed, some zero (the diagonal
 * of rank 0 among them), odd, so that two chunks of a block differ. */
static uint64_t elems_of(uint32_t s, uint32_t d, uint64_t scale, bool sym)
{
    if (sym && s > d)
        return elems_of(d, s, scale, sym);
    if ((s + 2 * d) % 5 == 0)
        return 0;
    return ((s * 7 + d * 3) % 5) * scale + s + 2 * d + 1;
}

/* Byte i of the block rank s sends rank d: mixed, so that a block or chunk
 * at a wrong offset never matches. */
static unsigned char byte_of(uint32_t s, uint32_t d, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + s * 40503u + d * 9973u + 1;
    return (unsigned char)(x >> 24 ^ x >> 11);
}

typedef struct job {
    uint32_t n;
    weft_dtype dtype;
    uint64_t scale;
    bool sym;
    weft_plan *plans[8];
    const char *names[8];
    uint32_t nplans;
    const char *forced; /* the path of WEFT_PLAN (plans[0]) or NULL */
} job;

typedef struct layout {
    size_t *sc, *sd, *rc, *rd; /* elements */
    size_t send_end, recv_end; /* elements */
} layout;

/* Blocks sent in rank order after a gap of one element, received in
 * reverse rank order after gaps of two. */
static void make_layout(const job *j, uint32_t me, layout *l)
{
    uint32_t n = j->n;
    l->sc = calloc(4 * (size_t)n, sizeof(size_t));
    l->sd = l->sc + n;
    l->rc = l->sd + n;
    l->rd = l->rc + n;
    size_t at = 0;
    for (uint32_t k = 0; k < n; k++) {
        l->sc[k] = elems_of(me, k, j->scale, j->sym);
        l->sd[k] = at + 1;
        at += l->sc[k] + 1;
    }
    l->send_end = at;
    at = 0;
    for (uint32_t k = n; k-- > 0;) {
        l->rc[k] = elems_of(k, me, j->scale, j->sym);
        l->rd[k] = at + 2;
        at += l->rc[k] + 2;
    }
    l->recv_end = at;
}

/* Checks recv against what every rank sent this rank; gaps still 0xa5. */
static void check_recv(const job *j, uint32_t me, const layout *l, const unsigned char *r,
                       size_t es, const char *what)
{
    size_t wrong = 0, first = SIZE_MAX;
    unsigned char *want = malloc(l->recv_end * es + 1);
    memset(want, 0xa5, l->recv_end * es + 1);
    for (uint32_t s = 0; s < j->n; s++)
        for (size_t i = 0; i < l->rc[s] * es; i++)
            want[l->rd[s] * es + i] = byte_of(s, me, i);
    for (size_t i = 0; i < l->recv_end * es + 1; i++)
        if (r[i] != want[i]) {
            wrong++;
            if (first == SIZE_MAX)
                first = i;
        }
    if (wrong)
        fprintf(stderr, "%s: rank %u: %zu wrong bytes, the first at %zu\n", what, me, wrong, first);
    CHECK(wrong == 0);
    free(want);
}

/* One call of the plan (cp) or of weft_alltoallv (cp NULL), in place or
 * not (in place needs a symmetric matrix), checked. */
static void run_once(weft_comm *c, const job *j, weft_comm_plan *cp, bool in_place,
                     const char *what)
{
    uint32_t me = weft_comm_rank(c);
    size_t es = weft_dtype_size(j->dtype);
    layout l;
    make_layout(j, me, &l);
    size_t sbytes = l.send_end * es + 1, rbytes = l.recv_end * es + 1;
    unsigned char *s = malloc(sbytes), *r = malloc(rbytes), *orig = malloc(sbytes);
    memset(s, 0x5a, sbytes);
    memset(r, 0xa5, rbytes);
    for (uint32_t k = 0; k < j->n; k++)
        for (size_t i = 0; i < l.sc[k] * es; i++)
            s[l.sd[k] * es + i] = byte_of(me, k, i);
    if (in_place)
        for (uint32_t k = 0; k < j->n; k++)
            for (size_t i = 0; i < l.rc[k] * es; i++)
                r[l.rd[k] * es + i] = byte_of(me, k, i);
    memcpy(orig, s, sbytes);
    weft_diag d;
    weft_diag_clear(&d);
    const void *in = in_place ? r : s;
    weft_err e = cp ? weft_comm_plan_run_v(cp, in, l.sc, l.sd, r, l.rc, l.rd, j->dtype, &d)
                    : weft_alltoallv(c, in, l.sc, l.sd, r, l.rc, l.rd, j->dtype, &d);
    if (e)
        fprintf(stderr, "%s: rank %u: %s\n", what, me, d.msg);
    CHECK_ERR(e, WEFT_OK);
    check_recv(j, me, &l, r, es, what);
    CHECK(memcmp(s, orig, sbytes) == 0);
    free(s);
    free(r);
    free(orig);
    free(l.sc);
}

/* Rank n-1 sends rank 0 one element more than the plan has, and rank 0
 * expects it: the ranks agree with each other, not with the plan. */
static void check_mismatch(weft_comm *c, const job *j, weft_comm_plan *cp, const char *plan_name)
{
    uint32_t n = j->n, me = weft_comm_rank(c);
    size_t es = weft_dtype_size(j->dtype);
    layout l;
    make_layout(j, me, &l);
    if (me == n - 1)
        l.sc[0]++;
    if (me == 0)
        l.rc[n - 1]++;
    size_t big = (l.send_end + l.recv_end + 4) * es;
    unsigned char *s = calloc(big, 1), *r = calloc(big, 1);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = cp ? weft_comm_plan_run_v(cp, s, l.sc, l.sd, r, l.rc, l.rd, j->dtype, &d)
                    : weft_alltoallv(c, s, l.sc, l.sd, r, l.rc, l.rd, j->dtype, &d);
    CHECK_ERR(e, WEFT_EINVAL);
    uint64_t want_b = elems_of(n - 1, 0, j->scale, j->sym) * es;
    char want[512];
    snprintf(want, sizeof want,
             "comm: the counts of alltoallv differ from the traffic matrix of %s: rank %u sends "
             "rank 0 %llu elements of %s (%llu bytes), the matrix %llu bytes",
             plan_name, n - 1, (unsigned long long)(want_b / es + 1), weft_dtype_name(j->dtype),
             (unsigned long long)(want_b + es), (unsigned long long)want_b);
    CHECK_STR(d.msg, want);
    CHECK(!weft_comm_failed(c));
    free(s);
    free(r);
    free(l.sc);
}

static int body(weft_comm *c, void *arg)
{
    const job *j = arg;
    char what[160];
    uint32_t n = weft_comm_size(c);
    const char *t = weft_comm_transport(c, (weft_comm_rank(c) + 1) % n);
    weft_diag d;
    if (j->forced) {
        /* weft_alltoallv runs the forced plan: the right bytes, and counts
         * that are not its matrix are refused by name. */
        snprintf(what, sizeof what, "weft_alltoallv with WEFT_PLAN %s on %u ranks (%s)",
                 j->names[0], j->n, t);
        weft_comm_choice ch;
        run_once(c, j, NULL, false, what);
        run_once(c, j, NULL, false, what);
        char name[300];
        snprintf(name, sizeof name, "the plan %s (WEFT_PLAN)", j->forced);
        check_mismatch(c, j, NULL, name);
        weft__alltoallv_all_max = 0; /* the alltoall + allgather way */
        check_mismatch(c, j, NULL, name);
        weft__alltoallv_all_max = 128;
        run_once(c, j, NULL, false, what);
        unsigned char buf[64];
        weft_diag_clear(&d);
        CHECK_ERR(weft_alltoall(c, buf, buf + 32, 1, WEFT_UINT8, &d), WEFT_EINVAL);
        snprintf(name, sizeof name,
                 "comm: the plan %s (WEFT_PLAN) is an alltoallv plan (a traffic matrix): "
                 "it runs alltoallv calls, not alltoall",
                 j->forced);
        CHECK_STR(d.msg, name);
        CHECK_ERR(weft_comm_choose(c, WEFT_COLL_ALLTOALL, 1, WEFT_UINT8, 0, &ch, &d), WEFT_EINVAL);
        CHECK(!weft_comm_failed(c));
        return weft__test_failed > 99 ? 99 : weft__test_failed;
    }
    for (uint32_t k = 0; k < j->nplans; k++) {
        snprintf(what, sizeof what, "%s on %u ranks (%s, %s, scale %llu)", j->names[k], j->n, t,
                 weft_dtype_name(j->dtype), (unsigned long long)j->scale);
        weft_comm_plan *cp = NULL;
        weft_diag_clear(&d);
        weft_err e = weft_comm_plan_new(c, j->plans[k], &cp, &d);
        if (e)
            fprintf(stderr, "%s: %s\n", what, d.msg);
        CHECK_ERR(e, WEFT_OK);
        if (!cp)
            continue;
        /* Slices: those of the mean chunk, cut by fraction, where every
         * slot holds one size (direct: each slot one block; relay_3: each
         * scratch slot one chunk); cut by position where a slot holds
         * blocks of two sizes (Bruck's packing slots on a matrix that is
         * not symmetric, the in-place plan's slots): Q the mean chunk's
         * slice bytes (raised so the largest chunk has at most
         * WEFT_EXEC_MAX_SLICES), as many slices as the largest chunk has. */
        const weft_plan_info *info = weft_plan_get_info(j->plans[k]);
        const weft_traffic *m = weft_plan_traffic(j->plans[k]);
        uint64_t total = 0, big = 0;
        for (size_t e2 = 0; e2 < (size_t)n * n; e2++) {
            total += m->bytes[e2];
            big = m->bytes[e2] > big ? m->bytes[e2] : big;
        }
        big = (big + info->chunks - 1) / info->chunks;
        uint64_t mean = total / ((uint64_t)n * n * info->chunks);
        uint32_t mean_slices = weft_exec_slices(mean);
        uint64_t q = (mean + mean_slices - 1) / mean_slices;
        if (q * WEFT_EXEC_MAX_SLICES < big)
            q = (big + WEFT_EXEC_MAX_SLICES - 1) / WEFT_EXEC_MAX_SLICES;
        if (strcmp(j->names[k], "direct") == 0 || strcmp(j->names[k], "relay_3.plan") == 0) {
            CHECK_INT(weft__comm_plan_sized_slices(cp), mean_slices);
            CHECK_INT(weft__comm_plan_sized_quantum(cp), 0);
        }
        if (!j->sym &&
            (strcmp(j->names[k], "bruck") == 0 || strcmp(j->names[k], "inplace_2.plan") == 0)) {
            CHECK_INT(weft__comm_plan_sized_quantum(cp), q);
            CHECK_INT(weft__comm_plan_sized_slices(cp), (big + q - 1) / q);
            /* Large blocks: relays pipelined (they ran whole before). */
            if (j->scale > 1000)
                CHECK(weft__comm_plan_sized_slices(cp) > 1);
        }
        if (j->scale > 1000)
            CHECK(mean_slices > 1); /* relay_3 too: its two chunks per block */
        run_once(c, j, cp, false, what);
        if (j->scale < 1000)
            run_once(c, j, cp, false, what); /* large ones run twice in all */
        if (j->sym)
            run_once(c, j, cp, true, what);
        check_mismatch(c, j, cp, "the plan");
        run_once(c, j, cp, false, what);
        /* One count cannot give an alltoallv plan's displacements. */
        unsigned char buf[16];
        weft_diag_clear(&d);
        CHECK_ERR(weft_comm_plan_run(cp, buf, buf, 0, WEFT_UINT8, WEFT_SUM, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, "plan: an alltoallv plan (one with a traffic matrix) runs with counts "
                         "and displacements, not one count");
        weft_comm_plan_free(cp);
    }
    CHECK(!weft_comm_failed(c));
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void set_matrix(weft_plan *p, const job *j)
{
    weft_traffic m;
    CHECK_ERR(weft_traffic_new(j->n, &m, NULL), WEFT_OK);
    size_t es = weft_dtype_size(j->dtype);
    for (uint32_t s = 0; s < j->n; s++)
        for (uint32_t d = 0; d < j->n; d++)
            m.bytes[(size_t)s * j->n + d] = elems_of(s, d, j->scale, j->sym) * es;
    weft_diag d;
    CHECK_ERR(weft_plan_set_traffic(p, &m, &d), WEFT_OK);
    weft_traffic_free(&m);
}

static void add_classic(job *j, const weft_topo *t, const char *algo)
{
    weft_traffic m;
    CHECK_ERR(weft_traffic_new(j->n, &m, NULL), WEFT_OK);
    size_t es = weft_dtype_size(j->dtype);
    for (uint32_t s = 0; s < j->n; s++)
        for (uint32_t d = 0; d < j->n; d++)
            m.bytes[(size_t)s * j->n + d] = elems_of(s, d, j->scale, j->sym) * es;
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_synth_classic_traffic(t, algo, &m, 0, &p, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", algo, d.msg);
    CHECK_ERR(e, WEFT_OK);
    weft_traffic_free(&m);
    if (!p)
        return;
    j->plans[j->nplans] = p;
    j->names[j->nplans++] = algo;
}

static void add_text(job *j, const char *text, const char *name)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_err e = weft_plan_parse(text, strlen(text), name, &p, &d);
    if (e)
        fprintf(stderr, "%s: %s\n", name, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (!p)
        return;
    set_matrix(p, j);
    j->plans[j->nplans] = p;
    j->names[j->nplans++] = name;
}

static void run(job *j, weft_transport_choice tr, const char *plan_file, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = tr;
    cfg.timeout_ms = 8000;
    cfg.plan_file = plan_file;
    weft__test_comm_ranks_ok(j->n, &cfg, body, j, 60000, what);
}

static void free_job(job *j)
{
    for (uint32_t k = 0; k < j->nplans; k++)
        weft_plan_free(j->plans[k]);
}

/* Every plan of n ranks on both transports, small and large blocks. */
static void run_all(uint32_t n, weft_dtype dtype, uint64_t scale, bool sym)
{
    job j = {.n = n, .dtype = dtype, .scale = scale, .sym = sym};
    weft_topo *t = NULL;
    char spec[32];
    snprintf(spec, sizeof spec, "switch:%u", n);
    if (n == 4)
        CHECK_ERR(weft_topo_parse(boxes_4, strlen(boxes_4), "boxes.topo", &t, NULL), WEFT_OK);
    else
        CHECK_ERR(weft_topo_preset(spec, &t, NULL), WEFT_OK);
    const char *algos[] = {"direct", "pairwise", "bruck", "hier", "flash"};
    for (int k = 0; t && k < (n == 4 ? 5 : 3); k++)
        add_classic(&j, t, algos[k]);
    if (n == 2)
        add_text(&j, inplace_2, "inplace_2.plan");
    if (n == 3)
        add_text(&j, relay_3, "relay_3.plan");
    char what[96];
    snprintf(what, sizeof what, "%u ranks shm, scale %llu", n, (unsigned long long)scale);
    run(&j, WEFT_TRANSPORT_SHM, NULL, what);
    snprintf(what, sizeof what, "%u ranks tcp, scale %llu", n, (unsigned long long)scale);
    run(&j, WEFT_TRANSPORT_TCP, NULL, what);
    free_job(&j);
    weft_topo_free(t);
}

/* weft_alltoallv with WEFT_PLAN: the Bruck plan of a matrix, from a file. */
static void run_forced(uint32_t n, weft_transport_choice tr)
{
    job j = {.n = n, .dtype = WEFT_FLOAT, .scale = 1000};
    weft_topo *t = NULL;
    char spec[32], path[256];
    snprintf(spec, sizeof spec, "switch:%u", n);
    CHECK_ERR(weft_topo_preset(spec, &t, NULL), WEFT_OK);
    add_classic(&j, t, "bruck");
    weft_topo_free(t);
    if (!j.nplans)
        return;
    snprintf(path, sizeof path, "%s/exec_plan_v_test.%ld.plan", WEFT_BINARY_DIR, (long)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_ERR(weft_plan_write(j.plans[0], f), WEFT_OK);
    CHECK(fclose(f) == 0);
    j.forced = path;
    run(&j, tr, path, tr == WEFT_TRANSPORT_SHM ? "WEFT_PLAN shm" : "WEFT_PLAN tcp");
    unlink(path);
    free_job(&j);
}

/* One rank, two chunks per block relayed through scratch: preparing and
 * running under a growing allocation budget (weft_test_oom_sweep) fail
 * with WEFT_ENOMEM and leak nothing, and the run that succeeds is exact. */
static const char *solo = "weft-plan 1\ncoll alltoall\nranks 1\nchunks 2\nscratch 2\n"
                          "inplace no\ntraffic 0 0 5\n"
                          "op 0 copy 0:in[0] 0:scratch[0] n=2\n"
                          "op 1 copy 0:scratch[0] 0:out[0] n=2 deps=0\n";

typedef struct oom_arg {
    weft_comm *c;
    weft_plan *p;
    weft_comm_plan *cp;
    unsigned char in[8], out[8];
} oom_arg;

static weft_err oom_prepare(void *arg)
{
    oom_arg *a = arg;
    return weft_comm_plan_new(a->c, a->p, &a->cp, NULL);
}

static void oom_unprepare(void *arg)
{
    oom_arg *a = arg;
    weft_comm_plan_free(a->cp);
    a->cp = NULL;
}

static weft_err oom_run(void *arg)
{
    oom_arg *a = arg;
    size_t sc[1] = {5}, sd[1] = {2}, rc[1] = {5}, rd[1] = {1};
    memset(a->out, 0, sizeof a->out);
    return weft_comm_plan_run_v(a->cp, a->in, sc, sd, a->out, rc, rd, WEFT_UINT8, NULL);
}

static void oom_ran(void *arg)
{
    oom_arg *a = arg;
    CHECK(memcmp(a->out + 1, a->in + 2, 5) == 0);
    CHECK(a->out[0] == 0 && a->out[6] == 0);
    /* The run keeps its private slots in the prepared plan until it is
     * freed: release them (a fresh plan holds none). */
    weft_comm_plan_free(a->cp);
    a->cp = NULL;
    CHECK_ERR(weft_comm_plan_new(a->c, a->p, &a->cp, NULL), WEFT_OK);
}

static void test_oom(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    oom_arg a = {0};
    CHECK_ERR(weft_comm_init(&cfg, &a.c, NULL), WEFT_OK);
    CHECK_ERR(weft_plan_parse(solo, strlen(solo), "solo.plan", &a.p, NULL), WEFT_OK);
    for (int i = 0; i < 8; i++)
        a.in[i] = (unsigned char)(i * 29 + 3);
    if (a.c && a.p) {
        CHECK(weft_test_oom_sweep("weft_comm_plan_new (alltoallv)", oom_prepare, oom_unprepare,
                                  &a) > 0);
        CHECK_ERR(weft_comm_plan_new(a.c, a.p, &a.cp, NULL), WEFT_OK);
        CHECK(weft_test_oom_sweep("weft_comm_plan_run_v", oom_run, oom_ran, &a) > 0);
        CHECK(!weft_comm_failed(a.c));
        weft_comm_plan_free(a.cp);
    }
    weft_plan_free(a.p);
    weft_comm_free(a.c);
}

int main(void)
{
    test_oom();
    run_all(2, WEFT_UINT8, 3, false);
    run_all(2, WEFT_INT16, 2, true);
    run_all(3, WEFT_UINT8, 5, false);
    run_all(4, WEFT_UINT8, 7, false);
    run_all(4, WEFT_FLOAT, 3, true);
    /* Blocks of up to 4.4 MB: several slices per chunk where the plan's
     * slots each hold one size. */
    run_all(3, WEFT_UINT8, 1100003, false);
    run_all(4, WEFT_INT32, 150001, false);
    run_forced(3, WEFT_TRANSPORT_SHM);
    run_forced(4, WEFT_TRANSPORT_TCP);
    return weft_test_done();
}
