/* The exact all-to-all bound of a traffic matrix by column generation
 * (Dantzig-Wolfe on the source blocks of a2a_bound.c's program), for the
 * matrices whose edge program (sources x links flow variables) is too
 * large for the simplex: a skewed 128-rank matrix on h100:16 is 98,304
 * flow variables and took 73 s; 256 ranks did not finish in 5 minutes.
 *
 * The master program. A flow of source s that meets dem[s,.] θ is, up to
 * cycles (which only add load), a convex combination of tree routings
 * (the vertices of the single-source uncapacitated flow polytope are
 * arborescences: every node fed by one link); a tree T of s carries
 * load_T(e) = sum of dem[s,v] over the ranks v whose tree path uses e. So
 * the bound is
 *
 *   maximise θ
 *   subject to, for every source s:  sum_T λ[s,T] - θ = 0
 *   and for every link e:  sum_{s,T} mult[s] load_T(e) λ[s,T] <= cap[e]
 *   λ >= 0,
 *
 * over every tree: ns + m rows instead of ns n + m, and columns generated
 * when they pay. Pricing: with the capacity rows' duals y (lengths) and
 * the source rows' duals π, the best column of s is the shortest-path
 * tree under y, of reduced cost -(π[s] + sum_v dem[s,v] dist_y(s, v));
 * when no source has a column of positive reduced cost the master's
 * optimum is the program's (Dantzig & Wolfe 1960; for concurrent flow,
 * the "path" formulation of Shahrokhi & Matula 1990).
 *
 * Exact, as before (a2a_bound.c, "Certificate"): the duals y made rational
 * give an upper bound U = sum cap y / sum mult dem dist_y (exact shortest
 * distances: a tree-tight potential from the float Dijkstra, corrected
 * until every link satisfies the triangle inequality in rationals), and
 * the master's λ made rational and scaled per source to sum exactly to U
 * must load every link within its bandwidth, exactly; the flows they
 * stand for then meet every demand at θ = U. Both hold only at the
 * optimum, so U is θ*, the same rational as the edge program's. When the
 * rounded λ miss (vertices with large denominators), the basic solution of
 * the master is solved exactly instead: its basic structural columns on
 * the source rows and the tight capacity rows, by Gaussian elimination in
 * rationals. If neither proves U, the caller falls back to the edge
 * program.
 *
 * The optimal plan (a2a_optimal.c) routes on the certified master's
 * columns: export_trees hands out every column with λ > 0, its links and
 * loads, and its share λ / U of each of its source's pairs. */
#include <glpk.h>
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/a2a_colgen.h"
#include "synth/glpk_thread.h"

/* Rounds of pricing: at most CG_MAX_ROUNDS, and CG_STALL in a row without
 * a better master end the loop (h100:128 needs 3 rounds). */
#define CG_MAX_ROUNDS 1000u
#define CG_STALL 25u

/* One generated column: source s, the links its tree loads and the load on
 * each in bytes of the matrix (exact integers; divided by dmax in the
 * model's scale). */
typedef struct col {
    uint32_t s, nl;
    uint32_t *link;
    uint64_t *load;
} col;

typedef struct cg {
    const model *md;
    const weft_traffic *tm;
    uint32_t n, m, nr, ns;
    col *cols;
    size_t ncols, cap_cols;
    /* Dijkstra scratch */
    double *dist;
    uint32_t *plink; /* parent link of each node, UINT32_MAX none */
    uint32_t *order; /* nodes in the order they were settled */
    uint32_t norder;
    uint64_t *sub;     /* bytes to ranks below each node */
    uint32_t *heap;    /* binary heap of nodes by dist */
    uint32_t *pos;     /* node -> heap position + 1, 0 none */
    uint32_t *rank_of; /* node -> rank + 1, 0 none */
} cg;

static uint64_t dem_bytes(const cg *g, uint32_t s, uint32_t r)
{
    uint32_t i = g->md->src[s];
    return i == r ? 0 : weft_traffic_at(g->tm, i, r);
}

/* ---- Shortest paths (floats) ---------------------------------------------- */

static bool hless(const cg *g, uint32_t a, uint32_t b)
{
    return g->dist[a] < g->dist[b] || (g->dist[a] == g->dist[b] && a < b);
}

static void hswap(cg *g, uint32_t i, uint32_t j)
{
    uint32_t a = g->heap[i], b = g->heap[j];
    g->heap[i] = b;
    g->heap[j] = a;
    g->pos[b] = i + 1;
    g->pos[a] = j + 1;
}

