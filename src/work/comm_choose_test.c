/* weft step --coll-algo best (weft/work.h, WEFT_WORK_COLL_BEST): on
 * two_hosts.topo (two hosts of two ranks joined by one 1 GB/s link each
 * way) the groups {0, 1} and {2, 3} each choose on their own fabric what
 * weft_choose ranks first there; alone each takes that time, and the two
 * together share the link between the hosts, so its bytes take twice as
 * long;
 * one group of every rank takes weft_choose's time on the fabric itself,
 * to the bit; and an all-to-all of a traffic matrix (the DLRM step's
 * embedding exchange) takes the fastest of its alltoallv plans, to the
 * bit what weft_choose (`weft sim --compare --traffic`) ranks first, never
 * slower than the direct copies NCCL's all-to-all moves, and never faster
 * than the link between the hosts allows. */
#include <string.h>

#include "base/testing.h"
#include "weft/choose.h"
#include "work/work_internal.h"

static weft_topo *load(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_load_file(WEFT_SOURCE_DIR "/tests/fixtures/chakra/two_hosts.topo", &t, &d),
              WEFT_OK);
    return t;
}

/* weft_choose's fastest for coll of size on the fabric of ranks g. */
static double best_on(const weft_topo *t, const uint32_t *g, uint32_t n, weft_coll coll,
                      uint64_t size, char *name)
{
    weft_topo *sub = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_subset(t, g, n, &sub, &d), WEFT_OK);
    weft_choose_opts o;
    weft_choose_opts_init(&o, sub);
    o.innet = true;
    o.max_ops = 2097152u;
    weft_ranking r;
    CHECK_ERR(weft_choose(sub, coll, &size, 1, &o, &r, &d), WEFT_OK);
    const weft_choice *b = weft_ranking_best(&r, 0);
    double s = b ? b->res[0].time_s : -1;
    strcpy(name, b ? b->name : "");
    weft_ranking_fini(&r);
    weft_topo_free(sub);
    return s;
}

/* r0 and r2 on host A, r1 and r3 on host B: 3.5 MB cross from A to B and
 * 4 MB from B to A over the 1 GB/s link each way, so no schedule takes
 * under 4 ms; 5 MB stay inside host A. */
