/* Costs per collective and size class (tuner.h, "cache.c").
 *
 * A class is filled on first use: for each of the 21 pairs, weft_nccl_cost_of
 * at the class's two ends, and when their latencies differ, a bisection
 * over the sizes between them for the first size with the second latency
 * (at most 64 more estimates). Every later call in the class is a few
 * multiplications. The cost at a size is then exactly weft_nccl_cost_of's
 * time at that size (to rounding), not an interpolation. */
#include <string.h>

#include "tuner/nccl_tuner_abi.h"
#include "tuner/tuner.h"

/* NCCL's function -> weft's collective (NCCL's nBytes is weft's size:
 * allgather's total output, reducescatter's total input). */
static const weft_coll func_coll[TUNER_FUNCS] = {
    [NCCL_FUNC_BROADCAST] = WEFT_COLL_BROADCAST,
    [NCCL_FUNC_REDUCE] = WEFT_COLL_REDUCE,
    [NCCL_FUNC_ALLGATHER] = WEFT_COLL_ALLGATHER,
    [NCCL_FUNC_REDUCESCATTER] = WEFT_COLL_REDUCESCATTER,
    [NCCL_FUNC_ALLREDUCE] = WEFT_COLL_ALLREDUCE,
};
/* Row a of the table (NCCL's algorithm index) -> weft's. */
static const weft_nccl_algo row_algo[TUNER_ALGOS] = {
    [NCCL_ALGO_TREE] = WEFT_NCCL_TREE,
    [NCCL_ALGO_RING] = WEFT_NCCL_RING,
    [NCCL_ALGO_COLLNET_DIRECT] = WEFT_NCCL_COLLNET_DIRECT,
    [NCCL_ALGO_COLLNET_CHAIN] = WEFT_NCCL_COLLNET_CHAIN,
    [NCCL_ALGO_NVLS] = WEFT_NCCL_NVLS,
    [NCCL_ALGO_NVLS_TREE] = WEFT_NCCL_NVLS_TREE,
    [NCCL_ALGO_PAT] = WEFT_NCCL_PAT,
};
/* Column p (NCCL_PROTO_LL, _LL128, _SIMPLE) -> weft's. */
static const weft_proto col_proto[3] = {WEFT_PROTO_LL, WEFT_PROTO_LL128, WEFT_PROTO_SIMPLE};

void tuner_model_init(tuner_model *m, const weft_nccl_fabric *f)
{
    memset(m, 0, sizeof *m);
    m->f = *f;
}

uint32_t tuner_class_of(uint64_t bytes)
{
    uint32_t k = 0;
    while (bytes >>= 1)
        k++;
    return k;
}

/* The estimate's latency in us at `bytes` (the pair is known to run). */
static double lat_at(const weft_nccl_fabric *f, weft_coll coll, int a, int p, uint64_t bytes)
{
    weft_nccl_cost c;
    if (!weft_nccl_cost_of(f, coll, row_algo[a], col_proto[p], (double)bytes, &c))
        return 0;
    return c.lat_s * 1e6;
}

static void fill_entry(const weft_nccl_fabric *f, weft_coll coll, int a, int p, uint64_t lo,
                       uint64_t hi, tuner_entry *e)
{
    weft_nccl_cost c;
    memset(e, 0, sizeof *e);
    if (!weft_nccl_cost_of(f, coll, row_algo[a], col_proto[p], (double)lo, &c))
        return;
    e->on = true;
    e->lat_us = e->lat_hi_us = c.lat_s * 1e6;
    e->bytes_per_us = 1e3 * c.algbw_gbps;
    e->step = UINT64_MAX;
    double top = lat_at(f, coll, a, p, hi);
    if (top == e->lat_us)
        return;
    /* The latency changes once inside [lo, hi]: the first size of the
     * new one is in (lo, hi]. */
    uint64_t below = lo, at = hi;
    while (at - below > 1) {
        uint64_t mid = below + (at - below) / 2;
        if (lat_at(f, coll, a, p, mid) == e->lat_us)
            below = mid;
        else
            at = mid;
    }
    e->step = at;
    e->lat_hi_us = top;
}

const tuner_class *tuner_model_class(tuner_model *m, int func, uint64_t bytes)
{
    if (func < 0 || func >= TUNER_FUNCS)
        return NULL;
    uint32_t k = tuner_class_of(bytes);
    tuner_class *c = &m->c[func][k];
    if (c->filled)
        return c;
    uint64_t lo = k == 0 ? 0 : (uint64_t)1 << k;
    uint64_t hi = k == 63 ? UINT64_MAX : ((uint64_t)1 << (k + 1)) - 1;
    for (int a = 0; a < TUNER_ALGOS; a++)
        for (int p = 0; p < 3; p++)
            fill_entry(&m->f, func_coll[func], a, p, lo, hi, &c->e[a][p]);
    c->filled = true;
    return c;
}

double tuner_entry_cost(const tuner_entry *e, int a, uint64_t bytes, int pipe_ops)
{
    double lat = bytes >= e->step ? e->lat_hi_us : e->lat_us;
    double count = a == NCCL_ALGO_RING && pipe_ops > 1 ? pipe_ops : 1;
    return lat * count + (double)bytes / e->bytes_per_us;
}

bool tuner_model_fill(tuner_model *m, int func, uint64_t bytes, int pipe_ops, float *table,
                      int num_algo, int num_proto)
{
    const tuner_class *c = tuner_model_class(m, func, bytes);
    if (!c)
        return false;
    for (int a = 0; a < TUNER_ALGOS && a < num_algo; a++) {
        for (int p = 0; p < 3 && p < num_proto; p++) {
            float *slot = &table[a * num_proto + p];
            /* NCCL cannot run an entry it left below 0; NCCL's own cost
             * stays where weft's model has none. */
            if (!c->e[a][p].on || !(*slot >= 0))
                continue;
            *slot = (float)tuner_entry_cost(&c->e[a][p], a, bytes, pipe_ops);
        }
    }
    return true;
}

bool tuner_model_choose(tuner_model *m, int func, uint64_t bytes, int pipe_ops, bool collnet,
                        bool nvls, int *algo, int *proto)
{
    const tuner_class *c = tuner_model_class(m, func, bytes);
    if (!c)
        return false;
    bool found = false;
    double best = 0;
    for (int a = 0; a <= NCCL_ALGO_NVLS_TREE; a++) {
        bool allowed =
            a <= NCCL_ALGO_RING ||
            (collnet && (a == NCCL_ALGO_COLLNET_DIRECT || a == NCCL_ALGO_COLLNET_CHAIN)) ||
            (nvls && (a == NCCL_ALGO_NVLS || a == NCCL_ALGO_NVLS_TREE));
        for (int p = 0; p < 3 && allowed; p++) {
            if (!c->e[a][p].on)
                continue;
            double cost = tuner_entry_cost(&c->e[a][p], a, bytes, pipe_ops);
            if (!found || cost < best) {
                found = true;
                best = cost;
                *algo = a;
                *proto = p;
            }
        }
    }
    return found;
}
