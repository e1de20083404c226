/* The registry of classic algorithms and weft_synth_classic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/classic_internal.h"

#define C_(x) (1u << WEFT_COLL_##x)
#define REDUCING (C_(ALLGATHER) | C_(REDUCESCATTER) | C_(ALLREDUCE))
#define ROOTED (C_(BROADCAST) | C_(REDUCE))

typedef struct classic_entry {
    weft_classic_info info;
    synth_build_fn build;
    bool takes_k; /* spelled NAME:K */
} classic_entry;

/* bruck and hier name an all-to-all schedule too. */
static weft_err build_bruck(const synth_ctx *c, weft_plan **out)
{
    return c->coll == WEFT_COLL_ALLTOALL ? synth_build_a2a_bruck(c, out)
                                         : synth_build_bruck(c, out);
}

static weft_err build_hier(const synth_ctx *c, weft_plan **out)
{
    return c->coll == WEFT_COLL_ALLTOALL ? synth_build_a2a_hier(c, out) : synth_build_hier(c, out);
}

static const classic_entry algorithms[] = {
    {{"ring", "one ring following hosts; broadcast/reduce as a pipelined chain", REDUCING | ROOTED,
      false},
     synth_build_rings,
     false},
    {{"biring", "two rings in opposite directions, half the data each", REDUCING | ROOTED, false},
     synth_build_rings,
     false},
    {{"rings:K",
      "K rings entering each host at different ranks, alternating direction; "
      "rings:auto takes NCCL's channel count for the fabric",
      REDUCING | ROOTED, false},
     synth_build_rings,
     true},
    {{"dbtree", "NCCL's double binary tree: two complementary trees, half the data each",
      C_(ALLREDUCE) | ROOTED, false},
     synth_build_dbtree,
     false},
    {{"binomial", "binomial tree from/to the root", ROOTED, false}, synth_build_binomial, false},
    {{"hd", "recursive halving (reduce-scatter), doubling (allgather); allreduce = Rabenseifner",
      REDUCING, false},
     synth_build_hd,
     false},
    {{"rabenseifner", "allreduce: reduce-scatter by halving, allgather by doubling (= hd)",
      C_(ALLREDUCE), false},
     synth_build_hd,
     false},
    {{"rd", "recursive doubling: whole vectors exchanged in log2(N) steps",
      C_(ALLGATHER) | C_(ALLREDUCE), false},
     synth_build_rd,
     false},
    {{"bruck",
      "Bruck: allgather, and all-to-all for small messages, in ceil(log2 N) steps for "
      "any N",
      C_(ALLGATHER) | C_(ALLTOALL), false},
     build_bruck,
     false},
    {{"direct", "all-to-all: every pair at once", C_(ALLTOALL), false}, synth_build_direct, false},
    {{"pairwise", "all-to-all: N-1 steps, rank r sends to r+k at step k", C_(ALLTOALL), false},
     synth_build_pairwise,
     false},
    {{"hier",
      "two-level: rings inside each host, then rings across hosts on each rail; "
      "all-to-all: gather in the box, one message per rail and box pair (NCCL's PXN)",
      REDUCING | C_(ALLTOALL), false},
     build_hier,
     false},
    {{"flash",
      "all-to-all on boxes (FLASH): box to box in Birkhoff-von Neumann rounds, NIC i "
      "to NIC i, no incast; scatter inside the box",
      C_(ALLTOALL), false},
     synth_build_flash,
     false},
    {{"flash:K",
      "flash with every block cut into K chunks (1 to 64) placed one by one, so a "
      "block may span BvN rounds (docs/algorithms.md: faster than whole blocks "
      "where pairs have many small rounds)",
      C_(ALLTOALL), false},
     synth_build_flash_split,
     true},
    {{"relay:K",
      "broadcast/reduce leaving/reaching the root's host through the NICs of K of "
      "its ranks, relayed over the host (FuseLink); relay:1 without relay, "
      "relay:auto every rank",
      ROOTED, false},
     synth_build_relay,
     true},
    {{"nccl",
      "what NCCL runs on the fabric for large messages: rings over its channels or "
      "the double binary tree (sim: its choice per size)",
      REDUCING | ROOTED | C_(ALLTOALL), true},
     synth_build_nccl,
     false},
};

#define N_ALGOS (sizeof algorithms / sizeof *algorithms)