static void hup(cg *g, uint32_t i)
{
    while (i > 0 && hless(g, g->heap[i], g->heap[(i - 1) / 2])) {
        hswap(g, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void hdown(cg *g, uint32_t i, uint32_t size)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < size && hless(g, g->heap[l], g->heap[b]))
            b = l;
        if (r < size && hless(g, g->heap[r], g->heap[b]))
            b = r;
        if (b == i)
            return;
        hswap(g, i, b);
        i = b;
    }
}

/* Dijkstra from node src with link lengths len (>= 0): dist, plink and the
 * settling order. */
static void dijkstra(cg *g, uint32_t src, const double *len)
{
    const weft_topo *t = g->md->t;
    for (uint32_t v = 0; v < g->n; v++) {
        g->dist[v] = INFINITY;
        g->plink[v] = UINT32_MAX;
        g->pos[v] = 0;
    }
    uint32_t size = 0;
    g->norder = 0;
    g->dist[src] = 0;
    g->heap[size++] = src;
    g->pos[src] = 1;
    while (size) {
        uint32_t u = g->heap[0];
        hswap(g, 0, size - 1);
        size--;
        g->pos[u] = 0;
        hdown(g, 0, size);
        g->order[g->norder++] = u;
        uint32_t first, count;
        weft_topo_out_links(t, (weft_node_id){u}, &first, &count);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t l = first + i, x = weft_topo_link_dst(t, (weft_link_id){l}).v;
            double nd = g->dist[u] + len[l];
            if (nd < g->dist[x]) {
                bool fresh = g->dist[x] == INFINITY;
                g->dist[x] = nd;
                g->plink[x] = l;
                if (fresh) {
                    g->heap[size] = x;
                    g->pos[x] = ++size;
                }
                hup(g, g->pos[x] - 1);
            }
        }
    }
}

/* The tree column of source s after dijkstra: loads from the leaves up. */
static weft_err tree_col(cg *g, uint32_t s, col *c)
{
    const weft_topo *t = g->md->t;
    for (uint32_t v = 0; v < g->n; v++)
        g->sub[v] = g->rank_of[v] ? dem_bytes(g, s, g->rank_of[v] - 1) : 0;
    uint32_t nl = 0;
    for (uint32_t k = g->norder; k-- > 1;) {
        uint32_t v = g->order[k];
        if (g->sub[v] == 0 || g->plink[v] == UINT32_MAX)
            continue;
        nl++;
        g->sub[weft_topo_link_src(t, (weft_link_id){g->plink[v]}).v] += g->sub[v];
    }
    c->s = s;
    c->nl = 0;
    c->link = weft__malloc(((size_t)nl + 1) * sizeof *c->link);
    c->load = weft__malloc(((size_t)nl + 1) * sizeof *c->load);
    if (!c->link || !c->load) {
        weft__free(c->link);
        weft__free(c->load);
        c->link = NULL;
        c->load = NULL;
        return WEFT_ENOMEM;
    }
    for (uint32_t k = 1; k < g->norder; k++) {
        uint32_t v = g->order[k];
        if (g->sub[v] == 0 || g->plink[v] == UINT32_MAX)
            continue;
        c->link[c->nl] = g->plink[v];
        c->load[c->nl++] = g->sub[v];
    }
    return WEFT_OK;
}

/* sum_v dem[s,v] dist[v] in bytes x length, after dijkstra. */
static double tree_cost(const cg *g, uint32_t s)
{
    double acc = 0;
    for (uint32_t r = 0; r < g->nr; r++) {
        uint64_t b = dem_bytes(g, s, r);
        if (b)
            acc += (double)b * g->dist[weft_topo_rank_node(g->md->t, (weft_rank){r}).v];
    }
    return acc;
}

/* Adds column c to the master P (column number j). */
static void add_col(cg *g, glp_prob *P, const col *c, int *ind, double *val)
{
    int j = glp_add_cols(P, 1);
    glp_set_col_bnds(P, j, GLP_LO, 0, 0);
    int k = 0;
    ind[++k] = (int)c->s + 1;
    val[k] = 1;
    double scale = (double)g->md->mult[c->s] / (double)g->md->dmax;
    for (uint32_t i = 0; i < c->nl; i++) {
        ind[++k] = (int)(g->ns + c->link[i] + 1);
        val[k] = (double)c->load[i] * scale;
    }
    glp_set_mat_col(P, j, k, ind, val);
}

static weft_err push_col(cg *g, const col *c)
{
    if (weft__grow((void **)&g->cols, &g->cap_cols, g->ncols + 1, sizeof *g->cols))
        return WEFT_ENOMEM;
    g->cols[g->ncols++] = *c;
    return WEFT_OK;
}

/* ---- Exact certificate ------------------------------------------------------ */

/* Exact shortest distances from node src with rational lengths len (>= 0):
 * the float tree's potential, then relaxed in rationals until every link
 * satisfies dist[v] <= dist[u] + len (a feasible potential tight along a
 * tree from src is the distance). reached[v] = 0 for an unreachable node. */
