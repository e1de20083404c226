/* The step's collectives on the fabric: Megatron's placement of the
 * parallel dimensions on ranks, and one simulation per kind of collective
 * with every concurrent group in it, cached per context. docs/step.md
 * ("Communication") describes what runs and when. */
#include <string.h>

#include "base/alloc.h"
#include "base/par.h"
#include "weft/paths.h"
#include "weft/traffic.h"
#include "work/work_internal.h"

/* Here, below trace.c and step.c which both name the kinds (the file
 * order of docs/architecture.md). */
const char *weft_comm_kind_name(weft_comm_kind k)
{
    static const char *const names[] = {"tp", "cp", "dp", "pp", "ep", "emb", "loss"};
    return (unsigned)k < WEFT__COMM_COUNT ? names[k] : "?";
}

static void dim_sizes(const weft_parallel *p, uint32_t dp, uint32_t size[WEFT__DIM_COUNT])
{
    size[WEFT_DIM_TP] = p->tp;
    size[WEFT_DIM_CP] = p->cp;
    size[WEFT_DIM_EP] = p->ep;
    size[WEFT_DIM_DP] = dp / p->ep;
    size[WEFT_DIM_PP] = p->pp;
}

void weft__work_groups(const weft_parallel *p, uint32_t dp, uint32_t mask, uint32_t *pos)
{
    uint32_t size[WEFT__DIM_COUNT], stride[WEFT__DIM_COUNT], gs = 1, ng = 1, st = 1;
    dim_sizes(p, dp, size);
    for (uint32_t i = 0; i < WEFT__DIM_COUNT; i++) {
        uint32_t dim = p->order[i];
        stride[dim] = st;
        st *= size[dim];
        if (mask >> dim & 1)
            gs *= size[dim];
        else
            ng *= size[dim];
    }
    for (uint32_t gi = 0; gi < ng; gi++)
        for (uint32_t mi = 0; mi < gs; mi++) {
            uint32_t r = 0, g = gi, k = mi;
            for (uint32_t i = 0; i < WEFT__DIM_COUNT; i++) {
                uint32_t dim = p->order[i];
                if (mask >> dim & 1) {
                    r += k % size[dim] * stride[dim];
                    k /= size[dim];
                } else {
                    r += g % size[dim] * stride[dim];
                    g /= size[dim];
                }
            }
            pos[(size_t)gi * gs + mi] = r;
        }
}

/* What a simulation depends on besides the fabric and options. */
typedef struct weft__cache_key {
    uint32_t coll, pairs, mask, dp, tp, cp, ep, pp;
    uint32_t order[WEFT__DIM_COUNT];
    uint64_t size;
} weft__cache_key;

struct weft__cache_entry {
    weft__cache_key key;
    double time_s;
};

static uint32_t group_size(const weft_parallel *p, uint32_t dp, uint32_t mask)
{
    uint32_t size[WEFT__DIM_COUNT], gs = 1;
    dim_sizes(p, dp, size);
    for (uint32_t dim = 0; dim < WEFT__DIM_COUNT; dim++)
        if (mask >> dim & 1)
            gs *= size[dim];
    return gs;
}

static weft_err scratch(weft_work_ctx *c, size_t n, weft_diag *d)
{
    if (weft__grow((void **)&c->scratch, &c->scratch_cap, n, sizeof *c->scratch))
        return weft_diag_code(d, WEFT_ENOMEM);
    return WEFT_OK;
}

static int32_t host_of(const weft_topo *t, uint32_t r)
{
    return weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r}));
}

/* The rings over the groups of gs in pos[0 .. n): with k channels when a
 * group spans several hosts with k ranks in its first one (ring_k), channel
 * ch rotating each host's run of members by ch, so that every channel
 * leaves a host through another rank (and NIC). ring_fill writes the n x k
 * ring positions to ord (group after group, channel after channel); each
 * ring carries size / k bytes (at least 1). */
static uint32_t ring_k(const weft_topo *t, const uint32_t *pos, uint32_t gs)
{
    uint32_t k = 1;
    int32_t h0 = host_of(t, pos[0]);
    bool multi = false;
    for (uint32_t i = 1; i < gs; i++) {
        if (host_of(t, pos[i]) != h0)
            multi = true;
        else if (!multi)
            k++;
    }
    return !multi || h0 < 0 ? 1 : k;
}

static void ring_fill(const weft_topo *t, const uint32_t *pos, uint32_t n, uint32_t gs, uint32_t k,
                      uint32_t *ord)
{
    for (uint32_t g0 = 0; g0 < n; g0 += gs)
        for (uint32_t ch = 0; ch < k; ch++) {
            uint32_t *dst = ord + ((size_t)g0 * k + (size_t)ch * gs);
            uint32_t i = 0;
            while (i < gs) {
                uint32_t j = i + 1;
                int32_t hi = host_of(t, pos[g0 + i]);
                while (j < gs && host_of(t, pos[g0 + j]) == hi)
                    j++;
                uint32_t len = j - i;
                for (uint32_t q = 0; q < len; q++)
                    dst[i + q] = pos[g0 + i + (q + ch) % len];
                i = j;
            }
        }
}

/* The rings of the groups in c->scratch[0 .. n), written to c->scratch + n
 * (grown to hold them). */
static weft_err ring_channels(weft_work_ctx *c, uint32_t n, uint32_t gs, uint32_t *kout,
                              weft_diag *d)
{
    uint32_t k = ring_k(c->topo, c->scratch, gs);
    weft_err err = scratch(c, n + (size_t)n * k, d);
    if (err)
        return err;
    ring_fill(c->topo, c->scratch, n, gs, k, c->scratch + n);
    *kout = k;
    return WEFT_OK;
}

static uint64_t ring_bytes(uint64_t size, uint32_t k)
{
    uint64_t per = size / k;
    return per ? per : 1;
}

/* The gpu model's NCCL view of the fabric, found once per context
 * (c->nccl_state 1 when found, -1 when the fabric has none). */
