/* weft_plan_round_shares: dgx1's optimal all-to-all (ops split 2/3 + 1/3)
 * with one op's shares made 687/1031 + 344/1031, which no refinement up to
 * 1,024 cuts exactly (1031 is prime), is rounded to the least K that keeps
 * 99.9 % of its limit (K = 1 and 2 lose 11 %), the loss exact (here a gain:
 * thirds are the flow's own split); the rounded plan verifies, relays and
 * round-trips through MSCCL XML. The exact plan rounds to itself (K = 3, no op
 * changed, no loss); a K that must divide 2 cannot keep 99.9 % (the exact
 * message with the best K and its loss); a plan without split ops is
 * refused. (The test reaches up into synth for the plan.) */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "plan/testexec.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"

static void rat_str(weft_rat r, char *out, size_t size)
{
    weft_rat_format_exact(r, out, size);
}

/* Op id's paths with new shares (as many as it has). */
static void reshare(weft_plan *p, uint32_t id, const weft_rat *shares)
{
    weft_plan *orig = NULL;
    CHECK_ERR(weft_plan_copy(p, &orig), WEFT_OK);
    if (!orig)
        return;
    uint32_t np = weft_plan_op_num_paths(orig, id);
    weft_plan_clear_route(p, id);
    for (uint32_t k = 0; k < np; k++) {
        const char *names[16];
        uint32_t n = weft_plan_path_len(orig, id, k);
        CHECK(n <= 16);
        for (uint32_t i = 0; i < n && i < 16; i++)
            names[i] = weft_plan_path_node(orig, id, k, i);
        CHECK_ERR(weft_plan_add_path(p, id, shares[k], names, n), WEFT_OK);
    }
    weft_plan_free(orig);
}

/* Export, import, verify on t, execute. */
static void msccl_round_trip(const weft_plan *q, const weft_topo *t)
{
    weft_diag d;
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    weft_err e = weft_plan_write_msccl(q, NULL, f, &d);
    fclose(f);
    if (e)
        fprintf(stderr, "export: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    weft_plan *back = NULL;
    if (!e && (e = weft_plan_msccl_parse(xml, len, "rounded", &back, &d)))
        fprintf(stderr, "import: %s\n", d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (back) {
        CHECK_ERR(weft_plan_verify(back, t, &d), WEFT_OK);
        CHECK(weft__test_exec_seeds(back, 2));
    }
    weft_plan_free(back);
    free(xml);
}

int main(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset("dgx1", &t, &d), WEFT_OK);
    weft_plan *p = NULL;
    weft_a2a_bound b;
    CHECK_ERR(weft_synth_a2a_optimal(t, &p, &b, &d), WEFT_OK);
    if (!p || !t)
        return weft_test_done();
    weft_a2a_bound_fini(&b);
    char s[64];

    /* Exact shares (thirds): K = 3 rounds nothing. */
    weft_plan *q = NULL;
    weft_share_rounding rs;
    CHECK_ERR(weft_plan_round_shares(p, t, 0, &q, &rs, &d), WEFT_OK);
    CHECK_INT(rs.k, 3);
    CHECK_INT(rs.ops, 0);
    CHECK(weft_rat_is_zero(rs.loss));
    rat_str(rs.limit, s, sizeof s);
    CHECK_STR(s, "75");
    weft_plan_free(q);

    /* Halves at most: every K (1 or 2) loses more than 0.1 %. */
    q = NULL;
    CHECK_ERR(weft_plan_round_shares(p, t, 2, &q, &rs, &d), WEFT_ELIMIT);
    CHECK(q == NULL);
    CHECK_STR(d.msg, "rounding the route shares to multiples of 1/K keeps less than 99.9% of "
                     "the plan's limit for every K up to 1024 that divides the piece: the best, "
                     "K = 1, loses 11.111%");

    /* The first split op carries 1/1031 on its first path. */
    uint32_t id = 0;
    while (id < weft_plan_num_ops(p) && weft_plan_op_num_paths(p, id) != 2)
        id++;
    CHECK(id < weft_plan_num_ops(p));
    weft_rat odd[2] = {{687, 1031}, {344, 1031}};
    reshare(p, id, odd);
    CHECK_ERR(weft_plan_verify(p, t, &d), WEFT_OK);
    weft_plan *relayed = NULL;
    uint32_t refine = 0;
    CHECK_ERR(weft_plan_relay_routes(p, t, &relayed, &refine, &d), WEFT_ELIMIT);
    CHECK_CONTAINS(d.msg, "more than 1024 equal pieces");
    CHECK_CONTAINS(d.msg, "carries 687/1031");

    q = NULL;
    CHECK_ERR(weft_plan_round_shares(p, t, 0, &q, &rs, &d), WEFT_OK);
    CHECK(q != NULL);
    if (q) {
        CHECK_INT(rs.k, 3);
        CHECK_INT(rs.ops, 1); /* back to 2/3 + 1/3; the other ops were thirds */
        CHECK_INT(weft_plan_op_num_paths(q, id), 2);
        rat_str(weft_plan_path_share(q, id, 1), s, sizeof s);
        CHECK_STR(s, "1/3");
        rat_str(rs.limit, s, sizeof s);
        CHECK_STR(s, "618600/8249"); /* 74.991: the odd shares load one link more */
        rat_str(rs.rounded_limit, s, sizeof s);
        CHECK_STR(s, "75");
        rat_str(rs.loss, s, sizeof s);
        CHECK_STR(s, "-1/8248"); /* a gain: rounding went back to the flow */
        weft_plan_cost c;
        CHECK_ERR(weft_plan_cost_get(q, t, &c, &d), WEFT_OK);
        CHECK(weft_rat_eq(c.algbw, rs.rounded_limit));
        CHECK_ERR(weft_plan_verify(q, t, &d), WEFT_OK);
        CHECK_ERR(weft_plan_relay_routes(q, t, &relayed, &refine, &d), WEFT_OK);
        CHECK_INT(refine, 3);
        if (relayed) {
            CHECK_ERR(weft_plan_verify(relayed, t, &d), WEFT_OK);
            msccl_round_trip(relayed, t);
        }
        weft_plan_free(relayed);
        weft_plan_free(q);
    }

    /* Nothing split: nothing to round. */
    weft_plan *direct = NULL;
    CHECK_ERR(weft_synth_classic(t, "direct", WEFT_COLL_ALLTOALL, (weft_rank){0}, &direct, &d),
              WEFT_OK);
    if (direct) {
        q = NULL;
        CHECK_ERR(weft_plan_round_shares(direct, t, 0, &q, &rs, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, "no op of the plan is split over several paths: no share to round");
        weft_plan_free(direct);
    }
    weft_plan_free(p);
    weft_topo_free(t);
    return weft_test_done();
}
