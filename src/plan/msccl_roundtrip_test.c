/* The MSCCL round trip over the whole test matrix: every classic algorithm
 * (weft/synth.h) for every collective it builds, on the test
 * matrix (ring:8, switch:16, torus:4x4, a100:2, dgx1, ring:7, switch:13)
 * and biring:8, is exported under the executor profile, imported, verified
 * and executed on real data against the reference. (The test reaches up into synth for its inputs;
 * the MSCCL code itself depends on the plan API only.) */
#include <stdlib.h>

#include "base/testing.h"
#include "weft/plan.h"
#include "weft/synth.h"
#include "weft/topo.h"

static bool exec_matches(const weft_plan *p)
{
    weft_exec_opts o;
    weft_exec_opts_init(&o);
    o.elems_per_chunk = 2;
    weft_exec_result *got = NULL, *want = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    bool same = weft_plan_exec(p, &o, &got, &d) == WEFT_OK &&
                weft_exec_reference(p, o.elems_per_chunk, &want) == WEFT_OK &&
                weft_exec_compare(got, want, &d);
    if (!same)
        fprintf(stderr, "exec: %s\n", d.msg);
    weft_exec_result_free(got);
    weft_exec_result_free(want);
    return same;
}

/* Returns true when the plan round-trips. */
static bool round_trip(const char *what, const weft_plan *p)
{
    weft_diag d;
    weft_diag_clear(&d);
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f)
        return false;
    weft_err e = weft_plan_write_msccl(p, NULL, f, &d);
    fclose(f);
    bool ok = false;
    if (e) {
        fprintf(stderr, "%s: export: %s\n", what, d.msg);
        goto free_xml;
    }
    weft_plan *q = NULL;
    if ((e = weft_plan_msccl_parse(xml, len, what, &q, &d))) {
        fprintf(stderr, "%s: import: %s\n", what, d.msg);
        goto free_xml;
    }
    if ((e = weft_plan_verify(q, NULL, &d)))
        fprintf(stderr, "%s: verify: %s\n", what, d.msg);
    ok = e == WEFT_OK && exec_matches(q);
    const weft_plan_info *a = weft_plan_get_info(p), *b = weft_plan_get_info(q);
    ok = ok && a->coll == b->coll && a->nranks == b->nranks && a->chunks == b->chunks &&
         a->root.v == b->root.v && a->inplace == b->inplace;
    weft_plan_free(q);
free_xml:
    free(xml);
    return ok;
}

int main(void)
{
    /* The test matrix, odd sizes included. */
    static const char *const specs[] = {"a100:2",    "biring:8", "ring:8", "switch:16",
                                        "torus:4x4", "dgx1",     "ring:7", "switch:13"};
    size_t n = weft_classic_count();
    CHECK(n >= 10);
    int tried = 0;
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        weft_topo *t = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_topo_preset(specs[s], &t, &d), WEFT_OK);
        if (!t)
            continue;
        for (size_t i = 0; i < n; i++) {
            const weft_classic_info *info = weft_classic_get(i);
            /* A parameterized name ("rings:K") is built with K = 2. */
            char algo[64];
            snprintf(algo, sizeof algo, "%s", info->name);
            char *param = strchr(algo, ':');
            if (param)
                snprintf(param, sizeof algo - (size_t)(param - algo), ":2");
            for (int c = 0; c < WEFT__COLL_COUNT; c++) {
                if (!(info->colls & (1u << c)))
                    continue;
                weft_rank root = {c == WEFT_COLL_BROADCAST || c == WEFT_COLL_REDUCE
                                      ? 3u % weft_topo_num_ranks(t)
                                      : 0u};
                weft_plan *p = NULL;
                weft_err e = weft_synth_classic(t, algo, (weft_coll)c, root, &p, &d);
                if (e == WEFT_ETOPO)
                    continue; /* the fabric does not fit it (hier on a ring) */
                char what[128];
                snprintf(what, sizeof what, "%s %s on %s", algo, weft_coll_name((weft_coll)c),
                         specs[s]);
                if (e) {
                    fprintf(stderr, "%s: synth: %s\n", what, d.msg);
                    CHECK_ERR(e, WEFT_OK);
                    continue;
                }
                bool ok = round_trip(what, p);
                if (!ok)
                    fprintf(stderr, "%s: round trip failed\n", what);
                CHECK(ok);
                tried++;
                weft_plan_free(p);
            }
        }
        weft_topo_free(t);
    }
    printf("%d algorithm x collective x fabric cases round-tripped\n", tried);
    CHECK(tried >= 50);
    return weft_test_done();
}
