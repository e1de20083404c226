/* Support for the test programs; linked into libweft so every test can use it
 * but not part of the public API. */
#include "base/testing.h"

#include <stdlib.h>

#include "base/alloc.h"

int weft__test_passed;
int weft__test_failed;

int weft_test_done(void)
{
    printf("%d passed, %d failed\n", weft__test_passed, weft__test_failed);
    return weft__test_failed ? 1 : 0;
}

void weft_test_child_start(void)
{
    weft__test_passed = 0;
    weft__test_failed = 0;
}

int weft_test_child_status(int rc)
{
    if (rc)
        return rc;
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

uint64_t weft_test_rng(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1du;
}

char *weft_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

long weft_test_oom_sweep(const char *what, weft_test_ctor ctor, weft_test_dtor dtor, void *arg)
{
    long base = weft__alloc_live();
    for (long n = 0;; n++) {
        weft__alloc_fail_after(n);
        weft_err e = ctor(arg);
        weft__alloc_fail_after(-1);
        if (e == WEFT_OK) {
            dtor(arg);
            if (weft__alloc_live() != base) {
                fprintf(stderr, "%s: %ld blocks leaked after success\n", what,
                        weft__alloc_live() - base);
                weft__test_failed++;
                return -1;
            }
            weft__test_passed++;
            return n;
        }
        if (e != WEFT_ENOMEM) {
            fprintf(stderr, "%s: allocation %ld failed gave %s, expected WEFT_ENOMEM\n", what, n,
                    weft_err_name(e));
            weft__test_failed++;
            return -1;
        }
        if (weft__alloc_live() != base) {
            fprintf(stderr, "%s: allocation %ld failed and %ld blocks leaked\n", what, n,
                    weft__alloc_live() - base);
            weft__test_failed++;
            return -1;
        }
        if (n > 10000000) {
            fprintf(stderr, "%s: never succeeded\n", what);
            weft__test_failed++;
            return -1;
        }
    }
}
