/* The model of the exact all-to-all bound's linear program and its
 * certificate, shared by a2a_bound.c (building and solving the program)
 * and a2a_exact.c (proving its optimum in rational arithmetic). The
 * program and the certificate's argument are described at the top of
 * a2a_bound.c. File order: a2a_exact < a2a_bound. */
#ifndef WEFT_SYNTH_A2A_EXACT_H
#define WEFT_SYNTH_A2A_EXACT_H

#include <glpk.h>
#include <gmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft/rat.h"
#include "weft/topo.h"

typedef struct model {
    const weft_topo *t;
    uint32_t n, m, nr;
    uint32_t ns;     /* sources */
    uint32_t *src;   /* ns: the rank of each source */
    uint64_t *mult;  /* ns: how many ranks each stands for */
    mpq_t *dem;      /* ns * nr: scaled demand of source s at rank r */
    uint32_t no;     /* link classes */
    uint32_t *cls;   /* m: the class of each link */
    uint64_t *csize; /* no: links in each class */
    mpq_t *cap;      /* no: scaled bandwidth of one link of the class */
    weft_rat cmax;   /* the largest bandwidth (capacity scale) */
    uint64_t dmax;   /* the largest demand entry (1 when uniform) */
} model;

/* Rows and columns of the program (GLPK numbers them from 1). */
static inline int cons_row(const model *md, uint32_t s, uint32_t v)
{
    return (int)((size_t)s * md->n + v + 1);
}

static inline int cap_row(const model *md, uint32_t o)
{
    return (int)((size_t)md->ns * md->n + o + 1);
}

static inline int flow_col(const model *md, uint32_t s, uint32_t l)
{
    return (int)((size_t)s * md->m + l + 1);
}

static inline int theta_col(const model *md)
{
    return (int)((size_t)md->ns * md->m + 1);
}

typedef struct cert {
    mpq_t theta;  /* the certified optimum (scaled) */
    mpq_t *len;   /* no: the dual lengths */
    bool oom;     /* an allocation failed: the call fails with WEFT_ENOMEM */
    mpq_t *flows; /* optional, columns 1..cols: the certified primal */
} cert;

/* The simplest fraction within tol * max(1, |x|) of x (continued
 * fractions); 0 for |x| <= tol. */
void weft__a2a_rationalize(double x, double tol, mpq_t out);

/* Adds to den source s's share of a dual bound's denominator: mult[s] x
 * the sum over ranks r of dem[s][r] x dist[r's node], given the exact
 * distances from s (dist, reached: per node) under the dual lengths; tmp
 * and acc are scratch. False when a rank s sends to was not reached (the
 * lengths prove nothing). */
bool weft__a2a_source_term(const model *md, uint32_t s, const mpq_t *dist, const uint8_t *reached,
                           mpq_t den, mpq_t tmp, mpq_t acc);

/* Rationalises the duals of the solved program P (tolerance tol) into an
 * exact upper bound c->theta, then proves it reached: the primal made
 * rational (tolerance tol), or with exact set the exact basic solution of
 * GLPK's basis, must be exactly feasible at that value. False when it is
 * not (or c->oom when an allocation failed). */
bool weft__a2a_certify(const model *md, glp_prob *P, double tol, bool exact, cert *c);

#endif
