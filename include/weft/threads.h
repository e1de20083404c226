/* The threads of weft's parallel loops (Herald's replay: the tables'
 * draws and the GPUs' bags). Results never depend on their number: each
 * loop's items write their own memory, and what threads add up is summed
 * in a fixed order (integers).
 *
 * The number is set by the program (the weft command reads WEFT_THREADS);
 * library code never reads the environment itself. The default is the
 * CPUs this process may run on (its affinity), at most 32.
 */
#ifndef WEFT_THREADS_H
#define WEFT_THREADS_H

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most threads weft_threads_set takes. */
#define WEFT_THREADS_MAX 256

/* Sets the threads (1 .. WEFT_THREADS_MAX), or 0 for the default;
 * WEFT_EINVAL (nothing changed) above WEFT_THREADS_MAX. */
WEFT_API weft_err weft_threads_set(unsigned n);
/* The threads a loop may use now (at least 1). */
WEFT_API unsigned weft_threads_get(void);

#ifdef __cplusplus
}
#endif

#endif