static void nccl_ready(weft_work_ctx *c)
{
    if (c->opts.model == WEFT_SIM_GPU && c->nccl_state == 0)
        c->nccl_state = weft_nccl_fabric_get(c->topo, &c->nccl, NULL) ? -1 : 1;
}

/* In the gpu model, whether NCCL runs coll of `size` in the network for a
 * communicator like the first group of pos[0 .. gs) (its ranks and hosts;
 * weft_nccl_fabric_group, weft_nccl_choose), and which kind. Reads c alone
 * (nccl_ready first). */
static bool nccl_innet(const weft_work_ctx *c, const uint32_t *pos, uint32_t gs, weft_coll coll,
                       uint64_t size, weft_sim_innet_algo *kind)
{
    if (c->opts.model != WEFT_SIM_GPU || c->nccl_state <= 0 ||
        (!c->nccl.nvls_switch && !c->nccl.collnet))
        return false;
    uint32_t hosts = 0;
    for (uint32_t i = 0; i < gs; i++) {
        int32_t h = host_of(c->topo, pos[i]);
        bool seen = false;
        for (uint32_t k = 0; k < i && !seen; k++)
            seen = h >= 0 && host_of(c->topo, pos[k]) == h;
        hosts += !seen;
    }
    weft_nccl_fabric f;
    weft_nccl_choice ch;
    if (weft_nccl_fabric_group(&c->nccl, gs, hosts, &f, NULL) ||
        weft_nccl_choose(&f, coll, (double)size, &ch, NULL) || !weft_nccl_algo_innet(ch.algo))
        return false;
    *kind = ch.algo == WEFT_NCCL_NVLS             ? WEFT_SIM_INNET_NVLS
            : ch.algo == WEFT_NCCL_NVLS_TREE      ? WEFT_SIM_INNET_NVLS_TREE
            : ch.algo == WEFT_NCCL_COLLNET_DIRECT ? WEFT_SIM_INNET_COLLNET_DIRECT
                                                  : WEFT_SIM_INNET_COLLNET_CHAIN;
    return true;
}

/* The groups of gs in pos[0 .. n) all at once: as NCCL would run the
 * communicator in the gpu model where that reduces in the network
 * (weft_sim_innet; a group weft_sim_innet cannot place, unequal hosts,
 * falls back to rings), otherwise rings (ring_k, ring_fill into ord, room
 * for n x ring_k entries) through weft_sim_rings. Reads c alone
 * (nccl_ready first), so that several run at once
 * (weft__work_traffics_groups_s). */
static weft_err rings_time(const weft_work_ctx *c, const uint32_t *pos, uint32_t *ord, uint32_t n,
                           uint32_t gs, weft_coll coll, uint64_t size, double *out, weft_diag *d)
{
    weft_sim_innet_algo kind;
    if (coll != WEFT_COLL_BROADCAST && nccl_innet(c, pos, gs, coll, size, &kind)) {
        weft_sim_result r;
        weft_diag ld;
        weft_err ierr = weft_sim_innet(c->topo, coll, kind, pos, n, gs, size, &c->opts, &r, &ld);
        if (!ierr) {
            *out = r.time_s;
            return WEFT_OK;
        }
        if (ierr != WEFT_EINVAL && ierr != WEFT_ETOPO)
            return weft_diag_set(d, ierr, "%s", ld.msg);
    }
    uint32_t k = ring_k(c->topo, pos, gs);
    ring_fill(c->topo, pos, n, gs, k, ord);
    weft_sim_result r;
    weft_err err = weft_sim_rings(c->topo, coll, ord, (uint32_t)((size_t)n * k), gs,
                                  ring_bytes(size, k), &c->opts, &r, d);
    if (!err)
        *out = r.time_s;
    return err;
}

/* rings_time of the groups in c->scratch[0 .. n), the rings after them. */
static weft_err sim_rings(weft_work_ctx *c, uint32_t n, uint32_t gs, weft_coll coll, uint64_t size,
                          double *out, weft_diag *d)
{
    nccl_ready(c);
    weft_err err = scratch(c, n + (size_t)n * ring_k(c->topo, c->scratch, gs), d);
    if (err)
        return err;
    return rings_time(c, c->scratch, c->scratch + n, n, gs, coll, size, out, d);
}

/* The end of the plan_* builders: plan p, of size `size`, goes to *out and
 * *psize, or is freed when building it failed (err). */
static weft_err plan_done(weft_plan *p, weft_err err, uint64_t size, weft_plan **out,
                          uint64_t *psize, weft_diag *d)
{
    if (err) {
        weft_plan_free(p);
        return weft_diag_code(d, err);
    }
    *out = p;
    *psize = size;
    return WEFT_OK;
}

/* The same rings as a plan of the transfers weft_sim_rings simulates: step
 * s of position p (one chunk of the ring's bytes / gs to the next position
 * of its ring) after step s - 1 of the position before it; the header is
 * an allreduce's of gs chunks (a chunk is size / gs bytes), channels are
 * the rings' channels. */
static weft_err plan_rings(weft_work_ctx *c, uint32_t n, uint32_t gs, weft_coll coll, uint64_t size,
                           weft_plan **out, uint64_t *psize, weft_diag *d)
{
    uint32_t k = 1;
    weft_err err = ring_channels(c, n, gs, &k, d);
    if (err)
        return err;
    const uint32_t *ord = c->scratch + n;
    uint32_t total = n * k, steps = coll == WEFT_COLL_ALLREDUCE ? 2 * (gs - 1) : gs - 1;
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, c->ranks, {0}, gs, 0, false};
    weft_plan *p = NULL;
    if ((err = weft_plan_new(&info, &p)))
        return weft_diag_code(d, err);
    for (uint32_t s = 0; s < steps && !err; s++)
        for (uint32_t q = 0; q < total && !err; q++) {
            uint32_t g0 = q / gs * gs, next = g0 + (q - g0 + 1) % gs,
                     pred = g0 + (q - g0 + gs - 1) % gs, dep = (s - 1) * total + pred;
            weft_op op = {WEFT_OP_COPY, {ord[q]}, {ord[next]}, WEFT_BUF_IN, WEFT_BUF_OUT, 0, 0, 1,
                          q / gs % k};
            err = weft_plan_add_op(p, &op, &dep, s > 0 ? 1 : 0, NULL);
        }
    return plan_done(p, err, ring_bytes(size, k), out, psize, d);
}

