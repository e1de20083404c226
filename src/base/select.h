/* Selection: the k-th largest of an array without sorting it. */
#ifndef WEFT_BASE_SELECT_H
#define WEFT_BASE_SELECT_H

#include <stddef.h>

/* The k-th largest of a[0..m) (1 <= k <= m), reordering a: quickselect
 * with the median of three as pivot (Hoare, "Algorithm 65: Find", CACM
 * 1961), expected O(m). The values must be ordered (no NaN: map it to a
 * number first). */
float weft__kth_largest(float *a, size_t m, size_t k);

#endif
