/* weft_plan_relay_routes: the optimal all-to-all plans (one op per pair,
 * routed through relay GPUs and, on dgx1 and torus:4x4, over several paths
 * with shares of 1/3 or 1/4) made into rank-to-rank hops. The relayed plan
 * verifies on its fabric with exactly the original's limit; its MSCCL
 * export imports back (the importer enforces MSCCL's structure: one send
 * and one receive peer per threadblock, matched messages, existing
 * dependencies, slot ranges inside i_chunks/o_chunks/s_chunks), verifies,
 * executes on real data like the reference, and keeps the same limit on
 * the fabric, where the runtime's peer-to-peer hops take the links of the
 * flow. Plus the errors. (The test reaches up into synth for the plans.) */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"

static void limit_of(const weft_plan *p, const weft_topo *t, char *out, size_t size)
{
    weft_plan_cost c;
    weft_diag d;
    snprintf(out, size, "?");
    if (weft_plan_cost_get(p, t, &c, &d) == WEFT_OK)
        weft_rat_format_exact(c.algbw, out, size);
    else
        fprintf(stderr, "cost: %s\n", d.msg);
}

static int count_str(const char *s, const char *what)
{
    int n = 0;
    for (const char *at = strstr(s, what); at; at = strstr(at + 1, what))
        n++;
    return n;
}

/* The optimal all-to-all of spec, relayed: refine and the limit as
 * expected, ops = pairs' pieces and hops (want_ops), and the MSCCL round
 * trip (want_rcs fused relay steps). */
static void check(const char *spec, const char *want_limit, uint32_t want_refine, uint32_t want_ops,
                  int want_rcs)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset(spec, &t, &d), WEFT_OK);
    if (!t)
        return;
    weft_plan *p = NULL, *q = NULL, *back = NULL;
    weft_a2a_bound b;
    CHECK_ERR(weft_synth_a2a_optimal(t, &p, &b, &d), WEFT_OK);
    if (!p)
        goto free_topo;
    weft_a2a_bound_fini(&b);
    char lim[64];
    limit_of(p, t, lim, sizeof lim);
    CHECK_STR(lim, want_limit);
    uint32_t refine = 0;
    weft_err e = weft_plan_relay_routes(p, t, &q, &refine, &d);
    if (e)
        fprintf(stderr, "%s: relay: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    CHECK(q != NULL);
    if (!q)
        goto free_plans;
    CHECK_INT(refine, want_refine);
    CHECK_INT(weft_plan_get_info(q)->chunks, want_refine);
    CHECK_INT(weft_plan_num_ops(q), want_ops);
    if ((e = weft_plan_verify(q, t, &d)))
        fprintf(stderr, "%s: verify: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    limit_of(q, t, lim, sizeof lim);
    CHECK_STR(lim, want_limit);
    CHECK_ERR(weft_plan_exec_check(q, NULL, &d), WEFT_OK);

    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    CHECK(f != NULL);
    if (!f)
        goto free_plans;
    e = weft_plan_write_msccl(q, NULL, f, &d);
    fclose(f);
    if (e)
        fprintf(stderr, "%s: export: %s\n", spec, d.msg);
    CHECK_ERR(e, WEFT_OK);
    if (!e) {
        CHECK(strstr(xml, "coll=\"alltoall\"") != NULL);
        CHECK_INT(count_str(xml, "type=\"rcs\""), want_rcs);
        e = weft_plan_msccl_parse(xml, len, spec, &back, &d);
        if (e)
            fprintf(stderr, "%s: import: %s\n", spec, d.msg);
        CHECK_ERR(e, WEFT_OK);
    }
    free(xml);
    if (back) {
        CHECK_INT(weft_plan_get_info(back)->chunks, want_refine);
        if ((e = weft_plan_verify(back, t, &d)))
            fprintf(stderr, "%s: verify the import: %s\n", spec, d.msg);
        CHECK_ERR(e, WEFT_OK);
        CHECK_ERR(weft_plan_exec_check(back, NULL, &d), WEFT_OK);
        limit_of(back, t, lim, sizeof lim);
        CHECK_STR(lim, want_limit);
    }
free_plans:
    weft_plan_free(back);
    weft_plan_free(q);
    weft_plan_free(p);
free_topo:
    weft_topo_free(t);
}

/* A plan without several paths or relays comes back NULL: export it as it
 * is. */
static void test_nothing_to_relay(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset("switch:4", &t, &d), WEFT_OK);
    weft_plan *p = NULL, *q = (weft_plan *)&d;
    weft_a2a_bound b;
    CHECK_ERR(weft_synth_a2a_optimal(t, &p, &b, &d), WEFT_OK);
    weft_a2a_bound_fini(&b);
    uint32_t refine = 7;
    CHECK_ERR(weft_plan_relay_routes(p, t, &q, &refine, &d), WEFT_OK);
    CHECK(q == NULL);
    CHECK_INT(refine, 1);
    weft_plan_free(p);
    weft_topo_free(t);
}

static weft_plan *parse(const char *text)
{
    weft_plan *p = NULL;
    weft_diag d;
    if (weft_plan_parse(text, strlen(text), "t.plan", &p, &d))
        fprintf(stderr, "parse: %s\n", d.msg);
    return p;
}

/* By hand on ring:4 (ranks r0..r3 as nodes 0..3): rank 0's block for rank 2
 * goes 1/3 through rank 1 and 2/3 through rank 3, and op 1 (rank 2 on to
 * rank 3) waits for it. Chunks are cut in 3; the first path is two hops
 * through rank 1's scratch, slot 0; the second two hops through rank 3's
 * scratch, slots 0-1; op 1 waits for both last hops. */