static void exact_dist(cg *g, uint32_t src, mpq_t *len, mpq_t *dist, uint8_t *reached, mpq_t tmp)
{
    const weft_topo *t = g->md->t;
    memset(reached, 0, g->n);
    mpq_set_ui(dist[src], 0, 1);
    reached[src] = 1;
    for (uint32_t k = 1; k < g->norder; k++) {
        uint32_t v = g->order[k], l = g->plink[v];
        uint32_t u = weft_topo_link_src(t, (weft_link_id){l}).v;
        mpq_add(dist[v], dist[u], len[l]);
        reached[v] = 1;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t l = 0; l < g->m; l++) {
            uint32_t u = weft_topo_link_src(t, (weft_link_id){l}).v;
            uint32_t v = weft_topo_link_dst(t, (weft_link_id){l}).v;
            if (!reached[u])
                continue;
            mpq_add(tmp, dist[u], len[l]);
            if (!reached[v] || mpq_cmp(tmp, dist[v]) < 0) {
                mpq_set(dist[v], tmp);
                reached[v] = 1;
                changed = true;
            }
        }
    }
}

/* U = sum cap len / sum mult dem dist_len (model scale), into out. */
static bool dual_bound(cg *g, mpq_t *len, const double *flen, mpq_t out)
{
    const model *md = g->md;
    mpq_t *dist = weft__malloc((size_t)g->n * sizeof *dist);
    uint8_t *reached = weft__malloc(g->n);
    bool ok = dist && reached;
    if (!ok) {
        weft__free(dist);
        weft__free(reached);
        return false;
    }
    for (uint32_t v = 0; v < g->n; v++)
        mpq_init(dist[v]);
    mpq_t num, den, tmp, acc;
    mpq_inits(num, den, tmp, acc, NULL);
    for (uint32_t l = 0; l < g->m; l++) {
        mpq_mul(tmp, md->cap[md->cls[l]], len[l]);
        mpq_add(num, num, tmp);
    }
    for (uint32_t s = 0; s < g->ns && ok; s++) {
        uint32_t sv = weft_topo_rank_node(md->t, (weft_rank){md->src[s]}).v;
        dijkstra(g, sv, flen);
        exact_dist(g, sv, len, dist, reached, tmp);
        ok = weft__a2a_source_term(md, s, dist, reached, den, tmp, acc);
    }
    if (ok && mpq_sgn(den) > 0)
        mpq_div(out, num, den);
    else
        ok = false;
    mpq_clears(num, den, tmp, acc, NULL);
    for (uint32_t v = 0; v < g->n; v++)
        mpq_clear(dist[v]);
    weft__free(dist);
    weft__free(reached);
    return ok;
}

/* Whether the λ values lam (exact, >= 0, one per generated column) summing
 * to theta on every source load every link within its bandwidth. */
static bool loads_fit(const cg *g, mpq_t *lam, const mpq_t theta)
{
    const model *md = g->md;
    mpq_t *load = weft__malloc(((size_t)g->m + 1) * sizeof *load);
    mpq_t *sum = weft__malloc(((size_t)g->ns + 1) * sizeof *sum);
    if (!load || !sum) {
        weft__free(load);
        weft__free(sum);
        return false;
    }
    for (uint32_t l = 0; l < g->m; l++)
        mpq_init(load[l]);
    for (uint32_t s = 0; s < g->ns; s++)
        mpq_init(sum[s]);
    mpq_t tmp, w;
    mpq_inits(tmp, w, NULL);
    bool ok = true;
    for (size_t j = 0; j < g->ncols && ok; j++) {
        const col *c = &g->cols[j];
        if (mpq_sgn(lam[j]) < 0)
            ok = false;
        if (mpq_sgn(lam[j]) == 0)
            continue;
        mpq_add(sum[c->s], sum[c->s], lam[j]);
        /* λ mult / dmax per byte of load */
        mpz_set_ui(mpq_numref(w), md->mult[c->s]);
        mpz_set_ui(mpq_denref(w), md->dmax);
        mpq_canonicalize(w);
        mpq_mul(w, w, lam[j]);
        for (uint32_t i = 0; i < c->nl; i++) {
            mpz_set_ui(mpq_numref(tmp), c->load[i]);
            mpz_set_ui(mpq_denref(tmp), 1);
            mpq_mul(tmp, tmp, w);
            mpq_add(load[c->link[i]], load[c->link[i]], tmp);
        }
    }
    for (uint32_t s = 0; s < g->ns && ok; s++)
        ok = mpq_equal(sum[s], theta);
    for (uint32_t l = 0; l < g->m && ok; l++)
        ok = mpq_cmp(load[l], md->cap[md->cls[l]]) <= 0;
    mpq_clears(tmp, w, NULL);
    for (uint32_t l = 0; l < g->m; l++)
        mpq_clear(load[l]);
    for (uint32_t s = 0; s < g->ns; s++)
        mpq_clear(sum[s]);
    weft__free(load);
    weft__free(sum);
    return ok;
}

