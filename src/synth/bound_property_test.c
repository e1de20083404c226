/* Property: on random small fabrics (up to 14 nodes, switches, rational and
 * asymmetric bandwidths, one-way links) the bound equals a brute-force
 * minimum over every node subset, for allgather, reduce-scatter and
 * allreduce, with both max-flow algorithms, with and without symmetry; the
 * reported cut is a real cut with exactly the reported ratio; half the
 * fabrics are identical boxes around a shared switch, where the symmetry
 * shortcut does merge ranks (and the answer must not change); fabrics where
 * a rank cannot reach another are refused. Seeded, so failures reproduce. */
#include <stdlib.h>

#include "base/testing.h"
#include "weft/synth.h"

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

#define MAXN 14

typedef struct fabric {
    uint32_t n, nr; /* nodes; the first nr are ranks */
    uint32_t nl;
    uint32_t src[64], dst[64];
    int64_t num[64], den[64];
} fabric;

static void random_fabric(fabric *f)
{
    f->nr = 2 + rnd(7);
    f->n = f->nr + rnd(MAXN - f->nr + 1);
    f->nl = 0;
    uint32_t want = f->n + rnd(2 * f->n);
    for (uint32_t i = 0; i < want && f->nl + 2 <= 64; i++) {
        uint32_t u = rnd(f->n), v = rnd(f->n);
        if (u == v)
            continue;
        int64_t num = 1 + rnd(40), den = 1 + rnd(3);
        f->src[f->nl] = u;
        f->dst[f->nl] = v;
        f->num[f->nl] = num;
        f->den[f->nl] = den;
        f->nl++;
        /* Mostly duplex, sometimes with a different bandwidth back. */
        if (rnd(4)) {
            f->src[f->nl] = v;
            f->dst[f->nl] = u;
            f->num[f->nl] = rnd(3) ? num : 1 + rnd(40);
            f->den[f->nl] = den;
            f->nl++;
        }
    }
}

/* Identical boxes (random inner links among k ranks and maybe a box
 * switch) joined by one shared switch: symmetric fabrics whose orbits the
 * symmetry search must find without merging too much. Nodes: the ranks of
 * every box first (ranks come first), then box switches, then the shared
 * switch. */
static void random_boxes(fabric *f)
{
    uint32_t boxes = 2 + rnd(2), k = 2 + rnd(boxes == 2 ? 4 : 2);
    bool box_switch = rnd(2);
    f->nr = boxes * k;
    f->n = f->nr + (box_switch ? boxes : 0) + 1;
    f->nl = 0;
    uint32_t shared = f->n - 1;
    /* One box's pattern, replayed per box. */
    uint32_t pu[16], pv[16], np = 0;
    int64_t pn[16];
    for (uint32_t i = 0; i < k + rnd(k + 1) && np < 16; i++) {
        uint32_t u = rnd(k), v = rnd(k);
        if (u != v) {
            pu[np] = u;
            pv[np] = v;
            pn[np++] = 1 + rnd(30);
        }
    }
    int64_t up = 1 + rnd(20), down = rnd(3) ? up : 1 + rnd(20), sw_bw = 5 + rnd(30);
    uint32_t uplinks = 1 + rnd(k);
    for (uint32_t b = 0; b < boxes; b++) {
        for (uint32_t i = 0; i < np && f->nl + 1 < 64; i++) {
            f->src[f->nl] = b * k + pu[i];
            f->dst[f->nl] = b * k + pv[i];
            f->num[f->nl] = pn[i];
            f->den[f->nl++] = 1 + (pn[i] % 3);
        }
        for (uint32_t i = 0; i < k && box_switch && f->nl + 2 < 64; i++) {
            uint32_t bs = f->nr + b;
            f->src[f->nl] = b * k + i;
            f->dst[f->nl] = bs;
            f->num[f->nl] = sw_bw;
            f->den[f->nl++] = 1;
            f->src[f->nl] = bs;
            f->dst[f->nl] = b * k + i;
            f->num[f->nl] = sw_bw;
            f->den[f->nl++] = 1;
        }
        for (uint32_t i = 0; i < uplinks && f->nl + 2 < 64; i++) {
            f->src[f->nl] = b * k + i;
            f->dst[f->nl] = shared;
            f->num[f->nl] = up;
            f->den[f->nl++] = 2;
            f->src[f->nl] = shared;
            f->dst[f->nl] = b * k + i;
            f->num[f->nl] = down;
            f->den[f->nl++] = 2;
        }
    }
}

