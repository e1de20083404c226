/* The certificate of the exact all-to-all bound (synth/a2a_exact.h): the
 * simplex's duals made rational give an upper bound whatever their
 * accuracy, and a rational primal (rounded, or the exact basic solution of
 * GLPK's basis, solved in GMP rationals) exactly feasible at that value
 * proves it optimal. The argument is at the top of a2a_bound.c.
 * File order: a2a_exact < a2a_bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "synth/a2a_exact.h"

/* The simplest fraction within tol * max(1, |x|) of x (continued
 * fractions); 0 for |x| <= tol. */
void weft__a2a_rationalize(double x, double tol, mpq_t out)
{
    double r = fabs(x), lim = tol * (r > 1 ? r : 1);
    if (r <= tol || !isfinite(r)) {
        mpq_set_ui(out, 0, 1);
        return;
    }
    int64_t h0 = 0, h1 = 1, k0 = 1, k1 = 0;
    double y = r;
    for (int it = 0; it < 64; it++) {
        double a = floor(y);
        if (a > 9e15)
            break;
        int64_t an = (int64_t)a;
        if ((h1 && an > (INT64_MAX - h0) / h1) || (k1 && an > (INT64_MAX - k0) / k1))
            break;
        int64_t h2 = an * h1 + h0, k2 = an * k1 + k0;
        h0 = h1, h1 = h2, k0 = k1, k1 = k2;
        if (fabs(r - (double)h1 / (double)k1) <= lim)
            break;
        double frac = y - a;
        if (frac < 1e-300)
            break;
        y = 1 / frac;
    }
    if (k1 == 0)
        k1 = 1;
    mpz_set_si(mpq_numref(out), x < 0 ? -h1 : h1);
    mpz_set_si(mpq_denref(out), k1);
    mpq_canonicalize(out);
}

/* Shortest-path distances from node s with link l of length len[cls[l]]
 * (exact, O(V^2) selection: no heap of bignums; V is at most a few
 * thousand here). dist[v] < 0 marks an unreachable node. */
static void exact_dist(const model *md, uint32_t s, mpq_t *len, mpq_t *dist, uint8_t *done,
                       uint8_t *reached, mpq_t tmp)
{
    uint32_t n = md->n;
    memset(done, 0, n);
    memset(reached, 0, n);
    mpq_set_ui(dist[s], 0, 1);
    reached[s] = 1;
    for (;;) {
        uint32_t best = UINT32_MAX;
        for (uint32_t v = 0; v < n; v++)
            if (reached[v] && !done[v] && (best == UINT32_MAX || mpq_cmp(dist[v], dist[best]) < 0))
                best = v;
        if (best == UINT32_MAX)
            break;
        done[best] = 1;
        uint32_t first, count;
        weft_topo_out_links(md->t, (weft_node_id){best}, &first, &count);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t l = first + i, x = weft_topo_link_dst(md->t, (weft_link_id){l}).v;
            if (done[x])
                continue;
            mpq_add(tmp, dist[best], len[md->cls[l]]);
            if (!reached[x] || mpq_cmp(tmp, dist[x]) < 0) {
                mpq_set(dist[x], tmp);
                reached[x] = 1;
            }
        }
    }
}

bool weft__a2a_source_term(const model *md, uint32_t s, const mpq_t *dist, const uint8_t *reached,
                           mpq_t den, mpq_t tmp, mpq_t acc)
{
    mpq_set_ui(acc, 0, 1);
    for (uint32_t r = 0; r < md->nr; r++) {
        const mpq_t *q = &md->dem[(size_t)s * md->nr + r];
        uint32_t v = weft_topo_rank_node(md->t, (weft_rank){r}).v;
        if (mpq_sgn(*q) == 0)
            continue;
        if (!reached[v])
            return false;
        mpq_mul(tmp, *q, dist[v]);
        mpq_add(acc, acc, tmp);
    }
    mpq_set_ui(tmp, md->mult[s], 1);
    mpq_mul(acc, acc, tmp);
    mpq_add(den, den, acc);
    return true;
}