/* The master's λ made rational (tolerance tol), scaled per source to sum
 * to theta exactly, into lam. False when a source's sum is 0. */
static bool rounded_lambda(const cg *g, glp_prob *P, double tol, const mpq_t theta, mpq_t *lam)
{
    mpq_t *sum = weft__malloc(((size_t)g->ns + 1) * sizeof *sum);
    if (!sum)
        return false;
    for (uint32_t s = 0; s < g->ns; s++)
        mpq_init(sum[s]);
    for (size_t j = 0; j < g->ncols; j++) {
        double x = glp_get_col_prim(P, (int)j + 2);
        weft__a2a_rationalize(x > 0 ? x : 0, tol, lam[j]);
        mpq_add(sum[g->cols[j].s], sum[g->cols[j].s], lam[j]);
    }
    bool ok = true;
    for (uint32_t s = 0; s < g->ns; s++)
        ok = ok && mpq_sgn(sum[s]) > 0;
    mpq_t f;
    mpq_init(f);
    for (size_t j = 0; j < g->ncols && ok; j++) {
        mpq_div(f, theta, sum[g->cols[j].s]);
        mpq_mul(lam[j], lam[j], f);
    }
    mpq_clear(f);
    for (uint32_t s = 0; s < g->ns; s++)
        mpq_clear(sum[s]);
    weft__free(sum);
    return ok;
}

/* The exact basic solution of the master's final basis into lam (λ of
 * every generated column, 0 when nonbasic) and theta: the rows whose
 * auxiliary variable is nonbasic hold at their bound (a source row at 0, a
 * tight capacity row at its bandwidth). Each source row with a basic λ
 * gives that λ as θ minus the source's other basic λ; what is left is a
 * square system on the tight capacity rows in θ and the other basic λ,
 * solved by Gaussian elimination in rationals. False when it is singular
 * or not square. */