static weft_topo *build(const fabric *f)
{
    weft_topo_builder *b;
    if (weft_topo_builder_new(&b))
        return NULL;
    for (uint32_t v = 0; v < f->n; v++) {
        char name[16];
        snprintf(name, sizeof name, "%s%u", v < f->nr ? "r" : "s", v);
        weft_topo_builder_add_node(b, name, v < f->nr ? WEFT_NODE_COMPUTE : WEFT_NODE_SWITCH, NULL,
                                   NULL);
    }
    for (uint32_t l = 0; l < f->nl; l++) {
        weft_rat bw;
        weft_rat_make(f->num[l], f->den[l], &bw);
        weft_topo_builder_add_link(b, (weft_node_id){f->src[l]}, (weft_node_id){f->dst[l]}, bw,
                                   weft_rat_int(0));
    }
    weft_topo *t = NULL;
    if (weft_topo_build(b, &t, NULL))
        return NULL;
    return t;
}

/* Every rank reaches every other (Floyd-Warshall on 14 nodes). */
static bool ranks_connected(const fabric *f)
{
    bool r[MAXN][MAXN] = {{false}};
    for (uint32_t v = 0; v < f->n; v++)
        r[v][v] = true;
    for (uint32_t l = 0; l < f->nl; l++)
        r[f->src[l]][f->dst[l]] = true;
    for (uint32_t k = 0; k < f->n; k++)
        for (uint32_t i = 0; i < f->n; i++)
            for (uint32_t j = 0; j < f->n; j++)
                r[i][j] = r[i][j] || (r[i][k] && r[k][j]);
    for (uint32_t i = 0; i < f->nr; i++)
        for (uint32_t j = 0; j < f->nr; j++)
            if (!r[i][j])
                return false;
    return true;
}

/* N * min over S of B(S) / |S ∩ ranks| by enumeration; B counts links
 * leaving S (reverse: entering S). Bandwidths scaled by 12 = lcm(1,2,3). */
static weft_rat brute(const fabric *f, bool reverse)
{
    int64_t best_b = -1, best_k = 1;
    uint32_t all_ranks = (1u << f->nr) - 1;
    for (uint32_t mask = 1; mask < (1u << f->n); mask++) {
        uint32_t rk = mask & all_ranks;
        if (!rk || rk == all_ranks)
            continue;
        int64_t b = 0;
        for (uint32_t l = 0; l < f->nl; l++) {
            uint32_t u = reverse ? f->dst[l] : f->src[l], v = reverse ? f->src[l] : f->dst[l];
            if ((mask >> u & 1) && !(mask >> v & 1))
                b += f->num[l] * (12 / f->den[l]);
        }
        int64_t k = __builtin_popcount(rk);
        if (best_b < 0 || b * best_k < best_b * k) {
            best_b = b;
            best_k = k;
        }
    }
    weft_rat r = {0, 1};
    weft_rat_make(best_b * f->nr, best_k * 12, &r);
    return r;
}

/* The reported cut: a real node set with the reported bandwidth, ranks and
 * ratio. */
