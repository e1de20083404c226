/* Benchmark of the exact all-to-all bound of a skewed matrix at 128, 256
 * and 1,024 ranks (issue 29): h100:16, h100:32 and h100:128 with the MoE
 * dispatch matrix of bench_a2a_bound (zipf 1.2, top-2 of 128 experts,
 * 4,096 tokens of 8 KiB per rank, seed 1) and a denser one (2N experts,
 * every rank receives). Each case runs in its own child process and prints
 * the wall and CPU seconds, the peak memory, the program's size and the
 * exact answer: first by column generation (the default, a2a_colgen.c),
 * then by the edge program it replaced (edge_lp), where that is feasible:
 * 128 ranks, and 256 with --old (it took more than 5 minutes before).
 * The two answers must be the same rational; a difference is printed and
 * the exit status is 1. Never fails on time.
 *
 *   bench_a2a_bound_skew [--quick] [--old]   (--quick: 128 and 256 only) */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "skew_cases.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

static int measure(uint32_t boxes, uint32_t experts, bool edge, const char *answer_path)
{
    char spec[32];
    weft_topo *t = NULL;
    weft_traffic m;
    if (skew_case(boxes, experts, spec, &t, &m))
        return 1;
    uint32_t ex = experts ? experts : 2 * weft_topo_num_ranks(t);
    weft_diag d;
    weft_a2a_bound_opts o;
    weft_a2a_bound_opts_init(&o);
    o.edge_lp = edge;
    double w0 = bench_now(), c0 = bench_cpu();
    weft_a2a_bound b;
    weft_err e = weft_a2a_bound_compute(t, &m, &o, &b, &d);
    double w = bench_now() - w0, c = bench_cpu() - c0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (e) {
        printf("%-9s %4u experts  %-6s error: %s\n", spec, ex, edge ? "edge" : "colgen", d.msg);
    } else {
        printf("%-9s %4u experts  %-6s %8.2f s wall %8.2f s cpu %7.1f MiB peak  LP %u x %u  "
               "time %s s (%s)\n",
               spec, ex, edge ? "edge" : "colgen", w, c, (double)ru.ru_maxrss / 1024.0, b.lp_rows,
               b.lp_cols, b.time_exact, weft_a2a_cert_name(b.cert));
        FILE *f = fopen(answer_path, "w");
        if (f) {
            fprintf(f, "%s\n", b.time_exact);
            fclose(f);
        }
        weft_a2a_bound_fini(&b);
    }
    fflush(stdout);
    weft_traffic_free(&m);
    weft_topo_free(t);
    return e ? 1 : 0;
}

int main(int argc, char **argv)
{
    return skew_cases(argc, argv, measure, "a2a_skew", "column generation equals the edge program",
                      "column generation DIFFERS FROM the edge program");
}