static bool exact_master(const cg *g, glp_prob *P, mpq_t *lam, mpq_t theta)
{
    const model *md = g->md;
    uint32_t ns = g->ns, m = g->m;
    size_t nc = g->ncols;
    /* unknown index of each basic column: 0 = θ, pivots get UINT32_MAX */
    uint32_t *uk = weft__malloc((nc + 1) * sizeof *uk);
    uint32_t *piv = weft__malloc(((size_t)ns + 1) * sizeof *piv); /* pivot column of s */
    uint32_t *tight = weft__malloc(((size_t)m + 1) * sizeof *tight);
    uint32_t *trow = weft__malloc(((size_t)m + 1) * sizeof *trow); /* link -> eq + 1 */
    if (!uk || !piv || !tight || !trow) {
        weft__free(uk), weft__free(piv), weft__free(tight), weft__free(trow);
        return false;
    }
    bool ok = glp_get_col_stat(P, 1) == GLP_BS;
    for (uint32_t s = 0; s < ns; s++)
        piv[s] = UINT32_MAX;
    uint32_t nu = 1;
    for (size_t j = 0; j < nc; j++) {
        uk[j] = UINT32_MAX - 1; /* nonbasic */
        if (glp_get_col_stat(P, (int)j + 2) != GLP_BS)
            continue;
        uint32_t s = g->cols[j].s;
        if (piv[s] == UINT32_MAX && glp_get_row_stat(P, (int)s + 1) != GLP_BS) {
            piv[s] = (uint32_t)j;
            uk[j] = UINT32_MAX;
        } else {
            uk[j] = nu++;
        }
    }
    for (uint32_t s = 0; s < ns && ok; s++)
        ok = piv[s] != UINT32_MAX || glp_get_row_stat(P, (int)s + 1) == GLP_BS;
    uint32_t nt = 0;
    for (uint32_t l = 0; l < m; l++) {
        trow[l] = 0;
        if (glp_get_row_stat(P, (int)(ns + l + 1)) != GLP_BS) {
            tight[nt] = l;
            trow[l] = ++nt;
        }
    }
    ok = ok && nt == nu && nt > 0;
    size_t w = (size_t)nu + 1; /* columns: unknowns, then the right side */
    mpq_t *A = ok ? weft__malloc((size_t)nt * w * sizeof *A) : NULL;
    ok = ok && A;
    if (ok) {
        for (size_t i = 0; i < (size_t)nt * w; i++)
            mpq_init(A[i]);
        mpq_t a;
        mpq_init(a);
        for (uint32_t i = 0; i < nt; i++) /* right side: cap */
            mpq_set(A[(size_t)i * w + nu], md->cap[md->cls[tight[i]]]);
        for (size_t j = 0; j < nc; j++) {
            if (uk[j] == UINT32_MAX - 1)
                continue;
            const col *c = &g->cols[j];
            uint32_t pj = piv[c->s];
            for (int pass = 0; pass < 2; pass++) {
                /* pass 0: the column's own unknown (+); pass 1: a non-pivot
                 * column of a pivoted source also subtracts the pivot's
                 * load (λ_piv = θ - others) -- done via the pivot's loads. */
                if (pass == 1 && (uk[j] == UINT32_MAX || pj == UINT32_MAX))
                    break;
                const col *cc = pass == 0 ? c : &g->cols[pj];
                uint32_t u = uk[j] == UINT32_MAX ? 0 : uk[j]; /* a pivot loads θ */
                for (uint32_t i = 0; i < cc->nl; i++) {
                    uint32_t r = trow[cc->link[i]];
                    if (!r)
                        continue;
                    mpz_set_ui(mpq_numref(a), cc->load[i]);
                    mpz_mul_ui(mpq_numref(a), mpq_numref(a), md->mult[c->s]);
                    mpz_set_ui(mpq_denref(a), md->dmax);
                    mpq_canonicalize(a);
                    mpq_t *x = &A[(size_t)(r - 1) * w + u];
                    if (pass == 0)
                        mpq_add(*x, *x, a);
                    else
                        mpq_sub(*x, *x, a);
                }
            }
        }
        /* Gaussian elimination with the first nonzero pivot. */
        mpq_t f;
        mpq_init(f);
        for (uint32_t k = 0; k < nu && ok; k++) {
            uint32_t p = k;
            while (p < nt && mpq_sgn(A[(size_t)p * w + k]) == 0)
                p++;
            if (p == nt) {
                ok = false;
                break;
            }
            if (p != k)
                for (size_t q = 0; q < w; q++)
                    mpq_swap(A[(size_t)p * w + q], A[(size_t)k * w + q]);
            for (uint32_t i = 0; i < nt; i++) {
                if (i == k || mpq_sgn(A[(size_t)i * w + k]) == 0)
                    continue;
                mpq_div(f, A[(size_t)i * w + k], A[(size_t)k * w + k]);
                for (size_t q = k; q < w; q++) {
                    if (mpq_sgn(A[(size_t)k * w + q]) == 0)
                        continue;
                    mpq_mul(a, f, A[(size_t)k * w + q]);
                    mpq_sub(A[(size_t)i * w + q], A[(size_t)i * w + q], a);
                }
            }
        }
        if (ok) {
            mpq_div(theta, A[nu], A[0]);
            for (size_t j = 0; j < nc; j++) {
                if (uk[j] == UINT32_MAX - 1) {
                    mpq_set_ui(lam[j], 0, 1);
                } else if (uk[j] != UINT32_MAX) {
                    uint32_t u = uk[j];
                    mpq_div(lam[j], A[(size_t)u * w + nu], A[(size_t)u * w + u]);
                }
            }
            for (size_t j = 0; j < nc; j++) { /* pivots: θ minus the others */
                if (uk[j] != UINT32_MAX)
                    continue;
                mpq_set(lam[j], theta);
                for (size_t k = 0; k < nc; k++)
                    if (k != j && g->cols[k].s == g->cols[j].s && uk[k] != UINT32_MAX &&
                        uk[k] != UINT32_MAX - 1)
                        mpq_sub(lam[j], lam[j], lam[k]);
            }
        }
        mpq_clear(f);
        mpq_clear(a);
        for (size_t i = 0; i < (size_t)nt * w; i++)
            mpq_clear(A[i]);
    }
    weft__free(A);
    weft__free(uk);
    weft__free(piv);
    weft__free(tight);
    weft__free(trow);
    return ok;
}

/* ---- The routing trees (a2a_internal.h) ----------------------------------- */

void weft__a2a_trees_fini(weft__a2a_trees *tr)
{
    for (uint32_t k = 0; tr->share && k < tr->count; k++)
        mpq_clear(tr->share[k]);
    weft__free(tr->rank);
    weft__free(tr->first);
    weft__free(tr->link);
    weft__free(tr->load);
    weft__free(tr->share);
    memset(tr, 0, sizeof *tr);
}

