/* The verifier's contribution sets: sorted lists of disjoint rank intervals
 * in one arena, immutable and shared by reference, so that a copy costs
 * O(1) and a reduce O(intervals). A union reports a rank present on both
 * sides (a contribution reduced twice). See verify_internal.h. */
#include <string.h>

#include "base/alloc.h"
#include "plan/verify_internal.h"

#define NONE UINT32_MAX

weft_err weft__verify_set_new(verifier *v, const uint32_t *iv, size_t n, uint32_t *out)
{
    if (v->nsets >= NONE - 1)
        return weft_diag_set(v->d, WEFT_ELIMIT, "too many contribution sets");
    if (weft__grow((void **)&v->iv, &v->iv_cap, v->niv + 2 * n, sizeof *v->iv) ||
        weft__grow((void **)&v->set_start, &v->set_cap, v->nsets + 1, sizeof *v->set_start) ||
        weft__grow((void **)&v->set_len, &v->set_len_cap, v->nsets + 1, sizeof *v->set_len))
        return weft__verify_oom(v);
    memcpy(v->iv + v->niv, iv, 2 * n * sizeof *iv);
    v->set_start[v->nsets] = v->niv;
    v->set_len[v->nsets] = (uint32_t)n;
    v->niv += 2 * n;
    *out = (uint32_t)v->nsets++;
    return WEFT_OK;
}

/* Union of two disjoint sets into a new set; when they overlap, *dup is the
 * smallest common rank and no set is made. */
weft_err weft__verify_set_union(verifier *v, uint32_t a, uint32_t b, uint32_t *out, uint32_t *dup)
{
    size_t na = v->set_len[a], nb = v->set_len[b];
    /* Room for the result first: iv may move. */
    if (weft__grow((void **)&v->iv, &v->iv_cap, v->niv + 2 * (na + nb), sizeof *v->iv))
        return weft__verify_oom(v);
    const uint32_t *x = v->iv + v->set_start[a], *y = v->iv + v->set_start[b];
    uint32_t *r = v->iv + v->niv;
    size_t i = 0, j = 0, n = 0;
    *dup = NONE;
    while (i < na || j < nb) {
        const uint32_t *take;
        if (j >= nb || (i < na && x[2 * i] < y[2 * j]))
            take = &x[2 * i++];
        else
            take = &y[2 * j++];
        if (n && take[0] < r[2 * n - 1]) {
            *dup = take[0];
            return WEFT_OK;
        }
        if (n && take[0] == r[2 * n - 1])
            r[2 * n - 1] = take[1];
        else {
            r[2 * n] = take[0];
            r[2 * n + 1] = take[1];
            n++;
        }
    }
    /* r already sits at the end of the arena; register it in place. */
    if (v->nsets >= NONE - 1)
        return weft_diag_set(v->d, WEFT_ELIMIT, "too many contribution sets");
    if (weft__grow((void **)&v->set_start, &v->set_cap, v->nsets + 1, sizeof *v->set_start) ||
        weft__grow((void **)&v->set_len, &v->set_len_cap, v->nsets + 1, sizeof *v->set_len))
        return weft__verify_oom(v);
    v->set_start[v->nsets] = v->niv;
    v->set_len[v->nsets] = (uint32_t)n;
    v->niv += 2 * n;
    *out = (uint32_t)v->nsets++;
    return WEFT_OK;
}