static void test_matrix(const weft_topo *t)
{
    weft_diag d;
    weft_traffic m;
    CHECK_ERR(weft_traffic_new(4, &m, &d), WEFT_OK);
    m.bytes[0 * 4 + 1] = 1000000;
    m.bytes[0 * 4 + 3] = 2000000;
    m.bytes[2 * 4 + 1] = 500000;
    m.bytes[1 * 4 + 0] = 4000000;
    m.bytes[0 * 4 + 2] = 5000000;
    uint64_t total = 12500000, size = total / 4;
    weft_work_ctx *plain = NULL, *best = NULL;
    CHECK_ERR(weft_work_ctx_new(t, NULL, NULL, &plain), WEFT_OK);
    CHECK_ERR(weft_work_ctx_new(t, NULL, NULL, &best), WEFT_OK);
    weft_work_ctx_set_coll_algo(best, WEFT_WORK_COLL_BEST);
    double direct = 0, chosen = 0;
    CHECK_ERR(weft__work_traffic_s(plain, &m, &direct, &d), WEFT_OK);
    CHECK_ERR(weft__work_traffic_s(best, &m, &chosen, &d), WEFT_OK);
    size_t n;
    weft_work_choices(plain, &n);
    CHECK_INT(n, 0);
    weft_choose_opts o;
    weft_choose_opts_init(&o, t);
    o.matrix = &m;
    o.max_ops = 2097152u;
    weft_ranking r;
    CHECK_ERR(weft_choose(t, WEFT_COLL_ALLTOALL, &size, 1, &o, &r, &d), WEFT_OK);
    const weft_choice *b = weft_ranking_best(&r, 0);
    CHECK(b != NULL);
    CHECK(b && chosen == b->res[0].time_s);
    const weft_work_choice *ch = weft_work_choices(best, &n);
    CHECK_INT(n, 1);
    CHECK(n == 1 && ch[0].matrix && ch[0].coll == WEFT_COLL_ALLTOALL && ch[0].groups == 1);
    CHECK(n == 1 && ch[0].bytes == size && ch[0].ranks == 4 && ch[0].time_s == chosen);
    CHECK(n == 1 && b && strcmp(ch[0].algo, b->label[0]) == 0);
    CHECK(chosen <= direct);
    CHECK(chosen >= 4e-3);
    CHECK_REL(direct, 4e-3, 0.02); /* the link's 4 ms and a few latencies */
    /* A named schedule: its plan of the matrix at the matrix's size,
     * whatever the coll_algo; the transpose simulated too. */
    for (int mode = 0; mode < 2; mode++) {
        weft_work_ctx *named = NULL;
        CHECK_ERR(weft_work_ctx_new(t, NULL, NULL, &named), WEFT_OK);
        weft_work_ctx_set_coll_algo(named, mode ? WEFT_WORK_COLL_BEST : WEFT_WORK_COLL_NCCL);
        CHECK_ERR(weft_work_ctx_set_a2a_algo(named, "pairwise", &d), WEFT_OK);
        weft_plan *p = NULL;
        weft_sim_result want;
        CHECK_ERR(weft_choose_build_traffic(t, "pairwise", &m, 0, NULL, &p, &d), WEFT_OK);
        CHECK_ERR(weft_sim_plan(t, p, size, &named->opts, &want, &d), WEFT_OK);
        weft_plan_free(p);
        double got = 0;
        CHECK_ERR(weft__work_traffic_s(named, &m, &got, &d), WEFT_OK);
        CHECK(got == want.time_s);
        ch = weft_work_choices(named, &n);
        CHECK(n == 1 && ch[0].matrix && strcmp(ch[0].algo, "pairwise") == 0 && ch[0].time_s == got);
        weft_work_ctx_free(named);
    }
    weft_work_ctx *bad = NULL;
    CHECK_ERR(weft_work_ctx_new(t, NULL, NULL, &bad), WEFT_OK);
    CHECK_ERR(weft_work_ctx_set_a2a_algo(bad, "ring", &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "'ring' builds no all-to-all of a traffic matrix (the schedules that do: "
                     "bruck, direct, pairwise, hier, flash, flash:K, optimal)");
    CHECK_ERR(weft_work_ctx_set_a2a_algo(bad, "bogus", &d), WEFT_EINVAL);
    CHECK_ERR(weft_work_ctx_set_a2a_algo(bad, "flash:3", &d), WEFT_OK);
    CHECK_ERR(weft_work_ctx_set_a2a_algo(bad, NULL, &d), WEFT_OK);
    double again = 0;
    CHECK_ERR(weft__work_traffic_s(bad, &m, &again, &d), WEFT_OK); /* NULL: direct again */
    CHECK(again == direct);
    weft_work_ctx_free(bad);
    weft_ranking_fini(&r);
    weft_work_ctx_free(plain);
    weft_work_ctx_free(best);
    weft_traffic_free(&m);
}

int main(void)
{
    weft_topo *t = load();
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, NULL, NULL, &c), WEFT_OK);
    weft_work_ctx_set_coll_algo(c, WEFT_WORK_COLL_BEST);
    weft_diag d;
    double together = 0, all = 0;
    char name[32];
    uint32_t pairs[] = {0, 1, 2, 3}; /* r0-r1 and r2-r3: both cross the link */
    double alone = best_on(t, pairs, 2, WEFT_COLL_ALLREDUCE, 1000000, name);
    CHECK(alone > 0);
    CHECK_ERR(
        weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, pairs, 4, 2, 1000000, &together, &d),
        WEFT_OK);
    size_t n;
    const weft_work_choice *ch = weft_work_choices(c, &n);
    CHECK_INT(n, 1);
    CHECK_INT(ch[0].groups, 2);
    CHECK_INT(ch[0].ranks, 2);
    CHECK(ch[0].together);
    CHECK(strncmp(ch[0].algo, name, strlen(name)) == 0); /* "rings:auto (8)" */
    CHECK(ch[0].time_s == together);
    /* Each group alone sends 1e6 B across the 1 GB/s link each way (1 ms)
     * plus latency; together the link carries both groups' bytes: 1 ms
     * more. */
    CHECK_REL(alone, 1.045e-3, 1e-9);
    CHECK_REL(together - alone, 1e-3, 1e-9);

    uint32_t every[] = {0, 1, 2, 3};
    double want = best_on(t, every, 4, WEFT_COLL_ALLREDUCE, 1000000, name);
    CHECK_ERR(weft__work_groups_s(c, WEFT_COLL_ALLREDUCE, false, every, 4, 4, 1000000, &all, &d),
              WEFT_OK);
    CHECK(all == want);
    ch = weft_work_choices(c, &n);
    CHECK_INT(n, 2);
    CHECK(!ch[1].together);
    CHECK(strncmp(ch[1].algo, name, strlen(name)) == 0);
    weft_work_ctx_free(c);
    test_matrix(t);
    weft_topo_free(t);
    return weft_test_done();
}
