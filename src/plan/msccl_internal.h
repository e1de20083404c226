/* What MSCCL import (msccl_import.c) and export (msccl_export.c) share: the
 * step types and the collective spellings. docs/msccl.md describes the
 * mapping between MSCCL programs and weft plans. Nothing outside src/plan
 * includes this header.
 */
#ifndef WEFT_PLAN_MSCCL_INTERNAL_H
#define WEFT_PLAN_MSCCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "weft/plan.h"

/* The step types of the MSCCL interpreter, in the order of its opcodes. */
typedef enum weft__msccl_step_type {
    WEFT__MSCCL_S = 0, /* send src */
    WEFT__MSCCL_R,     /* receive into dst */
    WEFT__MSCCL_RCS,   /* receive into dst, send it on */
    WEFT__MSCCL_RRS,   /* receive, add src, send the sum on (not stored) */
    WEFT__MSCCL_RRC,   /* receive, add src, store in dst */
    WEFT__MSCCL_RRCS,  /* receive, add src, store in dst and send it on */
    WEFT__MSCCL_CPY,   /* dst = src, locally */
    WEFT__MSCCL_RE,    /* dst = dst + src, locally */
    WEFT__MSCCL_NOP,   /* only waits for its dependency */
    WEFT__MSCCL_STEP_COUNT
} weft__msccl_step_type;

/* "s", "r", "rcs", ... as written in the type attribute. */
extern const char *const weft__msccl_step_names[WEFT__MSCCL_STEP_COUNT];

/* True when a step of this type receives (sends) a message. */
static inline bool weft__msccl_step_recvs(int t)
{
    return t == WEFT__MSCCL_R || t == WEFT__MSCCL_RCS || t == WEFT__MSCCL_RRS ||
           t == WEFT__MSCCL_RRC || t == WEFT__MSCCL_RRCS;
}
static inline bool weft__msccl_step_sends(int t)
{
    return t == WEFT__MSCCL_S || t == WEFT__MSCCL_RCS || t == WEFT__MSCCL_RRS ||
           t == WEFT__MSCCL_RRCS;
}

/* The coll attribute's spelling of a collective under a profile
 * (reducescatter is "reduce_scatter" for the msccl profile). */
const char *weft__msccl_coll_name(weft_coll coll, weft_msccl_profile profile);

#endif