/* Whether every positive λ over theta is a fraction of 64-bit integers. */
static bool shares_fit(const cg *g, mpq_t *lam, const mpq_t theta)
{
    mpq_t q;
    mpq_init(q);
    bool ok = true;
    for (size_t j = 0; j < g->ncols && ok; j++) {
        if (mpq_sgn(lam[j]) <= 0)
            continue;
        mpq_div(q, lam[j], theta);
        ok = mpz_fits_slong_p(mpq_numref(q)) && mpz_fits_slong_p(mpq_denref(q));
    }
    mpq_clear(q);
    return ok;
}

/* The columns with λ > 0, grouped by source (sources ascend by rank), each
 * share λ / theta, into *tr. */
static weft_err export_trees(const cg *g, mpq_t *lam, const mpq_t theta, weft__a2a_trees *tr)
{
    memset(tr, 0, sizeof *tr);
    uint32_t count = 0;
    size_t links = 0;
    uint32_t *at = weft__calloc((size_t)g->ns + 1, sizeof *at); /* first tree of each source */
    if (!at)
        return WEFT_ENOMEM;
    for (size_t j = 0; j < g->ncols; j++)
        if (mpq_sgn(lam[j]) > 0) {
            count++;
            links += g->cols[j].nl;
            at[g->cols[j].s + 1]++;
        }
    for (uint32_t s = 0; s < g->ns; s++)
        at[s + 1] += at[s];
    tr->rank = weft__malloc(((size_t)count + 1) * sizeof *tr->rank);
    tr->first = weft__malloc(((size_t)count + 1) * sizeof *tr->first);
    tr->link = weft__malloc((links + 1) * sizeof *tr->link);
    tr->load = weft__malloc((links + 1) * sizeof *tr->load);
    tr->share = weft__malloc(((size_t)count + 1) * sizeof *tr->share);
    uint32_t *col_of = weft__malloc(((size_t)count + 1) * sizeof *col_of);
    if (!tr->rank || !tr->first || !tr->link || !tr->load || !tr->share || !col_of) {
        weft__free(tr->share);
        tr->share = NULL;
        weft__free(col_of);
        weft__free(at);
        weft__a2a_trees_fini(tr);
        return WEFT_ENOMEM;
    }
    for (size_t j = 0; j < g->ncols; j++)
        if (mpq_sgn(lam[j]) > 0)
            col_of[at[g->cols[j].s]++] = (uint32_t)j;
    tr->count = count;
    uint32_t pos = 0;
    for (uint32_t k = 0; k < count; k++) {
        const col *c = &g->cols[col_of[k]];
        tr->rank[k] = g->md->src[c->s];
        tr->first[k] = pos;
        memcpy(tr->link + pos, c->link, (size_t)c->nl * sizeof *c->link);
        memcpy(tr->load + pos, c->load, (size_t)c->nl * sizeof *c->load);
        pos += c->nl;
        mpq_init(tr->share[k]);
        mpq_div(tr->share[k], lam[col_of[k]], theta);
    }
    tr->first[count] = pos;
    weft__free(col_of);
    weft__free(at);
    return WEFT_OK;
}

/* ---- The loop ------------------------------------------------------------- */

static void cg_fini(cg *g)
{
    for (size_t j = 0; j < g->ncols; j++) {
        weft__free(g->cols[j].link);
        weft__free(g->cols[j].load);
    }
    weft__free(g->cols);
    weft__free(g->dist);
    weft__free(g->plink);
    weft__free(g->order);
    weft__free(g->sub);
    weft__free(g->heap);
    weft__free(g->pos);
    weft__free(g->rank_of);
}

