#include "base/alloc.h"
#include "base/testing.h"
#include "base/vec.h"

typedef struct rec {
    uint32_t a;
    double b;
} rec;

int main(void)
{
    weft__vec v;
    weft__vec_init(&v, sizeof(rec));
    CHECK(v.data == NULL);
    CHECK_INT(v.n, 0);
    for (uint32_t i = 0; i < 1000; i++) {
        rec r = {i, i * 0.5};
        CHECK_ERR(weft__vec_push(&v, &r), WEFT_OK);
    }
    CHECK_INT(v.n, 1000);
    CHECK_INT(v.cap, 1024); /* 8, doubled seven times */
    CHECK_INT(((rec *)weft__vec_at(&v, 0))->a, 0);
    CHECK_INT(((rec *)weft__vec_at(&v, 999))->a, 999);
    CHECK(((rec *)weft__vec_at(&v, 777))->b == 388.5);
    weft__vec_fini(&v);
    CHECK(v.data == NULL);
    CHECK_INT(v.cap, 0);

    /* A failed growth leaves the array as it was. */
    long live = weft__alloc_live();
    weft__vec_init(&v, sizeof(uint64_t));
    CHECK_ERR(weft__vec_reserve(&v, 8), WEFT_OK);
    for (uint64_t i = 0; i < 8; i++)
        CHECK_ERR(weft__vec_push(&v, &i), WEFT_OK);
    weft__alloc_fail_after(0);
    uint64_t x = 42;
    CHECK_ERR(weft__vec_push(&v, &x), WEFT_ENOMEM);
    weft__alloc_fail_after(-1);
    CHECK_INT(v.n, 8);
    CHECK_INT(v.cap, 8);
    CHECK_INT(*(uint64_t *)weft__vec_at(&v, 7), 7);
    CHECK_ERR(weft__vec_push(&v, &x), WEFT_OK);
    CHECK_INT(v.cap, 16);
    CHECK_INT(*(uint64_t *)weft__vec_at(&v, 8), 42);
    weft__vec_fini(&v);
    weft__vec_fini(&v); /* twice is safe */
    CHECK_INT(weft__alloc_live(), live);
    return weft_test_done();
}