/* Upper bound from the lengths: sum |O| cap l / sum mult dem dist. False
 * when the denominator is zero (the lengths prove nothing). */
static bool dual_bound(const model *md, mpq_t *len, mpq_t out, bool *oom)
{
    uint32_t n = md->n;
    mpq_t *dist = weft__malloc((size_t)n * sizeof *dist);
    uint8_t *done = weft__malloc(n), *reached = weft__malloc(n);
    bool ok = false;
    if (!dist || !done || !reached) {
        *oom = true;
        goto free_scratch;
    }
    for (uint32_t v = 0; v < n; v++)
        mpq_init(dist[v]);
    mpq_t num, den, tmp, acc;
    mpq_inits(num, den, tmp, acc, NULL);
    for (uint32_t o = 0; o < md->no; o++) {
        mpq_set_ui(tmp, md->csize[o], 1);
        mpq_mul(tmp, tmp, md->cap[o]);
        mpq_mul(tmp, tmp, len[o]);
        mpq_add(num, num, tmp);
    }
    ok = true;
    for (uint32_t s = 0; s < md->ns && ok; s++) {
        exact_dist(md, weft_topo_rank_node(md->t, (weft_rank){md->src[s]}).v, len, dist, done,
                   reached, tmp);
        /* Every rank is reached after check_routes. */
        ok = weft__a2a_source_term(md, s, dist, reached, den, tmp, acc);
    }
    if (ok && mpq_sgn(den) > 0)
        mpq_div(out, num, den);
    else
        ok = false;
    mpq_clears(num, den, tmp, acc, NULL);
    for (uint32_t v = 0; v < n; v++)
        mpq_clear(dist[v]);
free_scratch:
    weft__free(dist);
    weft__free(done);
    weft__free(reached);
    return ok;
}

/* True when the GLPK primal, made rational with tolerance tol, is exactly
 * feasible with θ = theta: x >= 0, every conservation row exact, every
 * class row within its capacity. */
static bool primal_feasible(const model *md, glp_prob *P, double tol, mpq_t *exact,
                            const mpq_t theta, bool *oom)
{
    uint32_t n = md->n, m = md->m, nr = md->nr;
    mpq_t *bal = weft__malloc((size_t)n * sizeof *bal);
    mpq_t *load = weft__malloc(((size_t)md->no + 1) * sizeof *load);
    bool ok = bal && load;
    if (!ok) {
        *oom = true;
        goto free_scratch;
    }
    for (uint32_t v = 0; v < n; v++)
        mpq_init(bal[v]);
    for (uint32_t o = 0; o < md->no; o++)
        mpq_init(load[o]);
    mpq_t x, tmp;
    mpq_inits(x, tmp, NULL);
    for (uint32_t s = 0; s < md->ns && ok; s++) {
        for (uint32_t v = 0; v < n; v++)
            mpq_set_ui(bal[v], 0, 1);
        for (uint32_t l = 0; l < m; l++) {
            if (exact)
                mpq_set(x, exact[flow_col(md, s, l)]);
            else
                weft__a2a_rationalize(glp_get_col_prim(P, flow_col(md, s, l)), tol, x);
            if (mpq_sgn(x) < 0) {
                ok = false;
                break;
            }
            if (mpq_sgn(x) == 0)
                continue;
            mpq_add(bal[weft_topo_link_dst(md->t, (weft_link_id){l}).v],
                    bal[weft_topo_link_dst(md->t, (weft_link_id){l}).v], x);
            mpq_sub(bal[weft_topo_link_src(md->t, (weft_link_id){l}).v],
                    bal[weft_topo_link_src(md->t, (weft_link_id){l}).v], x);
            mpq_set_ui(tmp, md->mult[s], 1);
            mpq_mul(tmp, tmp, x);
            mpq_add(load[md->cls[l]], load[md->cls[l]], tmp);
        }
        uint32_t sv = weft_topo_rank_node(md->t, (weft_rank){md->src[s]}).v;
        for (uint32_t v = 0; v < n && ok; v++) {
            weft_rank r;
            if (v == sv)
                continue;
            mpq_set_ui(tmp, 0, 1);
            if (weft_topo_node_rank(md->t, (weft_node_id){v}, &r))
                mpq_mul(tmp, md->dem[(size_t)s * nr + r.v], theta);
            ok = mpq_equal(bal[v], tmp);
        }
    }
    for (uint32_t o = 0; o < md->no && ok; o++) {
        mpq_set_ui(tmp, md->csize[o], 1);
        mpq_mul(tmp, tmp, md->cap[o]);
        ok = mpq_cmp(load[o], tmp) <= 0;
    }
    mpq_clears(x, tmp, NULL);
    for (uint32_t v = 0; v < n; v++)
        mpq_clear(bal[v]);
    for (uint32_t o = 0; o < md->no; o++)
        mpq_clear(load[o]);
free_scratch:
    weft__free(bal);
    weft__free(load);
    return ok;
}

