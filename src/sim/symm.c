/* Colour refinement of transfers and links. See symm.h. */
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "sim/symm.h"

/* Numbers signatures by first occurrence: out[i] = index of sig[i] among
 * the distinct values in order of appearance. tab has room for n keys
 * (reserved), so nothing is allocated here. Returns the number of distinct
 * values. */
static uint32_t renumber(const uint64_t *sig, uint32_t n, weft__map64 *tab, uint32_t *out)
{
    weft__map64_clear(tab);
    for (uint32_t i = 0; i < n; i++)
        (void)weft__map64_get_or_put(tab, sig[i], (uint32_t)tab->n, &out[i], NULL);
    return (uint32_t)tab->n;
}

void sim_classes_fini(sim_classes *c)
{
    weft__free(c->fcls);
    weft__free(c->lcls);
    weft__free(c->fcount);
    weft__free(c->lcount);
    weft__free(c->frep);
    weft__free(c->lrep);
    memset(c, 0, sizeof *c);
}

/* Counts and first members of each class. */
static weft_err summarise(const uint32_t *cls, uint32_t n, uint32_t ncls, uint32_t **count,
                          uint32_t **rep)
{
    *count = weft__calloc(ncls ? ncls : 1, sizeof **count);
    *rep = weft__malloc((ncls ? ncls : 1) * sizeof **rep);
    if (!*count || !*rep)
        return WEFT_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (cls[i] == SIM_NONE)
            continue;
        if (!(*count)[cls[i]]++)
            (*rep)[cls[i]] = i;
    }
    return WEFT_OK;
}

weft_err sim_classes_compute(const sim_xfer_set *x, bool refine, uint32_t max_classes,
                             sim_classes *out)
{
    weft_err err = WEFT_ENOMEM;
    sim_classes c;
    memset(&c, 0, sizeof c);
    uint32_t n = x->n, nlinks = x->n_links, m = 0;
    uint32_t *lidx = NULL, *used_link = NULL, *t_off = NULL, *t_xf = NULL, *fc = NULL, *lc = NULL;
    double *t_coef = NULL;
    uint64_t *fsig = NULL, *lsig = NULL;
    weft__map64 tab;
    weft__map64_init(&tab);

    /* Used links, compactly numbered, and the link -> transfers transpose. */
    lidx = weft__malloc((nlinks ? nlinks : 1) * sizeof *lidx);
    if (!lidx)
        goto free_all;
    for (uint32_t l = 0; l < nlinks; l++)
        lidx[l] = SIM_NONE;
    uint32_t entries = x->r_off[n];
    for (uint32_t k = 0; k < entries; k++)
        if (lidx[x->link[k]] == SIM_NONE)
            lidx[x->link[k]] = m++;
    used_link = weft__malloc((m ? m : 1) * sizeof *used_link);
    t_off = weft__calloc((size_t)m + 1, sizeof *t_off);
    t_xf = weft__malloc((entries ? entries : 1) * sizeof *t_xf);
    t_coef = weft__malloc((entries ? entries : 1) * sizeof *t_coef);
    fc = weft__malloc((n ? n : 1) * sizeof *fc);
    lc = weft__malloc((m ? m : 1) * sizeof *lc);
    fsig = weft__malloc((n ? n : 1) * sizeof *fsig);
    lsig = weft__malloc((m ? m : 1) * sizeof *lsig);
    c.lcls = weft__malloc((nlinks ? nlinks : 1) * sizeof *c.lcls);
    if (!used_link || !t_off || !t_xf || !t_coef || !fc || !lc || !fsig || !lsig || !c.lcls ||
        weft__map64_reserve(&tab, n > m ? n : m))
        goto free_all;
    for (uint32_t l = 0; l < nlinks; l++)
        if (lidx[l] != SIM_NONE)
            used_link[lidx[l]] = l;
    for (uint32_t k = 0; k < entries; k++)
        t_off[lidx[x->link[k]] + 1]++;
    for (uint32_t j = 0; j < m; j++)
        t_off[j + 1] += t_off[j];
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = x->r_off[i]; k < x->r_off[i + 1]; k++) {
            uint32_t j = lidx[x->link[k]];
            t_xf[t_off[j]] = i;
            t_coef[t_off[j]++] = x->coef[k];
        }
    for (uint32_t j = m; j > 0; j--)
        t_off[j] = t_off[j - 1];
    t_off[0] = 0;

    uint32_t nf, nl;
    if (!refine) {
        for (uint32_t i = 0; i < n; i++)
            fc[i] = i;
        for (uint32_t j = 0; j < m; j++)
            lc[j] = j;
        nf = n;
        nl = m;
    } else {
        for (uint32_t i = 0; i < n; i++)
            fsig[i] = sim_mix64(sim_double_bits(x->lat[i]) ^ sim_mix64(x->pred[i] == SIM_NONE));
        for (uint32_t j = 0; j < m; j++)
            lsig[j] = sim_mix64(sim_double_bits(x->cap[used_link[j]]));
        nf = renumber(fsig, n, &tab, fc);
        nl = renumber(lsig, m, &tab, lc);
        for (;;) {
            c.rounds++;
            /* Multisets are hashed by summing mixed elements, which does not
             * depend on their order. */
            for (uint32_t i = 0; i < n; i++) {
                uint64_t s = 0;
                for (uint32_t k = x->r_off[i]; k < x->r_off[i + 1]; k++)
                    s += sim_mix64(sim_mix64(lc[lidx[x->link[k]]]) ^ sim_double_bits(x->coef[k]));
                uint64_t p = x->pred[i] == SIM_NONE ? UINT64_MAX : fc[x->pred[i]];
                fsig[i] =
                    sim_mix64(sim_mix64(fc[i]) ^ sim_mix64(sim_mix64(p) + 1) ^ sim_mix64(s + 2));
            }
            for (uint32_t j = 0; j < m; j++) {
                uint64_t s = 0;
                for (uint32_t k = t_off[j]; k < t_off[j + 1]; k++)
                    s += sim_mix64(sim_mix64(fc[t_xf[k]]) ^ sim_double_bits(t_coef[k]));
                lsig[j] = sim_mix64(sim_mix64(lc[j]) ^ sim_mix64(s + 3));
            }
            uint32_t nf2 = renumber(fsig, n, &tab, fc);
            uint32_t nl2 = renumber(lsig, m, &tab, lc);
            bool stable = nf2 == nf && nl2 == nl;
            nf = nf2;
            nl = nl2;
            if (stable)
                break;
            if (max_classes && nf > max_classes) {
                err = WEFT_ELIMIT;
                goto free_all;
            }
        }
    }
    for (uint32_t l = 0; l < nlinks; l++)
        c.lcls[l] = lidx[l] == SIM_NONE ? SIM_NONE : lc[lidx[l]];
    c.fcls = fc;
    fc = NULL;
    c.nf = nf;
    c.nl = nl;
    if ((err = summarise(c.fcls, n, nf, &c.fcount, &c.frep)) ||
        (err = summarise(c.lcls, nlinks, nl, &c.lcount, &c.lrep)))
        goto free_all;
    *out = c;
    memset(&c, 0, sizeof c);
    err = WEFT_OK;
free_all:
    sim_classes_fini(&c);
    weft__free(lidx);
    weft__free(used_link);
    weft__free(t_off);
    weft__free(t_xf);
    weft__free(t_coef);
    weft__free(fc);
    weft__free(lc);
    weft__free(fsig);
    weft__free(lsig);
    weft__map64_fini(&tab);
    return err;
}