/* The plan of a uniform all-to-all (weft_traffic_uniform) in every group at
 * once, direct copies over the fabric's ranks; *psize: its size (one op
 * carries S / (N x 1) bytes: S = block x ranks). */
static weft_err plan_alltoall(weft_work_ctx *c, const uint32_t *pos, uint32_t n, uint32_t gs,
                              uint64_t size, weft_plan **out, uint64_t *psize, weft_diag *d)
{
    weft_traffic tm;
    uint64_t blk = size / gs ? size / gs : 1;
    weft_err err = weft_traffic_uniform(gs, blk * gs, &tm, d);
    if (err)
        return err;
    weft_plan_info info = {WEFT_COLL_ALLTOALL, c->ranks, {0}, 1, 0, false};
    weft_plan *p = NULL;
    if ((err = weft_plan_new(&info, &p))) {
        weft_traffic_free(&tm);
        return weft_diag_code(d, err);
    }
    for (uint32_t g0 = 0; g0 < n && !err; g0 += gs)
        for (uint32_t i = 0; i < gs && !err; i++)
            for (uint32_t j = 0; j < gs && !err; j++) {
                if (i == j || !tm.bytes[(size_t)i * gs + j])
                    continue;
                uint32_t a = pos[g0 + i], b = pos[g0 + j];
                weft_op op = {WEFT_OP_COPY, {a}, {b}, WEFT_BUF_IN, WEFT_BUF_OUT, b, a, 1, 0};
                err = weft_plan_add_op(p, &op, NULL, 0, NULL);
            }
    weft_traffic_free(&tm);
    return plan_done(p, err, blk * c->ranks, out, psize, d);
}

/* The plan of copies over the fabric's ranks, as an all-to-all plan of
 * direct ops: chain, every group's members one after another from its
 * first (each hop after the one before it); else one op per pair (gs 2).
 * Each op moves `size` bytes (one op carries S / N bytes: S = size x
 * ranks). */
static weft_err plan_copies(weft_work_ctx *c, const uint32_t *pos, uint32_t n, uint32_t gs,
                            bool chain, uint64_t size, weft_plan **out, uint64_t *psize,
                            weft_diag *d)
{
    weft_plan_info info = {WEFT_COLL_ALLTOALL, c->ranks, {0}, 1, 0, false};
    weft_plan *p = NULL;
    weft_err err = weft_plan_new(&info, &p);
    if (err)
        return weft_diag_code(d, err);
    uint32_t prev = 0, id = 0;
    for (uint32_t g0 = 0; g0 < n && !err; g0 += gs)
        for (uint32_t i = 0; i + 1 < gs && !err && (chain || i == 0); i++) {
            uint32_t a = pos[g0 + i], b = pos[g0 + i + 1];
            weft_op op = {WEFT_OP_COPY, {a}, {b}, WEFT_BUF_IN, WEFT_BUF_OUT, b, a, 1, 0};
            err = weft_plan_add_op(p, &op, &prev, i > 0 ? 1 : 0, &id);
            prev = id;
        }
    return plan_done(p, err, size * c->ranks, out, psize, d);
}

static weft_err sim_planned(const weft_work_ctx *c, weft_plan *p, uint64_t psize, double *out,
                            weft_diag *d)
{
    weft_sim_result r;
    weft_err err = weft_sim_plan(c->topo, p, psize, &c->opts, &r, d);
    if (!err)
        *out = r.time_s;
    weft_plan_free(p);
    return err;
}

/* A uniform all-to-all in every group at once (plan_alltoall). */
static weft_err sim_alltoall(weft_work_ctx *c, const uint32_t *pos, uint32_t n, uint32_t gs,
                             uint64_t size, double *out, weft_diag *d)
{
    weft_plan *p = NULL;
    uint64_t psize = 0;
    weft_err err = plan_alltoall(c, pos, n, gs, size, &p, &psize, d);
    return err ? err : sim_planned(c, p, psize, out, d);
}

/* Copies over the fabric's ranks (plan_copies). */
static weft_err sim_copies(weft_work_ctx *c, const uint32_t *pos, uint32_t n, uint32_t gs,
                           bool chain, uint64_t size, double *out, weft_diag *d)
{
    weft_plan *p = NULL;
    uint64_t psize = 0;
    weft_err err = plan_copies(c, pos, n, gs, chain, size, &p, &psize, d);
    return err ? err : sim_planned(c, p, psize, out, d);
}

struct weft__gcache_entry {
    uint32_t coll, p2p, n, gs;
    uint64_t size;
    uint32_t *pos;
    double time_s;
};

void weft__work_gcache_free(weft_work_ctx *c)
{
    for (size_t i = 0; i < c->gcache_n; i++)
        weft__free(c->gcache[i].pos);
    weft__free(c->gcache);
    c->gcache = NULL;
    c->gcache_n = c->gcache_cap = 0;
}

/* The cached time of (coll, p2p, pos[0 .. n), gs, size), or false. */
static bool gcache_find(const weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                        uint32_t n, uint32_t gs, uint64_t size, double *t)
{
    for (size_t i = 0; i < c->gcache_n; i++) {
        const struct weft__gcache_entry *e = &c->gcache[i];
        if (e->coll == (uint32_t)coll && e->p2p == p2p && e->n == n && e->gs == gs &&
            e->size == size && !memcmp(e->pos, pos, (size_t)n * sizeof *pos)) {
            *t = e->time_s;
            return true;
        }
    }
    return false;
}

