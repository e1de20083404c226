/* Benchmark of synthesis: for each fabric, the seconds and peak memory of
 * the exact bound (allgather; allreduce too with --all), for each max-flow
 * algorithm with and without the symmetry shortcut. Each measurement runs
 * in its own child process so that its peak RSS is its own.
 *
 *   bench_synth [--all] [SPEC ...]     (default: the fabrics of the issue)
 *   bench_synth --plan [SPEC ...]      the optimal allgather plan (bound + plan),
 *                                      each child stopped after 600 s
 *
 * Prints figures and never fails on time. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/synth.h"
#include "weft/topo.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one measurement in this (child) process and prints its line. */
static int measure(const char *spec, weft_bound_coll coll, weft_maxflow_algo algo, bool sym)
{
    weft_diag d;
    weft_topo *t = NULL;
    double t0 = now();
    weft_err e = weft_topo_preset(spec, &t, &d);
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    double t1 = now();
    weft_bound_opts o;
    weft_bound_opts_init(&o);
    o.algo = algo;
    o.use_symmetry = sym;
    weft_bound b;
    e = weft_bound_compute(t, coll, &o, &b, &d);
    double t2 = now();
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        weft_topo_free(t);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char x[64];
    weft_rat_format(b.algbw, x, sizeof x);
    uint64_t flows = 0;
    uint32_t iters = 0;
    for (uint32_t i = 0; i < b.n_phases; i++) {
        flows += b.phase[i].maxflows;
        iters += b.phase[i].iterations;
    }
    printf("%-10s %-13s %-12s %-4s %6u %7u %8.3f %8.3f %5u %6u %8llu %9.1f  %s\n", spec,
           weft_bound_coll_name(coll), algo == WEFT_MAXFLOW_PUSH_RELABEL ? "push-relabel" : "dinic",
           sym ? "on" : "off", b.ranks, weft_topo_num_nodes(t), t1 - t0, t2 - t1, iters,
           b.rank_classes, (unsigned long long)flows, (double)ru.ru_maxrss / 1024.0, x);
    weft_bound_fini(&b);
    weft_topo_free(t);
    return 0;
}

/* The optimal allgather plan: seconds (bound and plan together, as the
 * issue counts them), peak memory, k, trees, max-flows and the throughput. */
static int measure_plan(const char *spec)
{
    weft_diag d;
    weft_topo *t = NULL;
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    double t0 = now();
    weft_plan *p = NULL;
    weft_optimal o;
    weft_err e = weft_synth_optimal(t, WEFT_COLL_ALLGATHER, NULL, &p, &o, &d);
    double t1 = now();
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        weft_topo_free(t);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char x[64];
    weft_rat_format(o.algbw, x, sizeof x);
    printf("%-10s %6u %8.3f %5u %6u %9llu %9.1f  %s\n", spec, o.ranks, t1 - t0, o.phase[0].k,
           o.phase[0].n_trees, (unsigned long long)o.phase[0].maxflows,
           (double)ru.ru_maxrss / 1024.0, x);
    weft_optimal_fini(&o);
    weft_plan_free(p);
    weft_topo_free(t);
    return 0;
}

static int bench_plans(int n, const char **specs)
{
    static const char *defaults[] = {"a100:1", "a100:2", "mi250:1", "a100:4", "mi250:2"};
    if (n == 0) {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            specs[n++] = defaults[i];
    }
    printf("%-10s %6s %8s %5s %6s %9s %9s  %s\n", "fabric", "ranks", "plan_s", "k", "trees",
           "maxflows", "peak_MiB", "algbw_exact");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(600);
            int rc = measure_plan(specs[i]);
            fflush(stdout);
            _exit(rc);
        }
        int status = 0;
        if (pid > 0)
            waitpid(pid, &status, 0);
        if (WIFSIGNALED(status))
            printf("%-10s stopped after 600 s\n", specs[i]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *defaults[] = {"a100:2",   "a100:4",   "mi250:2",     "h100:16",
                                     "h100:128", "h100:512", "torus:16x16", "clos:hosts=256,nics=2"};
    bool all = false, plans = false;
    const char *specs[64];
    int n = 0;
    for (int i = 1; i < argc && n < 64; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--plan") == 0)
            plans = true;
        else
            specs[n++] = argv[i];
    }
    if (plans)
        return bench_plans(n, specs);
    if (n == 0) {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            specs[n++] = defaults[i];
    }
    printf("%-10s %-13s %-12s %-4s %6s %7s %8s %8s %5s %6s %8s %9s  %s\n", "fabric", "coll",
           "maxflow", "sym", "ranks", "nodes", "build_s", "bound_s", "iters", "orbits",
           "maxflows", "peak_MiB", "algbw_exact");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        for (int coll = 0; coll < (all ? 3 : 1); coll++) {
            if (coll == WEFT_BOUND_REDUCESCATTER)
                continue;
            for (int algo = 1; algo <= 2; algo++) {
                for (int sym = 1; sym >= 0; sym--) {
                    pid_t pid = fork();
                    if (pid == 0) {
                        int rc = measure(specs[i], (weft_bound_coll)coll,
                                         (weft_maxflow_algo)algo, sym);
                        fflush(stdout);
                        _exit(rc);
                    }
                    int status = 0;
                    if (pid > 0)
                        waitpid(pid, &status, 0);
                }
            }
        }
    }
    return 0;
}