weft_err weft__a2a_colgen(const model *md, const weft_traffic *tm, weft_a2a_bound *b, cert *c,
                          bool *certified, weft__a2a_trees *trees)
{
    cg g;
    memset(&g, 0, sizeof g);
    g.md = md;
    g.tm = tm;
    g.n = md->n;
    g.m = md->m;
    g.nr = md->nr;
    g.ns = md->ns;
    *certified = false;
    size_t n1 = (size_t)g.n + 1;
    g.dist = weft__malloc(n1 * sizeof *g.dist);
    g.plink = weft__malloc(n1 * sizeof *g.plink);
    g.order = weft__malloc(n1 * sizeof *g.order);
    g.sub = weft__malloc(n1 * sizeof *g.sub);
    g.heap = weft__malloc(n1 * sizeof *g.heap);
    g.pos = weft__malloc(n1 * sizeof *g.pos);
    g.rank_of = weft__calloc(n1, sizeof *g.rank_of);
    double *len = weft__malloc(((size_t)g.m + 1) * sizeof *len);
    int *ind = weft__malloc(((size_t)g.m + 2) * sizeof *ind);
    double *val = weft__malloc(((size_t)g.m + 2) * sizeof *val);
    weft__glpk_thread();
    glp_prob *P = glp_create_prob();
    weft_err e = WEFT_OK;
    if (!g.dist || !g.plink || !g.order || !g.sub || !g.heap || !g.pos || !g.rank_of || !len ||
        !ind || !val) {
        e = WEFT_ENOMEM;
        goto done;
    }
    for (uint32_t r = 0; r < g.nr; r++)
        g.rank_of[weft_topo_rank_node(md->t, (weft_rank){r}).v] = r + 1;
    /* The master: source rows, capacity rows, θ. */
    glp_set_obj_dir(P, GLP_MAX);
    glp_add_rows(P, (int)(g.ns + g.m));
    for (uint32_t s = 0; s < g.ns; s++)
        glp_set_row_bnds(P, (int)s + 1, GLP_FX, 0, 0);
    for (uint32_t l = 0; l < g.m; l++)
        glp_set_row_bnds(P, (int)(g.ns + l + 1), GLP_UP, 0, mpq_get_d(md->cap[md->cls[l]]));
    glp_add_cols(P, 1);
    glp_set_col_bnds(P, 1, GLP_LO, 0, 0);
    glp_set_obj_coef(P, 1, 1);
    for (uint32_t s = 0; s < g.ns; s++) {
        ind[s + 1] = (int)s + 1;
        val[s + 1] = -1;
    }
    glp_set_mat_col(P, 1, (int)g.ns, ind, val);
    /* First columns: the trees of lengths 1 / bandwidth. */
    for (uint32_t l = 0; l < g.m; l++)
        len[l] = 1 / mpq_get_d(md->cap[md->cls[l]]);
    for (uint32_t s = 0; s < g.ns && !e; s++) {
        col cl;
        dijkstra(&g, weft_topo_rank_node(md->t, (weft_rank){md->src[s]}).v, len);
        e = tree_col(&g, s, &cl);
        if (!e && (e = push_col(&g, &cl))) {
            weft__free(cl.link);
            weft__free(cl.load);
        }
        if (!e)
            add_col(&g, P, &cl, ind, val);
    }
    if (e)
        goto done;
    /* A first basis that is already feasible and one pivot from the first
     * columns' optimum: θ and every source's tree basic, the link they
     * load most against its bandwidth at its bound, every other link's
     * slack basic (ns + m basic; the basis matrix is nonsingular as that
     * link carries load). The simplex then starts where the slack basis
     * would arrive after one pivot per source. */
    {
        double worst = 0;
        uint32_t at = UINT32_MAX;
        double *lo = weft__calloc((size_t)g.m + 1, sizeof *lo);
        if (!lo) {
            e = WEFT_ENOMEM;
            goto done;
        }
        for (size_t j = 0; j < g.ncols; j++) {
            const col *cj = &g.cols[j];
            for (uint32_t i = 0; i < cj->nl; i++)
                lo[cj->link[i]] += (double)cj->load[i] * (double)md->mult[cj->s] / (double)md->dmax;
        }
        for (uint32_t l = 0; l < g.m; l++) {
            double r = lo[l] / mpq_get_d(md->cap[md->cls[l]]);
            if (r > worst) {
                worst = r;
                at = l;
            }
        }
        weft__free(lo);
        if (at != UINT32_MAX) {
            glp_set_col_stat(P, 1, GLP_BS);
            for (size_t j = 0; j < g.ncols; j++)
                glp_set_col_stat(P, (int)j + 2, GLP_BS);
            for (uint32_t s = 0; s < g.ns; s++)
                glp_set_row_stat(P, (int)s + 1, GLP_NS);
            for (uint32_t l = 0; l < g.m; l++)
                glp_set_row_stat(P, (int)(g.ns + l + 1), l == at ? GLP_NU : GLP_BS);
        }
    }
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    /* The loop ends when no tree pays; a master that stops improving (the
     * floats' tolerances re-offering a tree the simplex will not take)
     * ends it too, after CG_STALL rounds: the certificate below then
     * decides, and the edge program answers if it cannot. */
    double best = -1;
    uint32_t stall = 0;
    for (uint32_t iter = 0;; iter++) {
        int rc = glp_simplex(P, &parm);
        if (rc != 0 || glp_get_status(P) != GLP_OPT)
            goto done; /* not certified: the caller falls back */
        double ymax = 0;
        for (uint32_t l = 0; l < g.m; l++) {
            double y = fabs(glp_get_row_dual(P, (int)(g.ns + l + 1)));
            len[l] = y;
            ymax = y > ymax ? y : ymax;
        }
        /* Lengths: the duals, plus a tie-break far below them toward
         * short paths over wide links. */
        for (uint32_t l = 0; l < g.m; l++)
            len[l] += 1e-9 * (ymax > 0 ? ymax : 1) / mpq_get_d(md->cap[md->cls[l]]);
        size_t added = 0;
        for (uint32_t s = 0; s < g.ns && !e; s++) {
            double pi = glp_get_row_dual(P, (int)s + 1);
            dijkstra(&g, weft_topo_rank_node(md->t, (weft_rank){md->src[s]}).v, len);
            double cost = tree_cost(&g, s) * (double)md->mult[s] / (double)md->dmax;
            /* reduced cost of the tree: -(π + cost); pays when > 0 */
            if (pi + cost >= -1e-9 * fabs(pi))
                continue;
            col cl;
            e = tree_col(&g, s, &cl);
            if (!e && (e = push_col(&g, &cl))) {
                weft__free(cl.link);
                weft__free(cl.load);
            }
            if (!e) {
                add_col(&g, P, &cl, ind, val);
                added++;
            }
        }
        if (e)
            goto done;
        double obj = glp_get_obj_val(P);
        stall = obj > best * (1 + 1e-12) ? 0 : stall + 1;
        best = obj > best ? obj : best;
        if (!added || stall >= CG_STALL || iter >= CG_MAX_ROUNDS)
            break;
    }
    b->lp_rows = (uint32_t)glp_get_num_rows(P);
    b->lp_cols = (uint32_t)glp_get_num_cols(P);
    /* Exact: U from the duals, then λ exactly feasible at U. */
    static const double tols[] = {1e-9, 1e-11, 1e-13};
    mpq_t *rl = weft__malloc(((size_t)g.m + 1) * sizeof *rl);
    mpq_t *lam = weft__malloc((g.ncols + 1) * sizeof *lam);
    mpq_t *lamb = weft__malloc((g.ncols + 1) * sizeof *lamb);
    if (!rl || !lam || !lamb) {
        weft__free(rl);
        weft__free(lam);
        weft__free(lamb);
        e = WEFT_ENOMEM;
        goto done;
    }
    for (uint32_t l = 0; l < g.m; l++) {
        mpq_init(rl[l]);
        len[l] = fabs(glp_get_row_dual(P, (int)(g.ns + l + 1)));
    }
    for (size_t j = 0; j < g.ncols; j++) {
        mpq_init(lam[j]);
        mpq_init(lamb[j]);
    }
    /* The exact basic solution first (the simplex's values of a large
     * master have denominators beyond doubles), then the rounded values;
     * each against the duals made rational at growing precision. */
    mpq_t th;
    mpq_init(th);
    bool basis = exact_master(&g, P, lamb, th) && loads_fit(&g, lamb, th);
    mpq_t *proof = NULL; /* the λ that proved it */
    for (size_t i = 0; i < sizeof tols / sizeof *tols && !*certified; i++) {
        for (uint32_t l = 0; l < g.m; l++)
            weft__a2a_rationalize(len[l], tols[i], rl[l]);
        if (!dual_bound(&g, rl, len, c->theta))
            continue;
        if (basis && mpq_equal(th, c->theta)) {
            *certified = true;
            b->cert = WEFT_A2A_CERT_BASIS;
            proof = lamb;
        }
        for (size_t k = 0; k < sizeof tols / sizeof *tols && !*certified; k++)
            if (rounded_lambda(&g, P, tols[k], c->theta, lam) && loads_fit(&g, lam, c->theta)) {
                *certified = true;
                b->cert = WEFT_A2A_CERT_ROUNDED;
                proof = lam;
            }
    }
    mpq_clear(th);
    if (*certified) {
        for (uint32_t o = 0; o < md->no; o++)
            mpq_set_ui(c->len[o], 0, 1);
        for (uint32_t l = 0; l < g.m; l++)
            mpq_set(c->len[md->cls[l]], rl[l]);
    }
    if (*certified && trees) {
        /* The routes need shares that fit 64-bit fractions: the basic
         * solution's may not at scale; the rounded values' (small
         * fractions over their sum) usually do, and any λ exactly
         * feasible at the proved θ routes the optimum. */
        for (size_t k = 0; k < sizeof tols / sizeof *tols && !shares_fit(&g, proof, c->theta); k++)
            if (rounded_lambda(&g, P, tols[k], c->theta, lam) && loads_fit(&g, lam, c->theta) &&
                shares_fit(&g, lam, c->theta))
                proof = lam;
        e = export_trees(&g, proof, c->theta, trees);
    }
    for (uint32_t l = 0; l < g.m; l++)
        mpq_clear(rl[l]);
    for (size_t j = 0; j < g.ncols; j++) {
        mpq_clear(lam[j]);
        mpq_clear(lamb[j]);
    }
    weft__free(rl);
    weft__free(lam);
    weft__free(lamb);
done:
    glp_delete_prob(P);
    weft__free(len);
    weft__free(ind);
    weft__free(val);
    cg_fini(&g);
    return e;
}
