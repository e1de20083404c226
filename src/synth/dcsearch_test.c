/* The direct-connect search (dcsearch.c): the family it builds for small
 * N and d, that every candidate's figures are those of weft_bfb_analyze on
 * the fabric its spec builds, that the Pareto marks are exactly the
 * undominated points, the best fabric per size, and its errors. */
#include <string.h>

#include "base/testing.h"
#include "weft/synth.h"

static bool has(const weft_dc_search *s, const char *spec)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->cand[i].spec, spec) == 0)
            return true;
    return false;
}

static void test_family(void)
{
    weft_dc_search s;
    weft_diag d;
    CHECK_ERR(weft_dc_search_run(16, 2, WEFT_COLL_ALLREDUCE, weft_rat_int(100), &s, &d), WEFT_OK);
    /* 14 generated; the line graphs of genkautz:8,2, debruijn:2,3 and of
     * the line graphs of genkautz:4,2 and debruijn:2,2 lose the ranks of
     * the dropped self-loops (14, 14, 10 and 10 ranks). */
    CHECK_INT(s.considered, 14);
    CHECK_INT(s.count, 10);
    CHECK(!has(&s, "line(genkautz:8,2,bw=100)"));
    /* A base, a line graph, a line graph of a line graph, an expansion and
     * a product. */
    CHECK(has(&s, "genkautz:16,2,bw=100"));
    CHECK(has(&s, "debruijn:2,4,bw=100"));
    CHECK(has(&s, "line(circulant:8,1,bw=100)"));
    CHECK(has(&s, "line(line(bipartite:4,bw=100))"));
    CHECK(has(&s, "expand(ring:8,bw=100;2)"));
    CHECK(has(&s, "product(ring:4,bw=100;ring:4,bw=100)"));
    for (size_t i = 0; i < s.count; i++) {
        const weft_dc_candidate *c = &s.cand[i];
        weft_topo *t = NULL;
        weft_bfb b;
        CHECK_ERR(weft_topo_from_spec(c->spec, NULL, &t, &d), WEFT_OK);
        if (!t)
            continue;
        CHECK_INT(weft_topo_num_ranks(t), 16);
        CHECK_ERR(weft_bfb_analyze(t, WEFT_COLL_ALLREDUCE, &b, &d), WEFT_OK);
        CHECK_INT(b.steps, c->steps);
        CHECK(weft_rat_eq(b.algbw_stepwise, c->algbw_stepwise));
        weft_rat tb;
        weft_rat_div(weft_rat_int(100), b.algbw_stepwise, &tb);
        CHECK(weft_rat_eq(tb, c->tb));
        weft_topo_free(t);
        /* Pareto: marked exactly when no other point is at most as large in
         * both and smaller in one (equal points all stay). */
        bool dominated = false;
        for (size_t k = 0; k < s.count; k++) {
            int cb = weft_rat_cmp(s.cand[k].tb, c->tb);
            if ((s.cand[k].steps <= c->steps && cb <= 0 && (s.cand[k].steps < c->steps || cb < 0)))
                dominated = true;
        }
        CHECK(c->pareto == !dominated);
    }
    /* Small messages want few steps, large ones the least T_B: the 4 x 4
     * torus of directed rings (T_B 15/16, the bound's). */
    size_t b1 = weft_dc_search_best(&s, 1024, 1e-6), b2 = weft_dc_search_best(&s, 1 << 30, 1e-6);
    CHECK_INT(s.cand[b1].steps, 8);
    CHECK_STR(s.cand[b2].spec, "product(ring:4,bw=100;ring:4,bw=100)");
    weft_rat r;
    weft_rat_make(15, 16, &r);
    CHECK(weft_rat_eq(s.cand[b2].tb, r));
    weft_dc_search_fini(&s);
}

static void test_errors(void)
{
    weft_dc_search s;
    weft_diag d;
    CHECK_ERR(weft_dc_search_run(16, 16, WEFT_COLL_ALLREDUCE, weft_rat_int(100), &s, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "degree 16 cannot be reached with 16 ranks (1 <= d < N)");
    CHECK_ERR(weft_dc_search_run(1, 1, WEFT_COLL_ALLREDUCE, weft_rat_int(100), &s, &d),
              WEFT_EINVAL);
    CHECK_STR(d.msg, "the search takes 2 to 8192 ranks, not 1");
    CHECK_ERR(weft_dc_search_run(16, 2, WEFT_COLL_ALLTOALL, weft_rat_int(100), &s, &d),
              WEFT_EUNSUPPORTED);
    /* Degree 1 on 6 ranks: only the directed ring. */
    CHECK_ERR(weft_dc_search_run(6, 1, WEFT_COLL_ALLGATHER, weft_rat_int(100), &s, &d), WEFT_OK);
    CHECK_INT(s.count, 1);
    CHECK_STR(s.cand[0].spec, "ring:6,bw=100");
    CHECK_INT(s.cand[0].steps, 5);
    weft_dc_search_fini(&s);
}

/* Fabrics at the same (T_L, T_B) tie and all stay on the frontier: at 64
 * ranks of degree 4 the de Bruijn graph debruijn:4,3 and the generalized
 * Kautz graph genkautz:64,4 both take 6 steps and T_B 21/32 (before, only
 * the first generated stayed and debruijn:4,3 was dropped). */
static void test_ties(void)
{
    weft_dc_search s;
    weft_diag d;
    CHECK_ERR(weft_dc_search_run(64, 4, WEFT_COLL_ALLREDUCE, weft_rat_int(100), &s, &d), WEFT_OK);
    weft_rat tb;
    weft_rat_make(21, 32, &tb);
    size_t on = 0, at = 0;
    for (size_t i = 0; i < s.count; i++) {
        const weft_dc_candidate *c = &s.cand[i];
        on += c->pareto;
        if (c->steps == 6 && weft_rat_eq(c->tb, tb)) {
            at++;
            CHECK(c->pareto);
            CHECK(strcmp(c->spec, "genkautz:64,4,bw=100") == 0 ||
                  strcmp(c->spec, "debruijn:4,3,bw=100") == 0);
        }
    }
    CHECK_INT(at, 2);
    CHECK_INT(on, 5);
    weft_dc_search_fini(&s);
}

int main(void)
{
    test_family();
    test_ties();
    test_errors();
    return weft_test_done();
}
