/* Dropping links that can never limit a rate. See prune.h for why it is
 * exact. */
#include "sim/prune.h"
#include "base/alloc.h"

weft_err sim_prune_links(uint32_t n, uint32_t *r_off, uint32_t *link, double *coef,
                         uint32_t n_links, const double *cap, uint32_t *pruned)
{
    double *load = weft__calloc(n_links ? n_links : 1, sizeof *load);
    uint8_t *state = weft__calloc(n_links ? n_links : 1, 1);
    if (!load || !state) {
        weft__free(load);
        weft__free(state);
        return WEFT_ENOMEM;
    }
    enum { L_UNUSED, L_USED, L_ESSENTIAL, L_DROP };
    /* B_i and the static bound of every link, summed in entry order. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t lo = r_off[i], hi = r_off[i + 1], arg = lo;
        if (lo == hi)
            continue;
        double b = cap[link[lo]] / coef[lo];
        for (uint32_t k = lo + 1; k < hi; k++) {
            double q = cap[link[k]] / coef[k];
            if (q < b) {
                b = q;
                arg = k;
            }
        }
        state[link[arg]] = L_ESSENTIAL;
        for (uint32_t k = lo; k < hi; k++) {
            load[link[k]] += coef[k] * b;
            if (state[link[k]] == L_UNUSED)
                state[link[k]] = L_USED;
        }
    }
    uint32_t dropped = 0;
    for (uint32_t l = 0; l < n_links; l++)
        if (state[l] == L_USED && load[l] <= cap[l]) {
            state[l] = L_DROP;
            dropped++;
        }
    uint32_t out = 0, lo = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hi = r_off[i + 1];
        for (uint32_t k = lo; k < hi; k++)
            if (state[link[k]] != L_DROP) {
                link[out] = link[k];
                coef[out++] = coef[k];
            }
        lo = hi;
        r_off[i + 1] = out;
    }
    weft__free(load);
    weft__free(state);
    *pruned = dropped;
    return WEFT_OK;
}
