/* weft_alltoallv with forked ranks on shared memory and TCP: every dtype,
 * unequal counts (some 0) and displacements with gaps, blocks received in
 * reverse order, in place and out of place, one large exchange, compared
 * byte for byte with the blocks each sender wrote; gaps and sendbufs are
 * left as they were. Then counts that disagree, and a dtype that differs,
 * fail on every rank with the same message and leave the communicator
 * usable, with the counts agreed both ways (one allgather, and the
 * alltoall + allgather of more than 128 ranks). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "run/coll_alltoallv.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

/* What rank s sends rank d, in elements. */
static size_t count_of(uint32_t s, uint32_t d, size_t scale)
{
    return ((s + 2 * d) % 4) * scale + (s == d ? 1 : 0);
}

/* Byte i of the block rank s sends rank d. */
static unsigned char byte_of(uint32_t s, uint32_t d, size_t i)
{
    return (unsigned char)(s * 37 + d * 11 + i * 7 + 1);
}

typedef struct layout {
    size_t *sc, *sd, *rc, *rd; /* elements */
    size_t send_end, recv_end; /* elements */
} layout;

static void make_layout(uint32_t n, uint32_t me, size_t scale, bool in_place, layout *l)
{
    l->sc = calloc(4 * (size_t)n, sizeof(size_t));
    l->sd = l->sc + n;
    l->rc = l->sd + n;
    l->rd = l->rc + n;
    size_t at = 0;
    for (uint32_t j = 0; j < n; j++) {
        l->sc[j] = count_of(me, j, scale);
        l->sd[j] = at + 1; /* a gap of one element before each block */
        at += l->sc[j] + 1;
    }
    l->send_end = at;
    at = 0;
    for (uint32_t j = n; j-- > 0;) { /* reverse order, gaps of two */
        l->rc[j] = count_of(j, me, scale);
        l->rd[j] = at + 2;
        at += l->rc[j] + 2;
    }
    l->recv_end = at;
    if (in_place) /* symmetric counts: what MPI_IN_PLACE requires */
        for (uint32_t j = 0; j < n; j++) {
            size_t a = count_of(me, j, scale), b = count_of(j, me, scale);
            l->rc[j] = a < b ? a : b;
        }
}

static void check(weft_comm *c, weft_dtype t, size_t scale, bool in_place)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t es = weft_dtype_size(t);
    layout l;
    make_layout(n, me, scale, in_place, &l);
    size_t sbytes = l.send_end * es + 1, rbytes = l.recv_end * es + 1;
    unsigned char *s = malloc(sbytes), *r = malloc(rbytes), *orig = malloc(sbytes);
    memset(s, 0x5a, sbytes);
    memset(r, 0xa5, rbytes);
    for (uint32_t j = 0; j < n; j++)
        for (size_t i = 0; i < l.sc[j] * es; i++)
            s[l.sd[j] * es + i] = byte_of(me, j, i);
    if (in_place)
        for (uint32_t j = 0; j < n; j++)
            for (size_t i = 0; i < l.rc[j] * es; i++)
                r[l.rd[j] * es + i] = byte_of(me, j, i);
    memcpy(orig, s, sbytes);
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = in_place ? weft_alltoallv(c, r, NULL, NULL, r, l.rc, l.rd, t, &d)
                          : weft_alltoallv(c, s, l.sc, l.sd, r, l.rc, l.rd, t, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e)
        fprintf(stderr, "rank %u: alltoallv %s: %s\n", me, weft_dtype_name(t), d.msg);
    size_t wrong = 0, gaps = 0;
    unsigned char *seen = calloc(rbytes, 1);
    for (uint32_t j = 0; j < n; j++)
        for (size_t i = 0; i < l.rc[j] * es; i++) {
            wrong += r[l.rd[j] * es + i] != byte_of(j, me, i);
            seen[l.rd[j] * es + i] = 1;
        }
    for (size_t i = 0; i < rbytes; i++)
        gaps += !seen[i] && r[i] != 0xa5;
    if (wrong || gaps)
        fprintf(stderr,
                "rank %u of %u: alltoallv %s scale %zu%s: %zu bytes wrong, %zu gap bytes written\n",
                me, n, weft_dtype_name(t), scale, in_place ? " in place" : "", wrong, gaps);
    CHECK_INT(wrong, 0);
    CHECK_INT(gaps, 0);
    CHECK(memcmp(orig, s, sbytes) == 0); /* sendbuf untouched */
    free(seen);
    free(s);
    free(r);
    free(orig);
    free(l.sc);
}

