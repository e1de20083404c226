/* Simulator scale benchmark: a 64 MiB ring allreduce on fabrics from 1,024
 * to 100,000 ranks. Each case runs in its own child process, so that its
 * peak memory (ru_maxrss) is its own; the simulator is single-threaded, so
 * the child's CPU time is one core's. Prints wall and CPU seconds for
 * building the fabric and for the simulation, events per CPU second, peak
 * memory, the simulated time and algbw, and how the ring was reduced
 * (classes, pruned links, and whether the periodic quotient approximated
 * it). Each fabric is run twice: over the ranks in rank order
 * (weft_sim_ring) and in the classic ring's order (weft_classic_ring_order:
 * hosts in order, each entered on the rail the previous one left by; what
 * `weft sim --algo ring` and `weft plan --algo ring` use). Never fails on
 * time; wall time on a shared machine can be several times the CPU time.
 * Usage: bench_sim [SPEC ...] (default: the six fabrics below). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "weft/sim.h"
#include "weft/synth.h"
#include "weft/topo.h"

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static int run_case(const char *spec, bool classic)
{
    weft_diag d;
    weft_diag_clear(&d);
    double t0 = bench_now(), c0 = cpu_now();
    weft_topo *t = NULL;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        printf("%-18s cannot build: %s\n", spec, d.msg);
        return 1;
    }
    double t1 = bench_now(), c1 = cpu_now();
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_sim_result r;
    weft_err e;
    uint32_t *order = NULL;
    if (classic) {
        order = malloc((size_t)weft_topo_num_ranks(t) * sizeof *order);
        e = order ? weft_classic_ring_order(t, order, &d) : WEFT_ENOMEM;
        if (!e)
            e = weft_sim_ring_order(t, WEFT_COLL_ALLREDUCE, order, 64u << 20, &o, &r, &d);
    } else {
        e = weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 64u << 20, &o, &r, &d);
    }
    free(order);
    double t2 = bench_now(), c2 = cpu_now();
    if (e) {
        printf("%-18s %-7s sim failed: %s\n", spec, classic ? "classic" : "rank", d.msg);
        weft_topo_free(t);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char how[64];
    if (r.period)
        snprintf(how, sizeof how, "periodic quotient p=%u, %u defects", r.period, r.defects);
    else
        snprintf(how, sizeof how, "exact");
    printf(
        "%-18s %-7s %6u ranks  build %.2f s (cpu %.2f)  sim %.2f s wall, %.2f s cpu  %llu events  "
        "%.2fM ev/cpu-s  peak %.1f MiB  time %.6g s  algbw %.3f GB/s  busbw %.3f GB/s  "
        "classes %u/%u  pruned %u  %s\n",
        spec, classic ? "classic" : "rank", r.ranks, t1 - t0, c1 - c0, t2 - t1, c2 - c1,
        (unsigned long long)r.events, r.events / (c2 - c1 > 0 ? c2 - c1 : 1e-9) / 1e6,
        ru.ru_maxrss / 1024.0, r.time_s, r.algbw_gbps, r.busbw_gbps, r.flow_classes, r.link_classes,
        r.pruned_links, how);
    fflush(stdout);
    weft_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"switch:1024", "h100:512",        "clos:hosts=512",
                              "h100:2048",   "clos:hosts=2048", "clos:hosts=12500"};
    const char **specs = argc > 1 ? (const char **)argv + 1 : defaults;
    int n = argc > 1 ? argc - 1 : (int)(sizeof defaults / sizeof defaults[0]);
    int rc = 0;
    for (int i = 0; i < 2 * n; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int code = run_case(specs[i / 2], i % 2);
            fflush(stdout);
            _exit(code);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0) {
            perror("bench_sim");
            return 1;
        }
        if (WIFSIGNALED(status)) {
            printf("%-18s killed by signal %d\n", specs[i / 2], WTERMSIG(status));
            rc = 1;
        }
    }
    return rc;
}
