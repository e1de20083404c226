/* The periodic quotient of a ring. See period.h. */
#include <string.h>

#include "base/alloc.h"
#include "base/map.h"
#include "sim/period.h"

static uint64_t bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static uint64_t mix(uint64_t x)
{
    return weft__mix64(x);
}

/* Do positions i and j have the same type (capacity, coefficient,
 * latency), compared exactly? */
static bool same_type(const sim_xfer_set *x, uint32_t i, uint32_t j)
{
    uint32_t a = x->r_off[i], b = x->r_off[j];
    return x->cap[x->link[a]] == x->cap[x->link[b]] && x->coef[a] == x->coef[b] &&
           x->lat[i] == x->lat[j];
}

/* Numbers the position types: ty[i] = index of i's type in order of first
 * appearance. Types are found by a 64-bit hash of (capacity, coefficient,
 * latency) and compared exactly; a hash shared by two different types is
 * rehashed until it finds its own type or a free key. */
static weft_err number_types(const sim_xfer_set *x, uint32_t *ty)
{
    uint32_t n = x->n;
    uint32_t *rep = weft__malloc((n ? n : 1) * sizeof *rep); /* the first member of each type */
    weft__map64 tab;
    weft__map64_init(&tab);
    if (!rep || weft__map64_reserve(&tab, n)) {
        weft__free(rep);
        weft__map64_fini(&tab);
        return WEFT_ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = x->r_off[i];
        uint64_t h = mix(bits(x->cap[x->link[k]]) ^ mix(bits(x->coef[k]) ^ mix(bits(x->lat[i]))));
        for (;;) {
            bool added;
            uint32_t t;
            /* Cannot fail: at most n keys, reserved. */
            (void)weft__map64_get_or_put(&tab, h, (uint32_t)tab.n, &t, &added);
            if (added)
                rep[t] = i;
            if (added || same_type(x, rep[t], i)) {
                ty[i] = t;
                break;
            }
            h = mix(h + 1);
        }
    }
    weft__free(rep);
    weft__map64_fini(&tab);
    return WEFT_OK;
}

/* Positions i with ty[i] != ty[(i + p) mod n], counting stops above limit. */
static uint32_t count_defects(const uint32_t *ty, uint32_t n, uint32_t p, uint32_t limit)
{
    uint32_t d = 0;
    for (uint32_t i = 0; i < n && d <= limit; i++) {
        uint32_t j = i + p < n ? i + p : i + p - n;
        d += ty[i] != ty[j];
    }
    return d;
}

weft_err sim_period_classes(const sim_xfer_set *x, uint32_t max_period, uint32_t max_defects,
                            sim_classes *out, uint32_t *period, uint32_t *defects)
{
    uint32_t n = x->n;
    if (n < 4)
        return WEFT_ELIMIT;
    for (uint32_t i = 0; i < n; i++)
        if (x->r_off[i + 1] - x->r_off[i] != 1 || x->pred[i] != (i ? i - 1 : n - 1))
            return WEFT_ELIMIT;
    weft_err err = WEFT_ENOMEM;
    sim_classes c;
    memset(&c, 0, sizeof c);
    uint8_t *seen = weft__calloc(x->n_links ? x->n_links : 1, 1);
    uint32_t *ty = weft__malloc(n * sizeof *ty);
    if (!seen || !ty)
        goto free_all;
    /* Private: no link on two routes. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t l = x->link[x->r_off[i]];
        if (seen[l]) {
            err = WEFT_ELIMIT;
            goto free_all;
        }
        seen[l] = 1;
    }
    if ((err = number_types(x, ty)))
        goto free_all;
    uint32_t best = UINT32_MAX, bp = 0, pmax = max_period < n / 2 ? max_period : n / 2;
    for (uint32_t p = 1; p <= pmax && best; p++) {
        uint32_t d = count_defects(ty, n, p, best == UINT32_MAX ? n : best - 1);
        if (d < best) {
            best = d;
            bp = p;
        }
    }
    if (!bp || best > max_defects) {
        err = WEFT_ELIMIT;
        goto free_all;
    }
    err = WEFT_ENOMEM;
    c.nf = c.nl = bp;
    c.fcls = weft__malloc(n * sizeof *c.fcls);
    c.lcls = weft__malloc((x->n_links ? x->n_links : 1) * sizeof *c.lcls);
    c.fcount = weft__calloc(bp, sizeof *c.fcount);
    c.lcount = weft__malloc(bp * sizeof *c.lcount);
    c.frep = weft__malloc(bp * sizeof *c.frep);
    c.lrep = weft__malloc(bp * sizeof *c.lrep);
    if (!c.fcls || !c.lcls || !c.fcount || !c.lcount || !c.frep || !c.lrep)
        goto free_all;
    for (uint32_t l = 0; l < x->n_links; l++)
        c.lcls[l] = SIM_NONE;
    for (uint32_t k = 0; k < bp; k++) {
        /* The majority type among k, k + p, ... (Boyer-Moore vote; with
         * at most max_defects defects the regular type wins). */
        uint32_t cand = ty[k], votes = 0;
        for (uint32_t i = k; i < n; i += bp) {
            if (!votes)
                cand = ty[i];
            votes += ty[i] == cand ? 1 : (uint32_t)-1;
        }
        uint32_t rep = k;
        while (ty[rep] != cand)
            rep += bp;
        c.frep[k] = rep;
        c.lrep[k] = x->link[x->r_off[rep]];
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = i % bp;
        c.fcls[i] = k;
        c.fcount[k]++;
        c.lcls[x->link[x->r_off[i]]] = k;
    }
    for (uint32_t k = 0; k < bp; k++)
        c.lcount[k] = c.fcount[k];
    *out = c;
    memset(&c, 0, sizeof c);
    *period = bp;
    *defects = best;
    err = WEFT_OK;
free_all:
    sim_classes_fini(&c);
    weft__free(seen);
    weft__free(ty);
    return err;
}
