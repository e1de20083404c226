/* Verifier speed on ring allreduce plans: 2N(N-1) ops, N chunks. Prints
 * the seconds to build and to verify, for deps that follow the data only
 * (one dep per op) and with the sender's previous op too (two deps). Wall
 * and CPU seconds: on a shared machine the CPU time is the figure to read. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "weft/plan.h"

static weft_plan *ring_allreduce(uint32_t n, int seq)
{
    weft_plan_info info = {WEFT_COLL_ALLREDUCE, n, {0}, n, 0, true};
    weft_plan *p;
    if (weft_plan_new(&info, &p))
        return NULL;
    for (uint32_t step = 0; step < 2 * (n - 1); step++) {
        int copy = step >= n - 1;
        uint32_t k = copy ? step - (n - 1) : step;
        for (uint32_t r = 0; r < n; r++) {
            uint32_t chunk = copy ? (r + 1 + n - k) % n : (r + n - k) % n;
            weft_op op = {copy ? WEFT_OP_COPY : WEFT_OP_REDUCE,
                          {r},
                          {(r + 1) % n},
                          WEFT_BUF_OUT,
                          WEFT_BUF_OUT,
                          chunk,
                          chunk,
                          1,
                          0};
            uint32_t deps[2], nd = 0;
            if (step > 0)
                deps[nd++] = (step - 1) * n + (r + n - 1) % n;
            if (seq && step > 0)
                deps[nd++] = (step - 1) * n + r;
            if (weft_plan_add_op(p, &op, deps, nd, NULL)) {
                weft_plan_free(p);
                return NULL;
            }
        }
    }
    return p;
}

int main(int argc, char **argv)
{
    uint32_t sizes[] = {64, 256, 1024};
    uint32_t max = argc > 1 ? (uint32_t)atoi(argv[1]) : 1024;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i] > max)
            continue;
        for (int seq = 0; seq < 2; seq++) {
            double t0 = bench_now();
            weft_plan *p = ring_allreduce(sizes[i], seq);
            if (!p) {
                fprintf(stderr, "build failed\n");
                return 1;
            }
            double t1 = bench_now();
            clock_t c1 = clock();
            weft_diag d;
            weft_err e = weft_plan_verify(p, NULL, &d);
            clock_t c2 = clock();
            double t2 = bench_now();
            printf("ring allreduce %4u ranks, %8u ops, %d dep(s)/op: build %.3f s, verify %.3f s "
                   "wall, %.3f s cpu (%s)\n",
                   sizes[i], weft_plan_num_ops(p), seq + 1, t1 - t0, t2 - t1,
                   (double)(c2 - c1) / CLOCKS_PER_SEC, e ? d.msg : "ok");
            weft_plan_free(p);
        }
    }
    return 0;
}
