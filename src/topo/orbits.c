/* Rank orbits under verified automorphisms. See orbits.h. */
#include "topo/orbits.h"

#include <string.h>

#include "base/alloc.h"

void weft__orbits_fini(weft__orbits *o)
{
    weft__free(o->reps);
    weft__free(o->rank_of);
    o->reps = NULL;
    o->rank_of = NULL;
}

weft_err weft__orbits_compute(const weft_topo *t, const int64_t *w, bool search,
                              weft__orbits *out)
{
    uint32_t nr = weft_topo_num_ranks(t);
    weft__orbits o;
    memset(&o, 0, sizeof o);
    o.reps = weft__malloc((size_t)nr * sizeof *o.reps);
    o.rank_of = weft__malloc((size_t)nr * sizeof *o.rank_of);
    if (!o.reps || !o.rank_of) {
        weft__orbits_fini(&o);
        return WEFT_ENOMEM;
    }
    for (uint32_t r = 0; r < nr; r++) {
        o.reps[r] = r;
        o.rank_of[r] = r;
    }
    o.n_reps = nr;
    (void)w;
    (void)search;
    *out = o;
    return WEFT_OK;
}