static bool cut_consistent(const weft_topo *t, const weft_bound *bd, const weft_bound_phase *p)
{
    uint8_t in[MAXN] = {0};
    for (uint32_t i = 0; i < p->cut.n_nodes; i++)
        in[p->cut.nodes[i].v] = 1;
    uint32_t k = 0;
    for (uint32_t r = 0; r < bd->ranks; r++)
        k += in[weft_topo_rank_node(t, (weft_rank){r}).v];
    if (k != p->cut.ranks_in || k == 0 || k == bd->ranks)
        return false;
    weft_rat sum = weft_rat_int(0);
    uint32_t crossing = 0;
    for (uint32_t l = 0; l < weft_topo_num_links(t); l++) {
        weft_link_id id = {l};
        uint32_t u = weft_topo_link_src(t, id).v, v = weft_topo_link_dst(t, id).v;
        bool cross = p->cut.inward ? (!in[u] && in[v]) : (in[u] && !in[v]);
        if (cross) {
            weft_rat_add(sum, weft_topo_link_bw(t, id), &sum);
            crossing++;
        }
    }
    weft_rat ratio;
    weft_rat_make(sum.num * bd->ranks, sum.den * k, &ratio);
    return crossing == p->cut.n_links && weft_rat_eq(sum, p->cut.bw) &&
           weft_rat_eq(ratio, p->algbw);
}

int main(void)
{
    int cases = 0, refused = 0, bad = 0, merged = 0;
    char x[64], y[64];
    while (cases < 300) {
        fabric f;
        if (rnd(2))
            random_fabric(&f);
        else
            random_boxes(&f);
        weft_topo *t = build(&f);
        if (!t) {
            CHECK(0);
            break;
        }
        if (!ranks_connected(&f)) {
            weft_bound bd;
            weft_diag d;
            weft_diag_clear(&d);
            CHECK_ERR(weft_bound_compute(t, WEFT_BOUND_ALLGATHER, NULL, &bd, &d), WEFT_ETOPO);
            CHECK_CONTAINS(d.msg, "cannot reach rank");
            refused++;
            weft_topo_free(t);
            continue;
        }
        cases++;
        weft_rat ag = brute(&f, false), rs = brute(&f, true), ar;
        weft_rat num, den;
        weft_rat_mul(ag, rs, &num);
        weft_rat_add(ag, rs, &den);
        weft_rat_div(num, den, &ar);
        const weft_rat want[3] = {ag, rs, ar};
        for (int coll = 0; coll < 3; coll++) {
            for (int variant = 0; variant < 4; variant++) {
                weft_bound_opts o;
                weft_bound_opts_init(&o);
                o.algo = variant & 1 ? WEFT_MAXFLOW_PUSH_RELABEL : WEFT_MAXFLOW_DINIC;
                o.use_symmetry = variant & 2;
                weft_bound bd;
                weft_diag d;
                weft_err e = weft_bound_compute(t, (weft_bound_coll)coll, &o, &bd, &d);
                if (e) {
                    fprintf(stderr, "case %d coll %d: %s\n", cases, coll, d.msg);
                    bad++;
                    continue;
                }
                bool ok = weft_rat_eq(bd.algbw, want[coll]);
                merged += o.use_symmetry && bd.rank_classes < bd.ranks;
                for (uint32_t i = 0; i < bd.n_phases; i++)
                    ok = ok && cut_consistent(t, &bd, &bd.phase[i]);
                if (!ok) {
                    weft_rat_format(bd.algbw, x, sizeof x);
                    weft_rat_format(want[coll], y, sizeof y);
                    fprintf(stderr,
                            "case %d (%u nodes, %u ranks) coll %d variant %d: %s, "
                            "brute force %s\n",
                            cases, f.n, f.nr, coll, variant, x, y);
                    bad++;
                }
                weft_bound_fini(&bd);
            }
        }
        weft_topo_free(t);
    }
    CHECK_INT(cases, 300);
    CHECK(refused > 0);
    CHECK_INT(bad, 0);
    CHECK(merged > 100); /* the shortcut was really exercised */
    printf("%d fabrics checked, %d refused as disconnected, %d runs used symmetry\n", cases,
           refused, merged);
    return weft_test_done();
}
