/* Helpers of the work module's tests (not part of the library). */
#ifndef WEFT_WORK_TESTING_WORK_H
#define WEFT_WORK_TESTING_WORK_H

#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "weft/topo.h"
#include "weft/work.h"

/* A GPT of `layers` layers, hidden 64, 4 heads, sequence 32, vocabulary
 * 256. */
static inline weft_model weft__test_tiny_model(uint32_t layers)
{
    weft_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "tiny");
    m.layers = layers;
    m.hidden = 64;
    m.heads = 4;
    m.seq = 32;
    m.vocab = 256;
    weft_model_complete(&m);
    return m;
}

/* weft_work_counts refuses p for m on ranks with exactly msg. */
static inline void weft__test_check_refused(const weft_parallel *p, const weft_model *m,
                                            uint32_t ranks, const char *msg)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_counts c;
    CHECK_ERR(weft_work_counts(m, p, ranks, &c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, msg);
}

/* A step context on the fabric spec with the GPU preset gpu (*g, *t: both,
 * free *t after the context), or NULL after a failed CHECK. */
static inline weft_work_ctx *weft__test_work_ctx(const char *spec, const char *gpu, weft_gpu *g,
                                                 weft_topo **t)
{
    weft_work_ctx *c = NULL;
    weft_diag d;
    *t = NULL;
    if (weft_topo_from_spec(spec, NULL, t, &d))
        fprintf(stderr, "%s: %s\n", spec, d.msg);
    CHECK(*t != NULL);
    CHECK(weft_gpu_find(gpu, g));
    if (*t)
        CHECK_ERR(weft_work_ctx_new(*t, g, NULL, &c), WEFT_OK);
    if (!c) {
        weft_topo_free(*t);
        *t = NULL;
    }
    return c;
}

#endif