/* ---- The exact basic solution ------------------------------------------------ *
 *
 * When the simplex's values cannot be made rational directly (a vertex whose
 * denominators are too large for a double to pin down), the basic solution
 * of GLPK's final basis is computed exactly: iterative refinement in base
 * 2^SHIFT (Dixon's method, as exact LP solvers such as QSopt_ex use it)
 * with GLPK's floating factorisation as the approximate inverse and every
 * residual exact in integers, then rational reconstruction (continued
 * fractions) with one common denominator, checked exactly against the
 * system. GLPK's basis matrix has a unit column for a basic row variable
 * and -A_j for a basic column j (rows read x_row = A x).
 */

#define SHIFT 26
#define MAX_ROUNDS 400

typedef struct exact_sys {
    int rows, cols;
    mpz_t *L;   /* per row: the integer that makes the row integral */
    mpz_t *rhs; /* per row: L_i * (-value of a nonbasic row variable) */
    int *head;  /* per basis position k: GLPK's basic variable */
    /* Integral column entries L_i a_ij, compressed by column. */
    int *cstart, *crow;
    mpz_t *cval;
} exact_sys;

/* Coefficient a_ij exactly, for the column/row shapes of build_lp. */
static void column_entries(const model *md, int j, int *rows, mpq_t *vals, int *count)
{
    int k = 0;
    if (j == theta_col(md)) {
        for (uint32_t s = 0; s < md->ns; s++)
            for (uint32_t r = 0; r < md->nr; r++) {
                const mpq_t *q = &md->dem[(size_t)s * md->nr + r];
                if (mpq_sgn(*q) == 0)
                    continue;
                rows[k] = cons_row(md, s, weft_topo_rank_node(md->t, (weft_rank){r}).v);
                mpq_neg(vals[k++], *q);
            }
    } else {
        uint32_t s = (uint32_t)((j - 1) / (int)md->m), l = (uint32_t)((j - 1) % (int)md->m);
        rows[k] = cons_row(md, s, weft_topo_link_dst(md->t, (weft_link_id){l}).v);
        mpq_set_si(vals[k++], 1, 1);
        rows[k] = cons_row(md, s, weft_topo_link_src(md->t, (weft_link_id){l}).v);
        mpq_set_si(vals[k++], -1, 1);
        rows[k] = cap_row(md, md->cls[l]);
        mpq_set_ui(vals[k++], md->mult[s], 1);
    }
    *count = k;
}

/* Computes the exact values of every column (xs[1..cols]) at GLPK's final
 * basis. False when the basis is missing, refinement diverges, or no
 * reconstruction satisfies the system exactly. */
