/* Helpers of the work module's tests (not part of the library). */
#ifndef WEFT_WORK_TESTING_WORK_H
#define WEFT_WORK_TESTING_WORK_H

#include <string.h>

#include "base/testing.h"
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

#endif
