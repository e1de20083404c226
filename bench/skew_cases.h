/* The driver the skewed all-to-all benchmarks share (bench_a2a_bound_skew,
 * bench_a2a_optimal_skew): h100:16, h100:32 and h100:128 (128, 256 and
 * 1,024 ranks), each with 128 experts and with 2N, every case measured in
 * a child process of its own (its peak memory is its own), by the new
 * method and, at 128 ranks (and 256 with --old), by the edge program too;
 * the two answers, the first line each child writes to its answer file,
 * must be the same: `agree` or `differ` is printed after the case, and a
 * difference makes the exit status 1. */
#ifndef WEFT_BENCH_SKEW_CASES_H
#define WEFT_BENCH_SKEW_CASES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft/topo.h"
#include "weft/traffic.h"

/* The fabric and the matrix of one case: h100:BOXES (spec gets its name)
 * and the MoE dispatch of zipf 1.2, top-2 of `experts` experts (0: 2N),
 * 4,096 tokens of 8 KiB per rank, seed 1. 0, or 1 with the error on
 * stderr. */
static inline int skew_case(uint32_t boxes, uint32_t experts, char spec[32], weft_topo **t,
                            weft_traffic *m)
{
    snprintf(spec, 32, "h100:%u", boxes);
    weft_diag d;
    *t = NULL;
    if (weft_topo_preset(spec, t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    uint32_t n = weft_topo_num_ranks(*t);
    weft_traffic_moe_params p = {.ranks = n,
                                 .experts = experts ? experts : 2 * n,
                                 .topk = 2,
                                 .tokens = 4096,
                                 .hidden_bytes = 8192,
                                 .skew = WEFT_TRAFFIC_SKEW_ZIPF,
                                 .zipf_milli = 1200,
                                 .seed = 1};
    *m = (weft_traffic){0, NULL};
    if (weft_traffic_moe(&p, m, &d)) {
        fprintf(stderr, "moe: %s\n", d.msg);
        weft_topo_free(*t);
        *t = NULL;
        return 1;
    }
    return 0;
}

/* One case: 0 when it ran, its answer (one line) in answer_path. */
typedef int (*skew_measure_fn)(uint32_t boxes, uint32_t experts, bool edge,
                               const char *answer_path);

static inline int skew_run(skew_measure_fn measure, uint32_t boxes, uint32_t experts, bool edge,
                           const char *path)
{
    fflush(stdout); /* the child must not print the parent's buffer again */
    pid_t pid = fork();
    if (pid == 0)
        _exit(measure(boxes, experts, edge, path));
    int st = 0;
    return pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st);
}

static inline bool skew_same(const char *a, const char *b)
{
    char x[256] = "", y[256] = "";
    FILE *f = fopen(a, "r"), *g = fopen(b, "r");
    bool ok = f && g && fgets(x, sizeof x, f) && fgets(y, sizeof y, g) && strcmp(x, y) == 0;
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    return ok;
}

/* Runs every case (--quick: 128 and 256 ranks only; --old: the edge
 * program at 256 ranks too); tag names the answer files in /tmp. */
static inline int skew_cases(int argc, char **argv, skew_measure_fn measure, const char *tag,
                             const char *agree, const char *differ)
{
    bool quick = false, old = false;
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        old |= strcmp(argv[i], "--old") == 0;
    }
    char pa[64], pb[64];
    snprintf(pa, sizeof pa, "/tmp/bench_%s_%d_a", tag, (int)getpid());
    snprintf(pb, sizeof pb, "/tmp/bench_%s_%d_b", tag, (int)getpid());
    static const uint32_t boxes[] = {16, 32, 128};
    int rc = 0;
    for (size_t i = 0; i < 3; i++) {
        if (quick && boxes[i] > 32)
            continue;
        for (int dense = 0; dense < 2; dense++) {
            uint32_t experts = dense ? 0 : 128;
            rc |= skew_run(measure, boxes[i], experts, false, pa);
            if (boxes[i] == 16 || (old && boxes[i] == 32)) {
                rc |= skew_run(measure, boxes[i], experts, true, pb);
                bool eq = skew_same(pa, pb);
                printf("  %s\n", eq ? agree : differ);
                rc |= !eq;
            }
        }
    }
    remove(pa);
    remove(pb);
    return rc;
}

#endif