static weft_err gcache_add(weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                           uint32_t n, uint32_t gs, uint64_t size, double t, weft_diag *d)
{
    uint32_t *copy = weft__malloc((size_t)n * sizeof *copy);
    if (!copy ||
        weft__grow((void **)&c->gcache, &c->gcache_cap, c->gcache_n + 1, sizeof *c->gcache)) {
        weft__free(copy);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    memcpy(copy, pos, (size_t)n * sizeof *pos);
    c->gcache[c->gcache_n++] =
        (struct weft__gcache_entry){(uint32_t)coll, p2p, n, gs, size, copy, t};
    return WEFT_OK;
}

weft_err weft__work_groups_s(weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                             uint32_t n, uint32_t gs, uint64_t size, double *out, weft_diag *d)
{
    if (gs < 2 || size == 0 || n == 0) {
        *out = 0;
        return WEFT_OK;
    }
    if (gcache_find(c, coll, p2p, pos, n, gs, size, out)) {
        c->hits++;
        return WEFT_OK;
    }
    double t = 0;
    weft_err err;
    if (weft__work_chooses(c, coll, p2p)) {
        err = weft__work_choose_s(c, coll, pos, n, gs, size, &t, d);
    } else if (p2p || coll == WEFT_COLL_BROADCAST) {
        err = sim_copies(c, pos, n, gs, !p2p, size, &t, d);
    } else if (coll == WEFT_COLL_ALLTOALL) {
        err = sim_alltoall(c, pos, n, gs, size, &t, d);
    } else {
        if ((err = scratch(c, n, d)))
            return err;
        memcpy(c->scratch, pos, (size_t)n * sizeof *pos);
        err = sim_rings(c, n, gs, coll, size, &t, d);
    }
    if (err)
        return err;
    c->sims++;
    if ((err = gcache_add(c, coll, p2p, pos, n, gs, size, t, d)))
        return err;
    *out = t;
    return WEFT_OK;
}

/* ---- Several sizes at once -----------------------------------------------
 *
 * weft__work_traffics_groups_s sorts its sizes, in order, as the calls would
 * find them (nothing to move, cached before the batch, a size an earlier
 * item simulates, a simulation); runs the simulations at once, each
 * reading the context alone (rings_time, its own ring buffer); then, in
 * order again, counts and caches as the calls would have. The times are
 * the calls': each is one deterministic simulation. */

typedef enum gitem_kind { GITEM_ZERO, GITEM_CACHED, GITEM_SAME, GITEM_SIM } gitem_kind;

typedef struct gitem {
    gitem_kind kind;
    size_t src; /* GITEM_SAME: the item simulating its size */
    double time_s;
    weft_err err;
    weft_diag d;
} gitem;

typedef struct gbatch {
    const weft_work_ctx *c;
    weft_coll coll;
    const uint32_t *pos;
    uint32_t n, gs;
    const uint64_t *size;
    gitem *it;
    const size_t *run; /* the items simulated, in order */
} gbatch;

/* Simulates item b->run[k] (a weft__par_for item): writes that item alone. */
static weft_err gbatch_run(void *ctx, size_t k, unsigned worker)
{
    (void)worker;
    const gbatch *b = ctx;
    size_t i = b->run[k];
    gitem *it = &b->it[i];
    weft_diag_clear(&it->d);
    uint32_t *ord = weft__malloc((size_t)b->n * ring_k(b->c->topo, b->pos, b->gs) * sizeof *ord);
    it->err =
        ord ? rings_time(b->c, b->pos, ord, b->n, b->gs, b->coll, b->size[i], &it->time_s, &it->d)
            : weft_diag_code(&it->d, WEFT_ENOMEM);
    weft__free(ord);
    return it->err;
}

/* Whether the sizes' simulations can run at once: ring collectives not
 * ranked by weft__work_choose_s. */
static bool gbatch_able(const weft_work_ctx *c, weft_coll coll, uint32_t n, uint32_t gs)
{
    bool rings = coll == WEFT_COLL_ALLREDUCE || coll == WEFT_COLL_ALLGATHER ||
                 coll == WEFT_COLL_REDUCESCATTER;
    return rings && gs >= 2 && n > 0 && !weft__work_chooses(c, coll, false);
}

/* Sorts the sizes as the calls would find them, listing the ones to
 * simulate in run; returns how many. */
static size_t gbatch_classify(const weft_work_ctx *c, weft_coll coll, const uint32_t *pos,
                              uint32_t n, uint32_t gs, const uint64_t *size, size_t m, gitem *it,
                              size_t *run)
{
    size_t nrun = 0;
    for (size_t i = 0; i < m; i++) {
        it[i].kind = GITEM_SIM;
        if (size[i] == 0) {
            it[i].kind = GITEM_ZERO;
        } else if (gcache_find(c, coll, false, pos, n, gs, size[i], &it[i].time_s)) {
            it[i].kind = GITEM_CACHED;
        } else {
            for (size_t k = 0; k < nrun && it[i].kind == GITEM_SIM; k++)
                if (size[run[k]] == size[i]) {
                    it[i].kind = GITEM_SAME;
                    it[i].src = run[k];
                }
        }
        if (it[i].kind == GITEM_SIM)
            run[nrun++] = i;
    }
    return nrun;
}

/* After the runs: counts and caches in order, up to the first failing
 * size, whose error it returns. */
static weft_err gbatch_commit(weft_work_ctx *c, const gbatch *b, size_t m, size_t nrun, double *out,
                              weft_diag *d)
{
    gitem *it = b->it;
    size_t stop = m; /* the first failing item: every one before it has run */
    for (size_t k = 0; k < nrun && stop == m; k++)
        if (it[b->run[k]].err)
            stop = b->run[k];
    weft_err e = WEFT_OK;
    for (size_t i = 0; i < stop && !e; i++) {
        switch (it[i].kind) {
        case GITEM_ZERO:
            out[i] = 0;
            break;
        case GITEM_CACHED:
            c->hits++;
            out[i] = it[i].time_s;
            break;
        case GITEM_SAME:
            c->hits++;
            out[i] = out[it[i].src];
            break;
        case GITEM_SIM:
            c->sims++;
            out[i] = it[i].time_s;
            e = gcache_add(c, b->coll, false, b->pos, b->n, b->gs, b->size[i], it[i].time_s, d);
            break;
        }
    }
    if (!e && stop < m) {
        e = it[stop].err;
        if (d)
            *d = it[stop].d;
    }
    return e;
}

weft_err weft__work_groups_plan(weft_work_ctx *c, weft_coll coll, bool p2p, const uint32_t *pos,
                                uint32_t n, uint32_t gs, uint64_t size, weft_plan **out,
                                uint64_t *psize, uint32_t *ring, weft_diag *d)
{
    *out = NULL;
    *psize = 0;
    *ring = 0;
    if (gs < 2 || size == 0 || n == 0)
        return WEFT_OK;
    if (p2p || coll == WEFT_COLL_BROADCAST)
        return plan_copies(c, pos, n, gs, !p2p, size, out, psize, d);
    if (coll == WEFT_COLL_ALLTOALL)
        return plan_alltoall(c, pos, n, gs, size, out, psize, d);
    weft_err err = scratch(c, n, d);
    if (err)
        return err;
    memcpy(c->scratch, pos, (size_t)n * sizeof *pos);
    *ring = gs;
    return plan_rings(c, n, gs, coll, size, out, psize, d);
}

weft_err weft__work_coll_s(weft_work_ctx *c, const weft_parallel *p, uint32_t dp, uint32_t mask,
                           weft_coll coll, bool pairs, uint64_t size, double *out, weft_diag *d)
{
    uint32_t gs = group_size(p, dp, mask);
    if (gs < 2 || size == 0) {
        *out = 0;
        return WEFT_OK;
    }
    weft__cache_key key;
    memset(&key, 0, sizeof key);
    key.coll = coll;
    key.pairs = pairs;
    key.mask = mask;
    key.dp = dp;
    key.tp = p->tp;
    key.cp = p->cp;
    key.ep = p->ep;
    key.pp = p->pp;
    memcpy(key.order, p->order, sizeof key.order);
    key.size = size;
    for (size_t i = 0; i < c->cache_n; i++)
        if (!memcmp(&c->cache[i].key, &key, sizeof key)) {
            c->hits++;
            *out = c->cache[i].time_s;
            return WEFT_OK;
        }
    /* A miss here can still be a simulation already run: layouts that
     * differ (CP 2 x DP 256 and CP 4 x DP 128 with TP 1, PP 1) can put the
     * same ranks in the same groups, so the groups' positions go to the
     * cache of weft__work_groups_s, which runs the same simulation. */
    uint32_t *pos = weft__malloc((size_t)c->ranks * sizeof *pos);
    if (!pos)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft__work_groups(p, dp, mask, pos);
    double t = 0;
    weft_err err;
    if (pairs) {
        /* Stage s with stage s + 1, s even: each sends `size` both ways. */
        uint32_t m = 0;
        for (uint32_t g0 = 0; g0 < c->ranks; g0 += gs)
            for (uint32_t s = 0; s + 1 < gs; s += 2) {
                pos[m++] = pos[g0 + s];
                pos[m++] = pos[g0 + s + 1];
            }
        err = weft__work_groups_s(c, WEFT_COLL_ALLGATHER, false, pos, m, 2, 2 * size, &t, d);
    } else {
        err = weft__work_groups_s(c, coll, false, pos, c->ranks, gs, size, &t, d);
    }
    weft__free(pos);
    if (err)
        return err;
    if (weft__grow((void **)&c->cache, &c->cache_cap, c->cache_n + 1, sizeof *c->cache))
        return weft_diag_code(d, WEFT_ENOMEM);
    c->cache[c->cache_n].key = key;
    c->cache[c->cache_n].time_s = t;
    c->cache_n++;
    *out = t;
    return WEFT_OK;
}

/* ---- Skewed expert load ------------------------------------------------- */

struct weft__moe_entry {
    uint32_t tp, cp, ep, pp, dp, experts, topk, zipf;
    uint32_t order[WEFT__DIM_COUNT];
    uint64_t tokens, hbytes, seed;
    weft__moe_cost cost;
};

void weft__work_moe_free(weft_work_ctx *c)
{
    weft__free(c->moe);
    c->moe = NULL;
    c->moe_n = c->moe_cap = 0;
}

/* ---- Transposed matrices ------------------------------------------------
 *
 * A fabric is reversible when every link has exactly one reverse (a link
 * from its destination to its source) of the same bandwidth, no link is
 * shaped, and every route between ranks b -> a crosses the reverses of the
 * links of a -> b with the same shares and latency (weft_paths). Then the
 * all-to-all of a matrix's transpose (weft_synth_a2a_matrix: a copy per
 * entry, pair (b, a) carrying M(a, b)) is the matrix's problem with every
 * link reversed: the same capacities, routes, latencies, extra hop costs
 * (sim_model_route_extra reads the route's hosts and slowest link) and
 * communicator, so the same max-min rates and times in exact arithmetic.
 * The backward all-to-all of an embedding or MoE step is the forward's
 * transpose: on such a fabric it takes the forward's time instead of a
 * second simulation (one simulated gives the other within rounding: the
 * sparse row-wise all-to-all of 128 GPUs, h100:16, took 0.0046510887200004658
 * and 0.004651088720000811 s, 7e-14 apart). */
static bool reverse_link(const weft_topo *t, uint32_t l, uint32_t *out)
{
    weft_node_id u = weft_topo_link_src(t, (weft_link_id){l}),
                 v = weft_topo_link_dst(t, (weft_link_id){l});
    uint32_t first, count, found = 0;
    weft_topo_out_links(t, v, &first, &count);
    for (uint32_t k = first; k < first + count; k++)
        if (weft_topo_link_dst(t, (weft_link_id){k}).v == u.v) {
            *out = k;
            found++;
        }
    return found == 1 && weft_rat_eq(weft_topo_link_bw(t, (weft_link_id){l}),
                                     weft_topo_link_bw(t, (weft_link_id){*out}));
}

static bool reversible_check(weft_work_ctx *c)
{
    const weft_topo *t = c->topo;
    uint32_t nl = weft_topo_num_links(t), n = c->ranks;
    uint32_t *rev = weft__malloc((nl ? nl : 1) * sizeof *rev);
    uint32_t *mark = weft__calloc(nl ? nl : 1, sizeof *mark);
    weft_rat *share = weft__malloc((nl ? nl : 1) * sizeof *share);
    weft_paths *paths = NULL;
    bool ok = rev && mark && share && !weft_paths_new(t, &paths);
    for (uint32_t l = 0; ok && l < nl; l++) {
        weft_link_shaper sh;
        ok = !weft_topo_link_shaper(t, (weft_link_id){l}, &sh) && reverse_link(t, l, &rev[l]);
    }
    uint32_t stamp = 0;
    for (uint32_t a = 0; ok && a < n; a++)
        for (uint32_t b = a + 1; ok && b < n; b++) {
            weft_node_id na = weft_topo_rank_node(t, (weft_rank){a}),
                         nb = weft_topo_rank_node(t, (weft_rank){b});
            weft_paths_route ab, ba;
            if (na.v == nb.v)
                continue;
            if (weft_paths_route_get(paths, na, nb, &ab, NULL)) {
                ok = false;
                break;
            }
            stamp++;
            uint32_t m = ab.n;
            weft_rat lat = ab.lat_ns;
            for (uint32_t k = 0; k < m; k++) {
                mark[rev[ab.link[k]]] = stamp;
                share[rev[ab.link[k]]] = ab.frac[k];
            }
            ok = !weft_paths_route_get(paths, nb, na, &ba, NULL) && ba.n == m &&
                 weft_rat_eq(ba.lat_ns, lat);
            for (uint32_t k = 0; ok && k < ba.n; k++)
                ok = mark[ba.link[k]] == stamp && weft_rat_eq(share[ba.link[k]], ba.frac[k]);
        }
    weft_paths_free(paths);
    weft__free(rev);
    weft__free(mark);
    weft__free(share);
    return ok;
}

/* Whether t is the transpose of the n x n matrix prev. */
static bool transpose_of(const weft_traffic *t, const uint64_t *prev, uint32_t n)
{
    if (t->ranks != n)
        return false;
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++)
            if (weft_traffic_at(t, a, b) != prev[(size_t)b * n + a])
                return false;
    return true;
}