size_t weft_classic_count(void)
{
    return N_ALGOS;
}

const weft_classic_info *weft_classic_get(size_t i)
{
    return i < N_ALGOS ? &algorithms[i].info : NULL;
}

/* Finds the entry for a spelling and its parameter K (0 when none). */
static const classic_entry *lookup(const char *algo, uint32_t *k, bool *bad_k)
{
    *k = 0;
    *bad_k = false;
    const char *colon = strchr(algo, ':');
    size_t base = colon ? (size_t)(colon - algo) : strlen(algo);
    for (size_t i = 0; i < N_ALGOS; i++) {
        const classic_entry *a = &algorithms[i];
        size_t nlen = strcspn(a->info.name, ":");
        if (nlen != base || strncmp(a->info.name, algo, base) != 0 || a->takes_k != !!colon)
            continue;
        if (colon && strcmp(colon + 1, "auto") == 0) {
            *k = 0; /* NCCL's channel count, found with the fabric */
        } else if (colon) {
            char *end;
            unsigned long v = strtoul(colon + 1, &end, 10);
            if (!colon[1] || *end || v < 1 || v > 64)
                *bad_k = true;
            else
                *k = (uint32_t)v;
        }
        return a;
    }
    return NULL;
}

bool weft_classic_supports(const char *algo, weft_coll coll)
{
    uint32_t k;
    bool bad;
    const classic_entry *a = lookup(algo, &k, &bad);
    return a && !bad && (a->info.colls & (1u << coll));
}

/* "allgather, reducescatter" for a collective mask. */
static void coll_list(uint32_t mask, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < WEFT__COLL_COUNT; i++) {
        if (mask & (1u << i))
            at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s", at ? ", " : "",
                                   weft_coll_name((weft_coll)i));
    }
}

weft_err weft_synth_classic(const weft_topo *t, const char *algo, weft_coll coll, weft_rank root,
                            weft_plan **out, weft_diag *d)
{
    return weft_synth_classic_limited(t, algo, coll, root, 0, out, d);
}

weft_err weft_synth_classic_limited(const weft_topo *t, const char *algo, weft_coll coll,
                                    weft_rank root, uint32_t max_ops, weft_plan **out, weft_diag *d)
{
    return weft_synth_classic_at(t, algo, coll, root, max_ops, WEFT_NCCL_PLAN_BYTES, out, d);
}

static weft_err classic_build(const weft_topo *t, const char *algo, weft_coll coll, weft_rank root,
                              uint32_t max_ops, double bytes, const weft_traffic *m, uint32_t param,
                              weft_plan **out, weft_diag *d);

weft_err weft_synth_classic_at(const weft_topo *t, const char *algo, weft_coll coll, weft_rank root,
                               uint32_t max_ops, double bytes, weft_plan **out, weft_diag *d)
{
    return classic_build(t, algo, coll, root, max_ops, bytes, NULL, 0, out, d);
}

weft_err weft_synth_nccl_algo(const weft_topo *t, weft_coll coll, weft_nccl_algo algo,
                              uint32_t max_ops, weft_plan **out, weft_diag *d)
{
    *out = NULL; /* on every error too */
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown collective");
    if (algo != WEFT_NCCL_RING && algo != WEFT_NCCL_TREE)
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "nccl: %s has no rank-to-rank plan (ring and tree have)",
                             weft_nccl_algo_name(algo));
    if (algo == WEFT_NCCL_TREE && coll != WEFT_COLL_ALLREDUCE)
        return weft_diag_set(d, WEFT_EUNSUPPORTED, "nccl: NCCL's tree runs allreduce only, not %s",
                             weft_coll_name(coll));
    weft_nccl_fabric f;
    weft_err e = weft_nccl_fabric_get(t, &f, d);
    if (e)
        return e;
    /* NCCL runs either on every channel of the communicator. */
    e = classic_build(t, algo == WEFT_NCCL_RING ? "rings:auto" : "dbtree", coll, (weft_rank){0},
                      max_ops, WEFT_NCCL_PLAN_BYTES, NULL, f.channels, out, d);
    /* NCCL's tree forwards per Simple step (weft/synth.h). */
    if (!e && algo == WEFT_NCCL_TREE)
        synth_nccl_mark_tree(*out, &f);
    return e;
}

