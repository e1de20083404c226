/* The schedule registry (weft/synth.h, "The schedule registry"): every
 * builder weft has, in one place, and the candidate lists every ranking
 * path draws from.
 *
 * The rows are the classic algorithms (classic.c's table, in its order),
 * then the rows below, which build from their own modules. A new schedule
 * is its builder's file and one row: in classic.c's table when it builds
 * through synth_ctx (the textbook and box schedules), here otherwise. */
#include <stdio.h>
#include <string.h>

#include "synth/classic_internal.h"
#include "synth/sparse.h"

#define C_(x) (1u << WEFT_COLL_##x)
#define REDUCING (C_(ALLGATHER) | C_(REDUCESCATTER) | C_(ALLREDUCE))

/* A row that does not build through synth_ctx. */
typedef struct sched_row {
    weft_sched_info info;
    weft_err (*build)(const weft_topo *t, const weft_sched_args *a, weft_plan **out, weft_diag *d);
    bool own_message; /* the builder names a collective it lacks itself */
} sched_row;

/* The least ops of any plan of coll on n ranks: every rank receives every
 * other rank's shard (twice for allreduce), one op each at least. */
static uint64_t least_ops(weft_coll coll, uint32_t n)
{
    uint64_t phase = (uint64_t)n * (n - 1);
    return coll == WEFT_COLL_ALLREDUCE ? 2 * phase : phase;
}

static weft_err build_optimal(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                              weft_diag *d)
{
    uint32_t n = weft_topo_num_ranks(t);
    if (a->matrix && weft_topo_has_ocs(t)) {
        /* Optical circuit switches: the circuit schedule (docs/ocs.md). */
        weft_circuit_sched cs;
        weft_err e = weft_synth_a2a_circuits(t, a->matrix, NULL, out, &cs, d);
        if (!e)
            weft_circuit_sched_fini(&cs);
        return e;
    }
    if (a->matrix || a->coll == WEFT_COLL_ALLTOALL) {
        /* From the certified maximum concurrent flow (docs/bound.md). */
        weft_a2a_bound b;
        weft_err e = a->matrix ? weft_synth_a2a_optimal_traffic(t, a->matrix, out, &b, d)
                               : weft_synth_a2a_optimal(t, out, &b, d);
        if (!e)
            weft_a2a_bound_fini(&b);
        return e;
    }
    if (n > 1 && a->max_ops && least_ops(a->coll, n) > a->max_ops)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "optimal %s on %u ranks has at least %llu ops, more than %u (the "
                             "limit)",
                             weft_coll_name(a->coll), n, (unsigned long long)least_ops(a->coll, n),
                             a->max_ops);
    return weft_synth_optimal(t, a->coll, a->optimal, out, a->optimal_out, d);
}

static weft_err build_bfb(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                          weft_diag *d)
{
    return weft_synth_bfb(t, a->coll, a->max_ops, out, a->bfb_out, d);
}

static weft_err build_sparse(const char *algo, const weft_topo *t, const weft_sched_args *a,
                             weft_plan **out, weft_diag *d)
{
    return weft__synth_sparse(t, algo, a->coll, a->bytes, a->max_ops, a->sparse, out, d);
}

static weft_err build_sparse_ag(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                                weft_diag *d)
{
    return build_sparse("sparse-ag", t, a, out, d);
}

static weft_err build_quant_2shot(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                                  weft_diag *d)
{
    return build_sparse("quant-2shot", t, a, out, d);
}

static weft_err build_sparse_hash(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                                  weft_diag *d)
{
    return build_sparse("sparse-hash", t, a, out, d);
}

static weft_err build_sparse_range(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                                   weft_diag *d)
{
    return build_sparse("sparse-range", t, a, out, d);
}

static weft_err build_hier_quant(const weft_topo *t, const weft_sched_args *a, weft_plan **out,
                                 weft_diag *d)
{
    return build_sparse("hier-quant", t, a, out, d);
}