/* Whether the fabric is reversible (above), checked once per context. */
static bool reversible(weft_work_ctx *c)
{
    if (!c->rev)
        c->rev = reversible_check(c) ? 1 : -1;
    return c->rev > 0;
}

/* Is t the transpose of the last matrix simulated, with the same
 * settings, on a reversible fabric? */
static bool last_transposed(weft_work_ctx *c, const weft_traffic *t)
{
    if (!c->last_bytes || memcmp(&c->last_opts, &c->opts, sizeof c->opts) ||
        !transpose_of(t, c->last_bytes, c->last_ranks))
        return false;
    return reversible(c);
}

/* Remembers t and its time (nothing when out of memory: the next
 * transpose is then simulated). */
static void remember(weft_work_ctx *c, const weft_traffic *t, double s)
{
    size_t nn = (size_t)t->ranks * t->ranks;
    if (c->last_ranks != t->ranks) {
        weft__free(c->last_bytes);
        c->last_bytes = weft__malloc(nn * sizeof *c->last_bytes);
        c->last_ranks = c->last_bytes ? t->ranks : 0;
    }
    if (!c->last_bytes)
        return;
    memcpy(c->last_bytes, t->bytes, nn * sizeof *c->last_bytes);
    c->last_s = s;
    memcpy(&c->last_opts, &c->opts, sizeof c->opts);
}

