/* Simulator scale benchmark: a 64 MiB ring allreduce on fabrics from 1,024
 * to 100,000 ranks. Each case runs in a child process so that its peak
 * memory (ru_maxrss) is its own. Prints wall seconds for topology build and
 * simulation, events per second and peak memory; never fails on time.
 * Usage: bench_sim [SPEC ...] (default: the four fabrics below). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/sim.h"
#include "weft/topo.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run_case(const char *spec)
{
    weft_diag d;
    weft_diag_clear(&d);
    double t0 = now();
    weft_topo *t = NULL;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        printf("%-22s  cannot build: %s\n", spec, d.msg);
        return 1;
    }
    double t1 = now();
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_sim_result r;
    weft_err e = weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 64u << 20, &o, &r, &d);
    double t2 = now();
    if (e) {
        printf("%-22s  sim failed: %s\n", spec, d.msg);
        weft_topo_free(t);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec * 1e-6;
    printf("%-18s %6u ranks  build %.3f s  sim %.3f s wall  (cpu total %.3f s)  %llu events  "
           "%.0f ev/s  classes %u/%u  steps %llu%s  peak %.1f MiB  time %.6g s  busbw %.3f "
           "GB/s\n",
           spec, r.ranks, t1 - t0, t2 - t1, cpu, (unsigned long long)r.events,
           r.events / (t2 - t1 > 0 ? t2 - t1 : 1e-9), r.flow_classes, r.link_classes,
           (unsigned long long)r.simulated_steps, r.extrapolated ? " (extrapolated)" : "",
           ru.ru_maxrss / 1024.0, r.time_s, r.busbw_gbps);
    fflush(stdout);
    weft_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *defaults[] = {"switch:1024", "h100:512", "clos:hosts=2048", "clos:hosts=12500"};
    const char **specs = argc > 1 ? (const char **)argv + 1 : defaults;
    int n = argc > 1 ? argc - 1 : 4;
    for (int i = 0; i < n; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int rc = run_case(specs[i]);
            fflush(stdout);
            _exit(rc);
        }
        int status;
        if (pid > 0)
            waitpid(pid, &status, 0);
    }
    return 0;
}