static const sched_row rows[] = {
    {{"optimal",
      "throughput-optimal: packed spanning trees (allgather, reducescatter, allreduce), the "
      "maximum concurrent flow (alltoall, and a traffic matrix), circuits on OCS fabrics",
      REDUCING | C_(ALLTOALL), true, 0, false, false, true},
     build_optimal,
     true},
    {{"bfb",
      "BFB: breadth-first broadcast in the fabric's diameter of steps, each step an "
      "exact max-flow (direct-connect fabrics)",
      REDUCING, false, WEFT_SCHED_NEEDS_DIRECT, false, false, false},
     build_bfb,
     false},
    /* Compressed and sparse (weft/synth.h, "Compressed and sparse
     * collectives"): not ranked, since they move other data than the dense
     * collective (the comparison is docs/compression.md's). */
    {{"sparse-ag",
      "sparse all-gather of each rank's (index, value) pairs (--density; allreduce: "
      "then summed locally)",
      C_(ALLGATHER) | C_(ALLREDUCE), false, 0, false, false, false},
     build_sparse_ag,
     false},
    {{"quant-2shot",
      "two-shot all-reduce of quantized chunks (--compress int8, fp8, qsgd:S, "
      "sign): reduce-scatter, aggregate at the owner, all-gather",
      C_(ALLREDUCE), false, 0, false, false, false},
     build_quant_2shot,
     false},
    {{"sparse-hash",
      "sparse all-reduce by hash partitioning (--density, --skew): sparse "
      "reduce-scatter to balanced owners, all-gather of their unions",
      C_(ALLREDUCE), false, 0, false, false, false},
     build_sparse_hash,
     false},
    {{"sparse-range",
      "sparse-hash with contiguous index ranges: skewed non-zeros overload the "
      "first owners",
      C_(ALLREDUCE), false, 0, false, false, false},
     build_sparse_range,
     false},
    {{"hier-quant",
      "hierarchical compressed all-reduce (--compress int8, fp8, qsgd:S, sign): "
      "dense reduce-scatter in each host, quant-2shot across hosts on each rail, "
      "dense all-gather in each host",
      C_(ALLREDUCE), false, 0, false, false, false},
     build_hier_quant,
     false},
};

#define N_ROWS (sizeof rows / sizeof *rows)

void weft_sched_args_init(weft_sched_args *a, weft_coll coll)
{
    memset(a, 0, sizeof *a);
    a->coll = coll;
    a->bytes = WEFT_NCCL_PLAN_BYTES;
}

/* The registry's view of a classic row. */
static void classic_info(size_t i, weft_sched_info *out)
{
    const weft_classic_info *c = weft_classic_get(i);
    memset(out, 0, sizeof *out);
    out->name = c->name;
    out->summary = c->summary;
    out->colls = c->colls;
    out->matrix = (c->colls & C_(ALLTOALL)) != 0;
    out->takes_k = strchr(c->name, ':') != NULL;
    out->composite = c->composite;
    if (strcmp(c->name, "hier") == 0 || strncmp(c->name, "flash", 5) == 0)
        out->needs = WEFT_SCHED_NEEDS_BOXES;
    /* A candidate where plans are ranked: no parameter to guess, and not
     * another row's plan under its own name. */
    out->ranked = !out->takes_k && !c->composite;
}

size_t weft_sched_count(void)
{
    return weft_classic_count() + N_ROWS;
}

bool weft_sched_get(size_t i, weft_sched_info *out)
{
    if (i < weft_classic_count()) {
        classic_info(i, out);
        return true;
    }
    i -= weft_classic_count();
    if (i >= N_ROWS)
        return false;
    *out = rows[i].info;
    return true;
}

/* The row of spelling `algo` ("rings:4" finds "rings:K"): its index in
 * rows[], or N_ROWS for a classic spelling, or -1 when unknown. */
static long row_of(const char *algo)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (strcmp(rows[i].info.name, algo) == 0)
            return (long)i;
    for (int c = 0; c < WEFT__COLL_COUNT; c++)
        if (weft_classic_supports(algo, (weft_coll)c))
            return (long)N_ROWS;
    return -1;
}