/* Whether some bytes of t cross between distinct ranks. */
static bool crosses(const weft_traffic *t)
{
    for (uint32_t a = 0; a < t->ranks; a++)
        for (uint32_t b = 0; b < t->ranks; b++)
            if (a != b && weft_traffic_at(t, a, b))
                return true;
    return false;
}

/* The plain alltoallv of t simulated: one direct copy per nonzero
 * off-diagonal entry. Reads c alone. */
static weft_err plain_s(const weft_work_ctx *c, const weft_traffic *t, double *out, weft_diag *d)
{
    weft_plan *p = NULL;
    weft_err err = weft_synth_a2a_matrix(t, &p, d);
    if (err)
        return err;
    return sim_planned(c, p, (uint64_t)(weft_plan_traffic_size(p) + 0.5), out, d);
}

/* An alltoallv of matrix t over the fabric's ranks as one direct copy per
 * nonzero off-diagonal entry (weft_synth_a2a_matrix: what NCCL's
 * all-to-all of grouped sends and receives moves); 0 when nothing
 * crosses between distinct ranks; the last matrix's time when t is its
 * transpose on a reversible fabric (above). Under WEFT_WORK_COLL_BEST the
 * fastest alltoallv plan of t instead, and with a named schedule that
 * one's (weft__work_choice_traffic_s). */
static weft_err sim_traffic(weft_work_ctx *c, const weft_traffic *t, double *out, weft_diag *d)
{
    if (!crosses(t)) {
        *out = 0;
        return WEFT_OK;
    }
    /* Each matrix ranked on its own: the transpose of the fastest plan of
     * one matrix need not be the fastest of the other's. */
    if (c->a2a_algo[0] || weft__work_chooses(c, WEFT_COLL_ALLTOALL, false))
        return weft__work_choice_traffic_s(c, t, out, d);
    if (last_transposed(c, t)) {
        *out = c->last_s;
        return WEFT_OK;
    }
    weft_err err = plain_s(c, t, out, d);
    if (!err)
        remember(c, t, *out);
    return err;
}

weft_err weft__work_traffic_s(weft_work_ctx *c, const weft_traffic *t, double *out, weft_diag *d)
{
    if (t->ranks != c->ranks)
        return weft_diag_set(d, WEFT_EINVAL, "traffic matrix of %u ranks on a fabric of %u",
                             t->ranks, c->ranks);
    c->sims++;
    return sim_traffic(c, t, out, d);
}

