/* The exact all-to-all bound of a traffic matrix by column generation
 * (a2a_colgen.c), on the model of synth/a2a_exact.h. File order:
 * a2a_exact < a2a_colgen < a2a_bound. */
#ifndef WEFT_SYNTH_A2A_COLGEN_H
#define WEFT_SYNTH_A2A_COLGEN_H

#include "synth/a2a_exact.h"
#include "synth/a2a_internal.h"
#include "weft/synth.h"
#include "weft/traffic.h"

/* Solves the bound of matrix tm on model md (every link its own class) by
 * column generation and certifies it: on success *certified is true,
 * c->theta is the exact optimum (model scale), c->len the dual lengths, and
 * b's lp_rows, lp_cols and cert are set. *certified false (WEFT_OK): the
 * optimum could not be proved this way and the caller solves the edge
 * program. With trees not NULL and certified, *trees receives the
 * certified master's positive columns (a2a_internal.h), each share its λ
 * over θ; the exact λ whose shares all fit 64-bit fractions are preferred
 * (the plan's routes need them). WEFT_ENOMEM when an allocation failed. */
weft_err weft__a2a_colgen(const model *md, const weft_traffic *tm, weft_a2a_bound *b, cert *c,
                          bool *certified, weft__a2a_trees *trees);

#endif