static bool exact_basic(const model *md, glp_prob *P, mpq_t *xs, bool *oom)
{
    int M = glp_get_num_rows(P), Ncol = glp_get_num_cols(P);
    if (!glp_bf_exists(P) && glp_factorize(P) != 0)
        return false;
    size_t maxc = (size_t)md->ns * md->nr + 4;
    int *rows = weft__malloc(maxc * sizeof *rows);
    mpq_t *vals = weft__malloc(maxc * sizeof *vals);
    mpz_t *L = weft__malloc(((size_t)M + 1) * sizeof *L);
    mpz_t *R = weft__malloc(((size_t)M + 1) * sizeof *R);
    mpz_t *X = weft__malloc(((size_t)M + 1) * sizeof *X);
    double *z = weft__malloc(((size_t)M + 1) * sizeof *z);
    bool ok = false;
    if (!rows || !vals || !L || !R || !X || !z) {
        *oom = true;
        goto free_scratch;
    }
    for (size_t i = 0; i < maxc; i++)
        mpq_init(vals[i]);
    for (int i = 0; i <= M; i++) {
        mpz_init_set_ui(L[i], 1);
        mpz_init(R[i]);
        mpz_init(X[i]);
    }
    mpz_t tmp, g;
    mpz_inits(tmp, g, NULL);
    /* Row scales: the lcm of the denominators in the row and its bound. */
    for (int j = 1; j <= Ncol; j++) {
        int cnt;
        column_entries(md, j, rows, vals, &cnt);
        for (int k = 0; k < cnt; k++)
            mpz_lcm(L[rows[k]], L[rows[k]], mpq_denref(vals[k]));
    }
    mpq_t v;
    mpq_init(v);
    for (uint32_t o = 0; o < md->no; o++) {
        int i = cap_row(md, o);
        if (glp_get_row_stat(P, i) == GLP_BS)
            continue;
        /* Nonbasic: at its upper bound |O| cap. */
        mpq_set_ui(v, md->csize[o], 1);
        mpq_mul(v, v, md->cap[o]);
        mpz_lcm(L[i], L[i], mpq_denref(v));
        mpz_divexact(tmp, L[i], mpq_denref(v));
        mpz_mul(R[i], tmp, mpq_numref(v));
        mpz_neg(R[i], R[i]); /* rhs = -L v */
    }
    mpq_clear(v);
    /* R = rhs (S = 0); keep a copy of rhs for the check. */
    mpz_t *b = weft__malloc(((size_t)M + 1) * sizeof *b);
    if (!b) {
        *oom = true;
        goto free_mpz;
    }
    for (int i = 0; i <= M; i++)
        mpz_init_set(b[i], R[i]);
    unsigned long S = 0;
    for (int round = 0; round < MAX_ROUNDS && !ok; round++) {
        double maxr = 0;
        for (int i = 1; i <= M; i++) {
            /* Unscaled residual R_i / L_i, as a double. */
            z[i] = mpz_get_d(R[i]) / mpz_get_d(L[i]);
            if (fabs(z[i]) > maxr)
                maxr = fabs(z[i]);
        }
        if (maxr > 1e30)
            break; /* diverges: the float factorisation is too poor */
        glp_ftran(P, z);
        /* X = 2^SHIFT X + Y, R = 2^SHIFT R - B_L Y with Y = round(z 2^SHIFT). */
        for (int i = 1; i <= M; i++) {
            mpz_mul_2exp(X[i], X[i], SHIFT);
            mpz_mul_2exp(R[i], R[i], SHIFT);
        }
        S += SHIFT;
        for (int k = 1; k <= M; k++) {
            double y = nearbyint(ldexp(z[k], SHIFT));
            if (y == 0)
                continue;
            mpz_set_d(tmp, y);
            mpz_add(X[k], X[k], tmp);
            int h = glp_get_bhead(P, k);
            if (h <= M) { /* unit column of row h */
                mpz_mul(g, L[h], tmp);
                mpz_sub(R[h], R[h], g);
            } else { /* column -A_j: R -= -L a Y */
                int cnt;
                column_entries(md, h - M, rows, vals, &cnt);
                for (int e = 0; e < cnt; e++) {
                    mpz_divexact(g, L[rows[e]], mpq_denref(vals[e]));
                    mpz_mul(g, g, mpq_numref(vals[e]));
                    mpz_addmul(R[rows[e]], g, tmp);
                }
            }
        }
        if (round < 2 || round % 2)
            continue;
        /* Reconstruct with a common denominator q: for each value in turn,
         * multiply by q and, when it is not within reach of an integer,
         * extend q by the continued-fraction denominator of what is left. */
        mpz_t q, p0, p1, q0, q1, a, num, den, rem, bound;
        mpz_inits(q, p0, p1, q0, q1, a, num, den, rem, bound, NULL);
        mpz_set_ui(q, 1);
        mpz_set_ui(bound, 1);
        mpz_mul_2exp(bound, bound, (S - 40) / 2);
        bool fits = true;
        for (int k = 1; k <= M && fits; k++) {
            /* y = q X_k / 2^S; its fractional part as num/den. */
            mpz_mul(num, q, X[k]);
            mpz_set_ui(den, 1);
            mpz_mul_2exp(den, den, S);
            mpz_fdiv_r(num, num, den);
            /* Near an integer (within 2^-(S/2)): nothing to add. */
            mpz_sub(rem, den, num);
            if (mpz_sizeinbase(num, 2) < S / 2 || mpz_sizeinbase(rem, 2) < S / 2)
                continue;
            /* Convergents of num/den up to the bound on the denominator. */
            mpz_t A, B;
            mpz_inits(A, B, NULL);
            mpz_set(A, num), mpz_set(B, den);
            /* h(-1) = 1, h(-2) = 0, k(-1) = 0, k(-2) = 1. */
            mpz_set_ui(p0, 0), mpz_set_ui(p1, 1), mpz_set_ui(q0, 1), mpz_set_ui(q1, 0);
            mpz_t bestq;
            mpz_init_set_ui(bestq, 0);
            while (mpz_sgn(B) != 0) {
                mpz_fdiv_qr(a, rem, A, B);
                /* h = a p1 + p0, k = a q1 + q0 */
                mpz_mul(g, a, q1);
                mpz_add(g, g, q0);
                if (mpz_cmp(g, bound) > 0)
                    break;
                mpz_set(q0, q1), mpz_set(q1, g);
                mpz_mul(g, a, p1);
                mpz_add(g, g, p0);
                mpz_set(p0, p1), mpz_set(p1, g);
                mpz_set(bestq, q1);
                mpz_set(A, B), mpz_set(B, rem);
            }
            if (mpz_sgn(bestq) == 0 || mpz_cmp_ui(bestq, 1) == 0)
                fits = false;
            else
                mpz_mul(q, q, bestq);
            if (mpz_sizeinbase(q, 2) > S / 2)
                fits = false;
            mpz_clears(A, B, bestq, NULL);
        }
        if (fits) {
            /* Z_k = round(q X_k / 2^S); check B_L Z == q rhs exactly. */
            mpz_t *Z = weft__malloc(((size_t)M + 1) * sizeof *Z);
            mpz_t *chk = weft__malloc(((size_t)M + 1) * sizeof *chk);
            if (!Z || !chk)
                *oom = true, round = MAX_ROUNDS;
            if (Z && chk) {
                for (int i = 0; i <= M; i++) {
                    mpz_init(Z[i]);
                    mpz_init(chk[i]);
                    mpz_mul(chk[i], q, b[i]);
                }
                for (int k = 1; k <= M; k++) {
                    mpz_mul(Z[k], q, X[k]);
                    mpz_set_ui(den, 1);
                    mpz_mul_2exp(den, den, S - 1);
                    mpz_add(Z[k], Z[k], den); /* round half up */
                    mpz_fdiv_q_2exp(Z[k], Z[k], S);
                    int h = glp_get_bhead(P, k);
                    if (h <= M) {
                        mpz_submul(chk[h], L[h], Z[k]);
                    } else {
                        int cnt;
                        column_entries(md, h - M, rows, vals, &cnt);
                        for (int e = 0; e < cnt; e++) {
                            mpz_divexact(g, L[rows[e]], mpq_denref(vals[e]));
                            mpz_mul(g, g, mpq_numref(vals[e]));
                            mpz_addmul(chk[rows[e]], g, Z[k]);
                        }
                    }
                }
                ok = true;
                for (int i = 1; i <= M && ok; i++)
                    ok = mpz_sgn(chk[i]) == 0;
                if (ok) {
                    for (int j = 1; j <= Ncol; j++)
                        mpq_set_ui(xs[j], 0, 1);
                    for (int k = 1; k <= M; k++) {
                        int h = glp_get_bhead(P, k);
                        if (h > M) {
                            mpz_set(mpq_numref(xs[h - M]), Z[k]);
                            mpz_set(mpq_denref(xs[h - M]), q);
                            mpq_canonicalize(xs[h - M]);
                        }
                    }
                }
                for (int i = 0; i <= M; i++) {
                    mpz_clear(Z[i]);
                    mpz_clear(chk[i]);
                }
            }
            weft__free(Z);
            weft__free(chk);
        }
        mpz_clears(q, p0, p1, q0, q1, a, num, den, rem, bound, NULL);
    }
    for (int i = 0; i <= M; i++)
        mpz_clear(b[i]);
    weft__free(b);
free_mpz:
    mpz_clears(tmp, g, NULL);
    for (int i = 0; i <= M; i++) {
        mpz_clear(L[i]);
        mpz_clear(R[i]);
        mpz_clear(X[i]);
    }
    for (size_t i = 0; i < maxc; i++)
        mpq_clear(vals[i]);
free_scratch:
    weft__free(rows);
    weft__free(vals);
    weft__free(L);
    weft__free(R);
    weft__free(X);
    weft__free(z);
    return ok;
}