/* ---- Several matrices at once --------------------------------------------
 *
 * weft__work_traffics_s decides first, in matrix order, what
 * sim_traffic would do with each (nothing, the last matrix's time, an
 * earlier one's, a simulation, a choice), with the context's memo and
 * reversibility as they would stand; then runs the simulations and
 * rankings at once, each reading the context alone (its fabric and
 * settings: the fabric is immutable, and weft_sim_plan and weft_choose
 * keep their routes and scratch per call); then, in matrix order again,
 * does what the calls would have done to the context (counters, choices,
 * the last matrix). The times are those of the calls: each is one
 * deterministic simulation of the same plan. (One difference: where
 * remembering a matrix runs out of memory, the calls would simulate its
 * transpose, which the batch takes from it, the same within rounding.)
 * A ranking runs its candidates on threads of its own as well
 * (weft_choose), so a batch of rankings has up to threads x threads at
 * once (at most the matrices x the candidates). */

typedef enum batch_kind {
    BATCH_ZERO,   /* nothing crosses */
    BATCH_LAST,   /* the transpose of the context's last matrix */
    BATCH_SAME,   /* the transpose of matrix src, simulated in this batch */
    BATCH_SIM,    /* simulated (plain_s) */
    BATCH_CHOICE, /* ranked or run as the named schedule (weft__work_traffic_choice) */
} batch_kind;

typedef struct batch_item {
    const weft_traffic *t;
    batch_kind kind;
    size_t src;
    double time_s;
    weft_err err; /* its simulation's */
    weft_work_choice ch;
    weft_diag d;
} batch_item;

typedef struct batch {
    const weft_work_ctx *c;
    batch_item *it;
    size_t *run; /* the items simulated, in matrix order */
} batch;

/* Runs item b->run[k] (a weft__par_for item): writes that item alone. */
static weft_err batch_run(void *ctx, size_t k, unsigned worker)
{
    (void)worker;
    const batch *b = ctx;
    batch_item *it = &b->it[b->run[k]];
    weft_diag_clear(&it->d);
    if (it->kind == BATCH_SIM) {
        it->err = plain_s(b->c, it->t, &it->time_s, &it->d);
    } else {
        it->err = weft__work_traffic_choice(b->c, it->t, &it->ch, &it->d);
        if (!it->err)
            it->time_s = it->ch.time_s;
    }
    return it->err;
}

/* Sorts items [0, n) of what weft__work_traffics_s was given (every
 * matrix of the fabric's ranks) as the calls would find them, listing the
 * ones to simulate or rank in run; returns how many. */
static size_t batch_classify(weft_work_ctx *c, batch_item *it, size_t n, size_t *run)
{
    bool choose = c->a2a_algo[0] || weft__work_chooses(c, WEFT_COLL_ALLTOALL, false);
    const uint64_t *prev = NULL; /* the last matrix simulated, as the memo would hold it */
    uint32_t prev_n = 0;
    size_t prev_i = SIZE_MAX, nrun = 0;
    if (c->last_bytes && !memcmp(&c->last_opts, &c->opts, sizeof c->opts)) {
        prev = c->last_bytes;
        prev_n = c->last_ranks;
    }
    for (size_t i = 0; i < n; i++) {
        const weft_traffic *t = it[i].t;
        if (!crosses(t)) {
            it[i].kind = BATCH_ZERO;
        } else if (choose) {
            it[i].kind = BATCH_CHOICE;
        } else if (prev && transpose_of(t, prev, prev_n) && reversible(c)) {
            it[i].kind = prev_i == SIZE_MAX ? BATCH_LAST : BATCH_SAME;
            it[i].src = prev_i;
        } else {
            it[i].kind = BATCH_SIM;
            prev = t->bytes;
            prev_n = t->ranks;
            prev_i = i;
        }
        if (it[i].kind >= BATCH_SIM)
            run[nrun++] = i;
    }
    return nrun;
}

/* After the runs: does in matrix order what the calls would have done to
 * the context, up to the first failing matrix, whose error it returns. */
static weft_err batch_commit(weft_work_ctx *c, batch_item *it, size_t n, const size_t *run,
                             size_t nrun, double *out, weft_diag *d)
{
    size_t stop = n; /* the failing matrix: every one simulated before it has run */
    for (size_t k = 0; k < nrun && stop == n; k++)
        if (it[run[k]].err)
            stop = run[k];
    for (size_t i = 0; i < stop; i++) {
        c->sims++;
        switch (it[i].kind) {
        case BATCH_ZERO:
            out[i] = 0;
            break;
        case BATCH_LAST:
            out[i] = c->last_s;
            break;
        case BATCH_SAME:
            out[i] = out[it[i].src];
            break;
        case BATCH_SIM:
            out[i] = it[i].time_s;
            remember(c, it[i].t, out[i]);
            break;
        case BATCH_CHOICE: {
            out[i] = it[i].time_s;
            weft_err e = weft__work_record(c, &it[i].ch, d);
            if (e)
                return e;
            break;
        }
        }
    }
    if (stop == n)
        return WEFT_OK;
    c->sims++;
    if (d)
        *d = it[stop].d;
    return it[stop].err;
}

/* The matrices of t before the first of other ranks, ready to sort. */
static weft_err batch_new(const weft_work_ctx *c, const weft_traffic *const *t, size_t n,
                          batch_item **it, size_t **run, size_t *m, weft_diag *d)
{
    *m = 0;
    while (*m < n && t[*m]->ranks == c->ranks)
        (*m)++;
    *it = weft__calloc(*m ? *m : 1, sizeof **it);
    *run = weft__calloc(*m ? *m : 1, sizeof **run);
    if (!*it || !*run)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (size_t i = 0; i < *m; i++)
        (*it)[i].t = t[i];
    return WEFT_OK;
}

static weft_err other_ranks(const weft_work_ctx *c, const weft_traffic *t, weft_diag *d)
{
    return weft_diag_set(d, WEFT_EINVAL, "traffic matrix of %u ranks on a fabric of %u", t->ranks,
                         c->ranks);
}

