/* The DLRM sharding planner (weft_dlrm_plan, weft/dlrm.h): a cost model of
 * the embedding part of the step per table sharding, and its search. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "weft/dlrm.h"
#include "work/work_internal.h"

/* The line t = lat + bytes / bw through (x0, t0) and (x1, t1), x0 < x1;
 * lat at least 0, bw infinite when the time does not grow. */
static void line(double t0, double t1, double x0, double x1, double *lat, double *bw)
{
    double slope = (t1 - t0) / (x1 - x0);
    if (!(slope > 0)) {
        *bw = INFINITY;
        *lat = t1 > 0 ? t1 : 0;
        return;
    }
    *bw = 1 / slope;
    *lat = t0 - x0 * slope > 0 ? t0 - x0 * slope : 0;
}

weft_err weft_dlrm_costs_calibrate(weft_work_ctx *c, const weft_dlrm *m, weft_dlrm_costs *k,
                                   weft_diag *d)
{
    memset(k, 0, sizeof *k);
    if (!c->gpu)
        return weft_diag_set(d, WEFT_EINVAL, "dlrm: the planner needs a GPU");
    k->hbm_bw = c->gpu->hbm_bw;
    k->hbm_bytes = c->gpu->hbm_bytes;
    k->a2a_bw = k->ar_bw = INFINITY;
    uint32_t n = c->ranks;
    if (n < 2)
        return WEFT_OK;
    /* A uniform all-to-all of what a GPU's samples receive from each other
     * GPU when the tables are spread evenly, and one of 1/16 of that: the
     * line through both gives the fixed time and the bandwidth. */
    uint64_t per = 0;
    for (uint32_t t = 0; t < m->emb.ntables; t++)
        per += (uint64_t)m->emb.tables[t].dim * m->emb.tables[t].dtype_bytes;
    per = per * m->emb.batch / n;
    if (per < 16)
        per = 16;
    /* Both all-to-alls and both all-reduces (1 and 64 MiB) at once. */
    double ta[2] = {0, 0}, tr[2] = {0, 0};
    weft_traffic u[2] = {{0, NULL}, {0, NULL}};
    uint32_t *pos = weft__malloc((size_t)n * sizeof *pos);
    weft_err e = pos ? WEFT_OK : weft_diag_code(d, WEFT_ENOMEM);
    for (int q = 0; q < 2 && !e; q++) {
        uint64_t x = q ? per : per / 16;
        if ((e = weft_traffic_new(n, &u[q], d)))
            break;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                u[q].bytes[(size_t)i * n + j] = i == j ? 0 : x;
    }
    for (uint32_t i = 0; i < n && !e; i++)
        pos[i] = i;
    const weft_traffic *ts[2] = {&u[0], &u[1]};
    const uint64_t sizes[2] = {1ull << 20, 64ull << 20};
    if (!e)
        e = weft__work_traffics_groups_s(c, ts, 2, ta, WEFT_COLL_ALLREDUCE, pos, n, n, sizes, 2, tr,
                                         d);
    weft_traffic_free(&u[0]);
    weft_traffic_free(&u[1]);
    weft__free(pos);
    if (e)
        return e;
    line(ta[0], ta[1], (double)(n - 1) * (double)(per / 16), (double)(n - 1) * (double)per,
         &k->a2a_lat_s, &k->a2a_bw);
    line(tr[0], tr[1], (double)(1ull << 20), (double)(64ull << 20), &k->ar_lat_s, &k->ar_bw);
    return WEFT_OK;
}

/* Per-GPU sums of the tables on slots (table-wise and column-wise: each
 * on one GPU); recv is recv_all + recv[g]. A row-wise or data-parallel
 * table adds the same to every GPU, so those are summed once, in all_*
 * (rows, out, send, mem), and added to each GPU's at the end: a cost is
 * O(tables + GPUs), not O(tables x GPUs) (the descent at 128 GPUs x
 * 1,000 row-wise tables spent 1.2 s in the per-GPU loops). */
typedef struct sums {
    double *rows, *out, *send, *recv, *mem;
    double recv_all, ar;
    double all_rows, all_out, all_send, all_mem;
} sums;