/* Rationalises the duals (tolerance tol) into an exact upper bound, then
 * proves it reached: the primal made rational (tolerance tol), or with
 * exact set the exact basic solution of GLPK's basis, must be exactly
 * feasible at that value. */
bool weft__a2a_certify(const model *md, glp_prob *P, double tol, bool exact, cert *c)
{
    double sign = 0;
    for (uint32_t o = 0; o < md->no && !sign; o++) {
        double y = glp_get_row_dual(P, cap_row(md, o));
        if (fabs(y) > tol)
            sign = y > 0 ? 1 : -1;
    }
    if (!sign)
        return false;
    for (uint32_t o = 0; o < md->no; o++) {
        double y = sign * glp_get_row_dual(P, cap_row(md, o));
        weft__a2a_rationalize(y > 0 ? y : 0, tol, c->len[o]);
    }
    if (!dual_bound(md, c->len, c->theta, &c->oom))
        return false;
    if (!exact) {
        if (!primal_feasible(md, P, tol, NULL, c->theta, &c->oom))
            return false;
        int cols = glp_get_num_cols(P);
        for (int j = 1; c->flows && j <= cols; j++)
            weft__a2a_rationalize(glp_get_col_prim(P, j), tol, c->flows[j]);
        if (c->flows)
            mpq_set(c->flows[theta_col(md)], c->theta);
        return true;
    }
    int ncol = glp_get_num_cols(P);
    mpq_t *xs = weft__malloc(((size_t)ncol + 1) * sizeof *xs);
    if (!xs) {
        c->oom = true;
        return false;
    }
    for (int j = 0; j <= ncol; j++)
        mpq_init(xs[j]);
    bool ok = exact_basic(md, P, xs, &c->oom) && mpq_equal(xs[theta_col(md)], c->theta) &&
              primal_feasible(md, P, tol, xs, c->theta, &c->oom);
    for (int j = 0; ok && c->flows && j <= ncol; j++)
        mpq_set(c->flows[j], xs[j]);
    for (int j = 0; j <= ncol; j++)
        mpq_clear(xs[j]);
    weft__free(xs);
    return ok;
}