/* Rank 1 sends rank 0 one element more than rank 0 expects; then rank 2
 * (or 1) gives another dtype. Every rank gets the same message. */
static void check_mismatch(weft_comm *c)
{
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    size_t *sc = calloc(4 * (size_t)n, sizeof(size_t)), *sd = sc + n, *rc = sd + n, *rd = rc + n;
    for (uint32_t j = 0; j < n; j++) {
        sc[j] = rc[j] = 2;
        sd[j] = rd[j] = 3 * j;
    }
    if (me == 1)
        sc[0] = 3;
    int32_t s[3 * 16] = {0}, r[3 * 16] = {0};
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_alltoallv(c, s, sc, sd, r, rc, rd, WEFT_INT32, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: ranks disagree on the counts of alltoallv: rank 1 sends 3 elements "
                     "(int32) to rank 0, which expects 2");
    sc[0] = 2;
    weft_dtype t = me == n - 1 ? WEFT_UINT32 : WEFT_INT32;
    CHECK_ERR(weft_alltoallv(c, s, sc, sd, r, rc, rd, t, &d), WEFT_EINVAL);
    char want[160];
    snprintf(want, sizeof want,
             "comm: ranks disagree on the dtype of alltoallv: rank 0 has int32, rank %u has uint32",
             n - 1);
    CHECK_STR(d.msg, want);
    CHECK(!weft_comm_failed(c));
    /* Still usable. */
    for (uint32_t j = 0; j < n; j++)
        s[sd[j]] = (int32_t)(me * 100 + j);
    CHECK_ERR(weft_alltoallv(c, s, sc, sd, r, rc, rd, WEFT_INT32, &d), WEFT_OK);
    for (uint32_t j = 0; j < n; j++)
        CHECK_INT(r[rd[j]], (int)(j * 100 + me));
    CHECK_ERR(weft_alltoallv(c, s, NULL, sd, r, rc, rd, WEFT_INT32, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "comm: alltoallv needs counts and displacements");
    free(sc);
}

typedef struct suite {
    bool large;
} suite;

static int body(weft_comm *c, void *arg)
{
    const suite *su = arg;
    for (int t = 0; t < WEFT__DTYPE_COUNT; t++)
        check(c, (weft_dtype)t, 1, false);
    check(c, WEFT_INT32, 0, false); /* only the own block has data */
    check(c, WEFT_DOUBLE, 5, true);
    check(c, WEFT_UINT8, 3, true);
    check(c, WEFT_HALF, 1001, false);
    if (su->large)
        check(c, WEFT_FLOAT, 1u << 16, false); /* up to 768 KiB per block */
    if (weft_comm_size(c) > 1)
        check_mismatch(c);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

static void run(uint32_t n, weft_transport_choice t, bool large, const char *what)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 8000;
    suite su = {large};
    weft__test_comm_ranks_ok(n, &cfg, body, &su, 30000, what);
}

int main(void)
{
    run(1, WEFT_TRANSPORT_SHM, false, "shm");
    run(2, WEFT_TRANSPORT_SHM, true, "shm");
    run(5, WEFT_TRANSPORT_SHM, false, "shm");
    run(2, WEFT_TRANSPORT_TCP, true, "tcp");
    run(4, WEFT_TRANSPORT_TCP, false, "tcp");
    /* The counts agreed the way of more than 128 ranks. */
    weft__alltoallv_all_max = 0;
    run(3, WEFT_TRANSPORT_SHM, false, "shm, two-step agreement");
    run(4, WEFT_TRANSPORT_TCP, false, "tcp, two-step agreement");
    return weft_test_done();
}