weft_err weft_synth_classic_traffic(const weft_topo *t, const char *algo, const weft_traffic *m,
                                    uint32_t max_ops, weft_plan **out, weft_diag *d)
{
    if (m->ranks != weft_topo_num_ranks(t))
        return weft_diag_set(d, WEFT_EINVAL, "the traffic matrix has %u ranks, the fabric %u",
                             m->ranks, weft_topo_num_ranks(t));
    weft_err e = weft_traffic_check(m, d);
    if (e)
        return e == WEFT_EOVERFLOW ? weft_diag_code(d, WEFT_EINVAL) : e;
    weft_plan *p = NULL;
    e = classic_build(t, algo, WEFT_COLL_ALLTOALL, (weft_rank){0}, max_ops, WEFT_NCCL_PLAN_BYTES, m,
                      0, &p, d);
    if (e)
        return e;
    e = weft_plan_set_traffic(p, m, d);
    if (e) {
        weft_plan_free(p);
        return e;
    }
    *out = p;
    return WEFT_OK;
}

/* param > 0 stands for the algorithm's parameter (K of rings:K, the
 * channels of dbtree) in place of what the name gives. */
static weft_err classic_build(const weft_topo *t, const char *algo, weft_coll coll, weft_rank root,
                              uint32_t max_ops, double bytes, const weft_traffic *m, uint32_t param,
                              weft_plan **out, weft_diag *d)
{
    uint32_t k;
    bool bad_k;
    const classic_entry *a = lookup(algo, &k, &bad_k);
    if (!a)
        return weft_diag_set(d, WEFT_ENOENT, "unknown algorithm '%s' (weft plan --list lists them)",
                             algo);
    if (bad_k)
        return weft_diag_set(d, WEFT_EINVAL, "%s: K must be an integer from 1 to 64", algo);
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "unknown collective");
    if (!(a->info.colls & (1u << coll))) {
        char list[128];
        coll_list(a->info.colls, list, sizeof list);
        return weft_diag_set(d, WEFT_EUNSUPPORTED,
                             "algorithm '%s' does not build %s (it builds: %s)", algo,
                             weft_coll_name(coll), list);
    }
    uint32_t n = weft_topo_num_ranks(t);
    if (n < 2)
        return weft_diag_set(d, WEFT_ETOPO, "%s needs at least 2 ranks, the fabric has %u", algo,
                             n);
    if (weft_coll_has_root(coll) && root.v >= n)
        return weft_diag_set(d, WEFT_EINVAL, "root %u is not a rank (the fabric has %u ranks)",
                             root.v, n);
    synth_ctx c = {
        .topo = t,
        .coll = coll,
        .n = n,
        .root = weft_coll_has_root(coll) ? root.v : 0,
        .max_ops = max_ops,
        .bytes = bytes,
        .traffic = m,
        .d = d,
    };
    /* "ring" is rings:1 and "biring" rings:2 with opposite directions. */
    if (strcmp(a->info.name, "ring") == 0)
        k = 1;
    else if (strcmp(a->info.name, "biring") == 0)
        k = 2;
    else if (a->build == synth_build_relay)
        ; /* relay:auto (k 0): every rank of the root's host */
    else if (a->build == synth_build_flash_split)
        ; /* flash:auto has no meaning: synth_build_flash_split says so */
    else if (a->takes_k && k == 0) {
        weft_nccl_fabric f;
        weft_err fe = weft_nccl_fabric_get(t, &f, d);
        if (fe)
            return fe;
        k = f.channels;
    }
    c.param = param > 0 ? param : k;
    weft_err e = synth_hosts_init(&c.hosts, t);
    if (e)
        return weft_diag_code(d, e);
    c.order = weft__malloc((size_t)n * sizeof *c.order);
    if (!c.order) {
        e = WEFT_ENOMEM;
        goto free_hosts;
    }
    synth_ring_order(&c.hosts, 0, c.order);
    weft_plan *p = NULL;
    e = a->build(&c, &p);
    if (!e)
        *out = p;
    weft__free(c.order);
free_hosts:
    synth_hosts_fini(&c.hosts);
    if (e == WEFT_ELIMIT && max_ops)
        weft_diag_set(d, e, "%s %s on %u ranks has more than %u ops (the limit)", a->info.name,
                      weft_coll_name(coll), n, max_ops);
    else if (e && e != WEFT_ETOPO && e != WEFT_EINVAL)
        weft_diag_code(d, e);
    return e;
}