static void add_slot(sums *s, uint32_t n, uint32_t o, double B, double P, double D, double E,
                     double R)
{
    s->rows[o] += n * B * P * D * E;
    s->out[o] += n * B * D * E;
    s->send[o] += (n - 1) * B * D * E;
    s->recv_all += B * D * E;
    s->recv[o] -= B * D * E;
    s->mem[o] += R * D * E;
}

static double cost(const weft_dlrm *m, const weft_dlrm_costs *k, sums *s)
{
    uint32_t n = m->emb.gpus;
    double B = (double)m->emb.batch;
    memset(s->rows, 0, 5 * (size_t)n * sizeof *s->rows);
    s->recv_all = s->ar = 0;
    s->all_rows = s->all_out = s->all_send = s->all_mem = 0;
    uint64_t slot = 0;
    /* A row-wise table's share of bags that reach a given block, for the
     * last pooling factor seen (tables mostly share one: a pow a table
     * took 13 % of the descent). */
    double q_pool = -1, q = 1;
    for (uint32_t t = 0; t < m->emb.ntables; t++) {
        const weft_emb_table *tb = &m->emb.tables[t];
        double P = tb->pooling, D = tb->dim, E = tb->dtype_bytes, R = (double)tb->rows;
        switch (tb->sharding) {
        case WEFT_EMB_TW:
            add_slot(s, n, (uint32_t)(slot++ % n), B, P, D, E, R);
            break;
        case WEFT_EMB_CW:
            for (uint32_t c = 0; c < tb->col_shards; c++) {
                double dc = tb->dim / tb->col_shards + (c < tb->dim % tb->col_shards);
                add_slot(s, n, (uint32_t)(slot++ % n), B, P, dc, E, R);
            }
            break;
        case WEFT_EMB_RW:
            if (P != q_pool) {
                q_pool = P;
                q = m->emb.rw_dense ? 1 : 1 - pow(1 - 1.0 / n, P);
            }
            s->all_rows += B * P * D * E;
            s->all_out += n * B * q * D * E;
            s->all_send += (n - 1) * B * q * D * E;
            s->all_mem += ceil(R / n) * D * E;
            s->recv_all += (n - 1) * B * q * D * E;
            break;
        case WEFT_EMB_DP:
            s->all_rows += B * P * D * E;
            s->all_out += B * D * E;
            s->all_mem += R * D * E;
            s->ar += R * D * E;
            break;
        }
    }
    /* A GPU holds its tables and the Herald cache, whose slots are as wide
     * as the widest row not data-parallel: the step's `fits` counts both
     * (weft_dlrm_step), so a plan offered here fits there. */
    double cache = (double)weft_dlrm_cache_bytes(m);
    double look = 0, a2a = 0;
    for (uint32_t g = 0; g < n; g++) {
        if (s->all_mem + s->mem[g] + cache > k->hbm_bytes)
            return INFINITY;
        double l = (3 * (s->all_rows + s->rows[g]) + 2 * (s->all_out + s->out[g])) / k->hbm_bw;
        double x = s->recv_all + s->recv[g], send = s->all_send + s->send[g];
        x = send > x ? send : x;
        look = l > look ? l : look;
        a2a = x > a2a ? x : a2a;
    }
    double c = look;
    if (a2a > 0)
        c += 2 * (k->a2a_lat_s + a2a / k->a2a_bw);
    if (s->ar > 0 && n > 1)
        c += k->ar_lat_s + s->ar / k->ar_bw;
    return c;
}

static weft_err sums_new(uint32_t n, sums *s)
{
    memset(s, 0, sizeof *s);
    s->rows = weft__calloc(5 * (size_t)n, sizeof *s->rows);
    if (!s->rows)
        return WEFT_ENOMEM;
    s->out = s->rows + n;
    s->send = s->out + n;
    s->recv = s->send + n;
    s->mem = s->recv + n;
    return WEFT_OK;
}

double weft_dlrm_plan_cost(const weft_dlrm *m, const weft_dlrm_costs *k)
{
    sums s;
    if (sums_new(m->emb.gpus, &s))
        return NAN;
    double c = cost(m, k, &s);
    weft__free(s.rows);
    return c;
}

/* Option o of a table: tw, rw, cw:2, cw:4, dp; false when the dim is too
 * small for it. */
