/* Remembered cuts of the optimal schedule's checks (optimal_internal.h). */
#include <string.h>

#include "base/alloc.h"
#include "synth/optimal_cuts.h"

void opt_cuts_init(opt_cuts *c, uint32_t n_elems)
{
    memset(c, 0, sizeof *c);
    c->words = (n_elems + 63) / 64;
    if (c->words == 0)
        c->words = 1;
}

void opt_cuts_fini(opt_cuts *c)
{
    weft__free(c->bits);
    weft__free(c->surplus);
    c->bits = NULL;
    c->surplus = NULL;
    c->n = c->cap_n = c->cap_bits = 0;
}

weft_err opt_cuts_add(opt_cuts *c, const uint64_t *set, int64_t surplus)
{
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(c->bits + i * c->words, set, c->words * sizeof *set) == 0)
            return WEFT_OK;
    if (c->n >= OPT_MAX_CUTS)
        return WEFT_OK;
    if (weft__grow((void **)&c->surplus, &c->cap_n, c->n + 1, sizeof *c->surplus) ||
        weft__grow((void **)&c->bits, &c->cap_bits, (c->n + 1) * c->words, sizeof *c->bits))
        return WEFT_ENOMEM;
    memcpy(c->bits + c->n * c->words, set, c->words * sizeof *set);
    c->surplus[c->n++] = surplus;
    return WEFT_OK;
}
