/* weft__kth_largest against a sort: every k of arrays with ties, sorted,
 * reversed and constant runs, random ones of 1 to 200 elements. */
#include <stdlib.h>
#include <string.h>

#include "base/rand.h"
#include "base/select.h"
#include "base/testing.h"

static int descending(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

static void check_all_k(const float *v, size_t n)
{
    float *sorted = malloc(n * sizeof *sorted), *work = malloc(n * sizeof *work);
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, descending);
    size_t wrong = 0;
    for (size_t k = 1; k <= n; k++) {
        memcpy(work, v, n * sizeof *v);
        wrong += weft__kth_largest(work, n, k) != sorted[k - 1];
    }
    CHECK_INT(wrong, 0);
    free(sorted);
    free(work);
}

int main(void)
{
    float v[200];
    weft__rng r;
    weft__rng_seed(&r, 7, 0);
    for (size_t n = 1; n <= 200; n += (n < 20 ? 1 : 17)) {
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(weft__rng_next(&r) % 13) - 6.0f; /* many ties */
        check_all_k(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (float)i; /* ascending */
        check_all_k(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(n - i); /* descending */
        check_all_k(v, n);
        for (size_t i = 0; i < n; i++)
            v[i] = 1.5f; /* constant */
        check_all_k(v, n);
    }
    return weft_test_done();
}