#define NOPT 5
static bool option(weft_emb_table *tb, uint32_t o)
{
    static const weft_emb_sharding s[NOPT] = {WEFT_EMB_TW, WEFT_EMB_RW, WEFT_EMB_CW, WEFT_EMB_CW,
                                              WEFT_EMB_DP};
    static const uint32_t k[NOPT] = {1, 1, 2, 4, 1};
    if (k[o] > tb->dim)
        return false;
    tb->sharding = s[o];
    tb->col_shards = k[o];
    return true;
}

weft_err weft_dlrm_plan(weft_work_ctx *c, const weft_dlrm *m, weft_emb_table *tables,
                        weft_dlrm_plan_info *info, weft_diag *d)
{
    memset(info, 0, sizeof *info);
    weft_dlrm_costs k;
    weft_err e = weft_dlrm_costs_calibrate(c, m, &k, d);
    if (e)
        return e;
    uint32_t nt = m->emb.ntables;
    weft_dlrm mm = *m;
    weft_emb_table *cur = weft__malloc((size_t)nt * sizeof *cur);
    uint32_t *digit = weft__calloc(nt ? nt : 1, sizeof *digit);
    sums s;
    if (!cur || !digit || sums_new(m->emb.gpus, &s)) {
        weft__free(cur);
        weft__free(digit);
        return weft_diag_set(d, WEFT_ENOMEM, "out of memory for the sharding planner");
    }
    memcpy(cur, m->emb.tables, (size_t)nt * sizeof *cur);
    memcpy(tables, m->emb.tables, (size_t)nt * sizeof *cur);
    mm.emb.tables = cur;
    double best = INFINITY;
    /* The cheapest uniform plan (also the start of the descent). */
    info->uniform_s = INFINITY;
    for (uint32_t o = 0; o < NOPT; o++) {
        bool ok = true;
        for (uint32_t t = 0; t < nt; t++) {
            cur[t] = m->emb.tables[t];
            ok &= option(&cur[t], o);
        }
        if (!ok)
            continue;
        double x = cost(&mm, &k, &s);
        info->evaluated++;
        if (x < info->uniform_s) {
            info->uniform_s = x;
            best = x;
            memcpy(tables, cur, (size_t)nt * sizeof *cur);
        }
    }
    uint64_t plans = 1;
    for (uint32_t t = 0; t < nt && plans <= 4096; t++) {
        uint32_t opts = 0;
        for (uint32_t o = 0; o < NOPT; o++) {
            weft_emb_table x = m->emb.tables[t];
            opts += option(&x, o);
        }
        plans *= opts;
    }
    if (plans <= 4096) {
        /* Every plan, table 0's option fastest; the first cheapest. */
        info->exhaustive = true;
        best = INFINITY;
        for (uint32_t t = 0; t < nt; t++) {
            cur[t] = m->emb.tables[t];
            option(&cur[t], 0);
        }
        for (;;) {
            double x = cost(&mm, &k, &s);
            info->evaluated++;
            if (x < best) {
                best = x;
                memcpy(tables, cur, (size_t)nt * sizeof *cur);
            }
            uint32_t t = 0;
            for (; t < nt; t++) {
                uint32_t o = digit[t] + 1;
                while (o < NOPT && !option(&cur[t], o))
                    o++;
                if (o < NOPT) {
                    digit[t] = o;
                    break;
                }
                digit[t] = 0;
                option(&cur[t], 0);
            }
            if (t == nt)
                break;
        }
    } else {
        memcpy(cur, tables, (size_t)nt * sizeof *cur);
        for (int pass = 0; pass < 32; pass++) {
            bool changed = false;
            for (uint32_t t = 0; t < nt; t++) {
                weft_emb_table keep = cur[t];
                for (uint32_t o = 0; o < NOPT; o++) {
                    if (!option(&cur[t], o))
                        continue;
                    if (cur[t].sharding == keep.sharding && cur[t].col_shards == keep.col_shards)
                        continue;
                    double x = cost(&mm, &k, &s);
                    info->evaluated++;
                    if (x < best) {
                        best = x;
                        keep = cur[t];
                        changed = true;
                    }
                }
                cur[t] = keep;
            }
            if (!changed)
                break;
        }
        memcpy(tables, cur, (size_t)nt * sizeof *cur);
    }
    info->cost_s = best;
    weft__free(s.rows);
    weft__free(cur);
    weft__free(digit);
    return WEFT_OK;
}