bool weft_sched_known(const char *algo)
{
    return row_of(algo) >= 0;
}

bool weft_sched_supports(const char *algo, weft_coll coll, bool matrix)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return false;
    long r = row_of(algo);
    if (r < 0)
        return false;
    if (r == (long)N_ROWS)
        return weft_classic_supports(algo, coll) && (!matrix || coll == WEFT_COLL_ALLTOALL);
    const weft_sched_info *in = &rows[r].info;
    return (in->colls & (1u << coll)) && (!matrix || (in->matrix && coll == WEFT_COLL_ALLTOALL));
}

weft_err weft_sched_build(const weft_topo *t, const char *algo, const weft_sched_args *a,
                          weft_plan **out, weft_diag *d)
{
    long r = row_of(algo);
    if (r < 0 && strncmp(algo, "rings:", 6) != 0 && strncmp(algo, "relay:", 6) != 0 &&
        strncmp(algo, "flash:", 6) != 0)
        return weft_diag_set(d, WEFT_ENOENT, "unknown algorithm '%s' (weft plan --list lists them)",
                             algo);
    if (r < 0 || r == (long)N_ROWS) {
        /* Classic: its own checks name a bad K or a collective it lacks. */
        if (a->matrix)
            return weft_synth_classic_traffic(t, algo, a->matrix, a->max_ops, out, d);
        return weft_synth_classic_at(t, algo, a->coll, a->root, a->max_ops, a->bytes, out, d);
    }
    const weft_sched_info *in = &rows[r].info;
    weft_coll coll = a->matrix ? WEFT_COLL_ALLTOALL : a->coll;
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown collective");
    if (a->matrix && !in->matrix)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "algorithm '%s' does not build alltoall from a traffic matrix", algo);
    if (!(in->colls & (1u << coll)) && rows[r].own_message)
        return rows[r].build(t, a, out, d);
    if (!(in->colls & (1u << coll))) {
        char list[128];
        size_t at = 0;
        list[0] = '\0';
        for (int c = 0; c < WEFT__COLL_COUNT; c++)
            if (in->colls & (1u << c))
                at += (size_t)snprintf(list + at, at < sizeof list ? sizeof list - at : 0, "%s%s",
                                       at ? ", " : "", weft_coll_name((weft_coll)c));
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "algorithm '%s' does not build %s (it builds: %s)", algo,
                             weft_coll_name(coll), list);
    }
    weft_sched_args b = *a;
    b.coll = coll;
    return rows[r].build(t, &b, out, d);
}

size_t weft_sched_candidates(weft_coll coll, bool matrix, weft_sched_purpose purpose,
                             const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < weft_classic_count() && n < cap; i++) {
        weft_sched_info in;
        classic_info(i, &in);
        const char *name = in.name;
        if (strcmp(name, "rings:K") == 0) {
            /* Compared twice: NCCL's channel count, which the fabric
             * decides (so the runtime ranks it too), and 4. */
            if (weft_sched_supports("rings:auto", coll, matrix))
                names[n++] = "rings:auto";
            if (purpose == WEFT_SCHED_FOR_RUNTIME || n >= cap)
                continue;
            name = "rings:4";
        } else if (purpose == WEFT_SCHED_FOR_RUNTIME && !in.ranked) {
            continue;
        } else if (in.takes_k) {
            /* flash:K's K is ranked by the caller (flash:auto); relay:K
             * is chosen per root by the runtime (weft_comm_choose). */
            continue;
        }
        if (weft_sched_supports(name, coll, matrix))
            names[n++] = name;
    }
    for (size_t i = 0; i < N_ROWS && n < cap; i++) {
        const weft_sched_info *in = &rows[i].info;
        bool ranked = purpose == WEFT_SCHED_FOR_RUNTIME
                          ? in->ranked && !matrix && coll != WEFT_COLL_ALLTOALL
                          : in->ranked;
        if (ranked && weft_sched_supports(in->name, coll, matrix))
            names[n++] = in->name;
    }
    return n;
}