static void test_by_hand(void)
{
    weft_topo *t = NULL;
    weft_diag d;
    CHECK_ERR(weft_topo_preset("ring:4", &t, &d), WEFT_OK);
    if (!t)
        return;
    const char *names[4];
    for (uint32_t i = 0; i < 4; i++)
        names[i] = weft_topo_node_name(t, weft_topo_rank_node(t, (weft_rank){i}));
    char text[1024];
    snprintf(text, sizeof text,
             "weft-plan 1\ncoll alltoall\nranks 4\nchunks 1\nscratch 0\n"
             "op 0 copy 0:in[2] 2:out[0] path=1/3:%s,%s,%s path=2/3:%s,%s,%s\n"
             "op 1 copy 2:out[0] 3:out[0] deps=0\n",
             names[0], names[1], names[2], names[0], names[3], names[2]);
    weft_plan *p = parse(text), *q = NULL;
    CHECK(p != NULL);
    if (!p)
        goto free_topo;
    uint32_t refine = 0;
    CHECK_ERR(weft_plan_relay_routes(p, t, &q, &refine, &d), WEFT_OK);
    CHECK_INT(refine, 3);
    CHECK(q != NULL);
    if (q) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        if (f) {
            CHECK_ERR(weft_plan_write(q, f), WEFT_OK);
            fclose(f);
            char want[1024];
            snprintf(want, sizeof want,
                     "weft-plan 1\ncoll alltoall\nranks 4\nchunks 3\nscratch 2\n"
                     "inplace yes\n"
                     "op 0 copy 0:in[6] 1:scratch[0] path=1:%s,%s\n"
                     "op 1 copy 1:scratch[0] 2:out[0] deps=0 path=1:%s,%s\n"
                     "op 2 copy 0:in[7] 3:scratch[0] n=2 path=1:%s,%s\n"
                     "op 3 copy 3:scratch[0] 2:out[1] n=2 deps=2 path=1:%s,%s\n"
                     "op 4 copy 2:out[0] 3:out[0] n=3 deps=1,3\n",
                     names[0], names[1], names[1], names[2], names[0], names[3], names[3],
                     names[2]);
            CHECK_STR(out, want);
        }
        free(out);
    }
    weft_plan_free(q);
    weft_plan_free(p);

    /* Shares that do not sum to 1, and ones that would cut a chunk into
     * more than 1,024 pieces. */
    snprintf(text, sizeof text,
             "weft-plan 1\ncoll alltoall\nranks 4\nchunks 1\n"
             "op 0 copy 0:in[2] 2:out[0] path=1/3:%s,%s,%s path=1/2:%s,%s,%s\n",
             names[0], names[1], names[2], names[0], names[3], names[2]);
    p = parse(text);
    q = NULL;
    CHECK_ERR(weft_plan_relay_routes(p, t, &q, &refine, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "op 0: the shares of its paths do not sum to 1");
    CHECK(q == NULL);
    weft_plan_free(p);
    snprintf(text, sizeof text,
             "weft-plan 1\ncoll alltoall\nranks 4\nchunks 1\n"
             "op 0 copy 0:in[2] 2:out[0] path=1/1031:%s,%s,%s path=1030/1031:%s,%s,%s\n",
             names[0], names[1], names[2], names[0], names[3], names[2]);
    p = parse(text);
    CHECK_ERR(weft_plan_relay_routes(p, t, &q, &refine, &d), WEFT_ELIMIT);
    CHECK_STR(d.msg, "the route shares would cut every chunk into more than 1024 equal pieces "
                     "(op 0 path 0 carries 1/1031)");
    weft_plan_free(p);
    snprintf(text, sizeof text,
             "weft-plan 1\ncoll alltoall\nranks 4\nchunks 1\n"
             "op 0 copy 0:in[2] 2:out[0] path=1:%s,nowhere,%s\n",
             names[0], names[2]);
    p = parse(text);
    CHECK_ERR(weft_plan_relay_routes(p, t, &q, &refine, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "op 0 path 0: unknown node 'nowhere'");
    weft_plan_free(p);
free_topo:
    weft_topo_free(t);
}

static weft_topo *oom_topo;
static weft_plan *oom_plan;

static weft_err oom_ctor(void *arg)
{
    uint32_t refine;
    return weft_plan_relay_routes(oom_plan, oom_topo, (weft_plan **)arg, &refine, NULL);
}

static void oom_dtor(void *arg)
{
    weft_plan_free(*(weft_plan **)arg);
    *(weft_plan **)arg = NULL;
}

int main(void)
{
    test_by_hand();
    test_nothing_to_relay();
    /* Ops: the N^2 of the plan plus one per relay a piece crosses, and
     * the pieces of the split pairs; rcs: relays whose receive and send
     * the exporter fused into one step (on a rank and channel one receive
     * peer pairs with one send peer; the rest are r then s). */
    check("a100:2", "50", 1, 320, 32); /* rank 0's paths mapped to every rank (docs/bound.md) */
    check("dgx1", "75", 3, 117, 23);
    check("torus:4x4", "200", 4, 631, 124);
    weft_diag d;
    if (weft_topo_preset("dgx1", &oom_topo, &d) == WEFT_OK) {
        weft_a2a_bound b;
        if (weft_synth_a2a_optimal(oom_topo, &oom_plan, &b, &d) == WEFT_OK) {
            weft_a2a_bound_fini(&b);
            weft_plan *q = NULL;
            CHECK(weft_test_oom_sweep("relay", oom_ctor, oom_dtor, &q) > 0);
            weft_plan_free(oom_plan);
        }
        weft_topo_free(oom_topo);
    }
    return weft_test_done();
}