weft_err weft__work_traffics_s(weft_work_ctx *c, const weft_traffic *const *t, size_t n,
                               double *out, weft_diag *d)
{
    return weft__work_traffics_groups_s(c, t, n, out, WEFT_COLL_ALLREDUCE, NULL, 0, 0, NULL, 0,
                                        NULL, d);
}

/* Both batches' runs in one loop: the matrices' first. */
typedef struct both {
    batch *tb;
    size_t nt;
    gbatch *gb;
} both;

static weft_err both_run(void *ctx, size_t k, unsigned worker)
{
    const both *x = ctx;
    return k < x->nt ? batch_run(x->tb, k, worker) : gbatch_run(x->gb, k - x->nt, worker);
}

weft_err weft__work_traffics_groups_s(weft_work_ctx *c, const weft_traffic *const *t, size_t nt,
                                      double *at, weft_coll coll, const uint32_t *pos, uint32_t n,
                                      uint32_t gs, const uint64_t *size, size_t ns, double *ar,
                                      weft_diag *d)
{
    batch_item *it = NULL;
    size_t *run = NULL, m = 0, nrun = 0, grun = 0;
    gitem *git = NULL;
    size_t *gr = NULL;
    bool groups = ns && gbatch_able(c, coll, n, gs);
    weft_err e = batch_new(c, t, nt, &it, &run, &m, d);
    if (!e && groups &&
        (!(git = weft__calloc(ns, sizeof *git)) || !(gr = weft__calloc(ns, sizeof *gr))))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (e)
        goto done;
    nrun = batch_classify(c, it, m, run);
    if (groups) {
        grun = gbatch_classify(c, coll, pos, n, gs, size, ns, git, gr);
        nccl_ready(c);
    }
    batch tb = {c, it, run};
    gbatch gb = {c, coll, pos, n, gs, size, git, gr};
    both x = {&tb, nrun, &gb};
    weft__par_for(nrun + grun, weft__par_workers(nrun + grun), both_run, &x);
    if ((e = batch_commit(c, it, m, run, nrun, at, d)))
        goto done;
    if (m < nt) {
        e = other_ranks(c, t[m], d);
        goto done;
    }
    if (groups)
        e = gbatch_commit(c, &gb, ns, grun, ar, d);
    for (size_t i = 0; i < ns && !groups && !e; i++)
        e = weft__work_groups_s(c, coll, false, pos, n, gs, size[i], &ar[i], d);
done:
    weft__free(it);
    weft__free(run);
    weft__free(git);
    weft__free(gr);
    return e;
}

weft_err weft__work_moe_s(weft_work_ctx *c, const weft_parallel *p, uint32_t dp,
                          const weft_model *m, uint64_t tokens, uint64_t hbytes,
                          weft__moe_cost *out, weft_diag *d)
{
    struct weft__moe_entry key;
    memset(&key, 0, sizeof key);
    key.tp = p->tp;
    key.cp = p->cp;
    key.ep = p->ep;
    key.pp = p->pp;
    key.dp = dp;
    key.experts = m->experts;
    key.topk = m->topk;
    key.zipf = p->moe_zipf_milli;
    memcpy(key.order, p->order, sizeof key.order);
    key.tokens = tokens;
    key.hbytes = hbytes;
    key.seed = p->moe_seed;
    for (size_t i = 0; i < c->moe_n; i++) {
        struct weft__moe_entry *e = &c->moe[i];
        if (e->tp == key.tp && e->cp == key.cp && e->ep == key.ep && e->pp == key.pp &&
            e->dp == key.dp && e->experts == key.experts && e->topk == key.topk &&
            e->zipf == key.zipf && !memcmp(e->order, key.order, sizeof key.order) &&
            e->tokens == key.tokens && e->hbytes == key.hbytes && e->seed == key.seed) {
            c->hits += 2;
            *out = e->cost;
            return WEFT_OK;
        }
    }
    uint32_t n = c->ranks, gs = p->ep;
    uint32_t *pos = weft__malloc((size_t)n * sizeof *pos);
    if (!pos)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft__work_groups(p, dp, 1u << WEFT_DIM_EP, pos);
    weft_traffic all = {0, NULL}, tr = {0, NULL};
    weft_err err = weft_traffic_new(n, &all, d);
    uint64_t offdiag = 0;
    for (uint32_t g0 = 0; g0 < n && !err; g0 += gs) {
        weft_traffic_moe_params mp = {gs,
                                      m->experts,
                                      m->topk,
                                      tokens,
                                      hbytes,
                                      WEFT_TRAFFIC_SKEW_ZIPF,
                                      p->moe_zipf_milli,
                                      p->moe_seed + g0 / gs};
        weft_traffic one;
        if ((err = weft_traffic_moe(&mp, &one, d)))
            break;
        for (uint32_t i = 0; i < gs; i++)
            for (uint32_t j = 0; j < gs; j++) {
                uint64_t v = weft_traffic_at(&one, i, j);
                all.bytes[(size_t)pos[g0 + i] * n + pos[g0 + j]] = v;
                if (i != j)
                    offdiag += v;
            }
        weft_traffic_free(&one);
    }
    weft__free(pos);
    weft__moe_cost cost = {0, 0, 0, 0};
    if (!err) {
        uint64_t mx = 0;
        for (uint32_t j = 0; j < n; j++) {
            uint64_t s = weft_traffic_recv(&all, j);
            mx = s > mx ? s : mx;
        }
        cost.max_recv_tokens = hbytes ? mx / hbytes : 0;
        cost.mean_offdiag = (double)offdiag / n;
        err = sim_traffic(c, &all, &cost.dispatch_s, d);
    }
    if (!err && !(err = weft_traffic_transpose(&all, &tr, d)))
        err = sim_traffic(c, &tr, &cost.combine_s, d);
    weft_traffic_free(&all);
    weft_traffic_free(&tr);
    if (err)
        return err;
    c->sims += 2;
    if (weft__grow((void **)&c->moe, &c->moe_cap, c->moe_n + 1, sizeof *c->moe))
        return weft_diag_code(d, WEFT_ENOMEM);
    key.cost = cost;
    c->moe[c->moe_n++] = key;
    *out = cost;
    return WEFT_OK;
}
