/* weft traffic matrices: how many bytes each rank sends to each rank.
 *
 * A traffic matrix is the demand of one all-to-all (alltoallv): entry (i, j)
 * is the number of bytes rank i sends to rank j. The diagonal is allowed (a
 * rank's own share stays local and crosses no link). It is data, shared by
 * the bound (maximum concurrent flow), synthesis (alltoallv plans), the
 * simulator, the runtime (`weft perf alltoall --traffic`) and training steps
 * (expert-parallel dispatch and combine).
 *
 * File format (docs/traffic-format.md): N lines of N non-negative decimal
 * integers separated by blanks; `#` starts a comment to the end of the line;
 * blank lines are ignored. Errors name the file, line and column.
 *
 * Contract: this header is owned by the `plan` module (src/plan/traffic*.c);
 * a weft_traffic is plain data the caller owns and frees with
 * weft_traffic_free.
 */
#ifndef WEFT_TRAFFIC_H
#define WEFT_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_traffic {
    uint32_t ranks;  /* N */
    uint64_t *bytes; /* N*N, row-major: bytes[i*N + j] = bytes rank i sends to j */
} weft_traffic;

/* A zero matrix of n ranks (n >= 1). */
WEFT_API weft_err weft_traffic_new(uint32_t n, weft_traffic *out, weft_diag *d);
/* Frees the entries; t may be NULL or already freed (bytes NULL). */
WEFT_API void weft_traffic_free(weft_traffic *t);

/* Parses the text of a matrix file; `name` is used in messages
 * ("NAME:LINE:COL: reason"). */
WEFT_API weft_err weft_traffic_parse(const char *text, size_t len, const char *name,
                                     weft_traffic *out, weft_diag *d);
/* Reads and parses a matrix file (messages name the whole path). */
WEFT_API weft_err weft_traffic_load_file(const char *path, weft_traffic *out, weft_diag *d);

/* Entry (i, j). */
static inline uint64_t weft_traffic_at(const weft_traffic *t, uint32_t i, uint32_t j) {
    return t->bytes[(size_t)i * t->ranks + j];
}

#ifdef __cplusplus
}
#endif
#endif
