/* Benchmark of synthesis: for each fabric, the seconds and peak memory of
 * the exact bound (allgather; allreduce too with --all), for each max-flow
 * algorithm with and without the symmetry shortcut. Each measurement runs
 * in its own child process so that its peak RSS is its own.
 *
 *   bench_synth [--all] [SPEC ...]     (default: the fabrics of the issue)
 *   bench_synth --plan [--all] [--general] [--push-relabel] [SPEC ...]
 *       the bound alone, then the optimal plan (bound + plan, as the issue
 *       counts it), for allgather (all three collectives with --all): CPU
 *       and wall seconds and peak RSS, each in its own child process,
 *       stopped after 600 s. --general forces the general tree packing
 *       (no structured construction first); maxflows 0 means the
 *       structured construction built the plan.
 *       The packing's max-flows run Dinic (the default: its runs stop
 *       at a limit) or, with --push-relabel, highest-label push-relabel.
 *
 * Prints figures and never fails on time. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "weft/synth.h"
#include "weft/topo.h"

/* Runs one measurement in this (child) process and prints its line. */
static int measure(const char *spec, weft_bound_coll coll, weft_maxflow_algo algo, bool sym)
{
    weft_diag d;
    weft_topo *t = NULL;
    double t0 = bench_now();
    weft_err e = weft_topo_preset(spec, &t, &d);
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    double t1 = bench_now();
    weft_bound_opts o;
    weft_bound_opts_init(&o);
    o.algo = algo;
    o.use_symmetry = sym;
    weft_bound b;
    e = weft_bound_compute(t, coll, &o, &b, &d);
    double t2 = bench_now();
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

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static const weft_coll plan_colls[3] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                        WEFT_COLL_ALLREDUCE};
static const weft_bound_coll bound_colls[3] = {WEFT_BOUND_ALLGATHER, WEFT_BOUND_REDUCESCATTER,
                                               WEFT_BOUND_ALLREDUCE};

/* One child: the bound alone (what = 0) or the optimal plan, bound
 * included, as the issue counts it (what = 1). Prints CPU and wall
 * seconds and this process's peak RSS (the topology is loaded before the
 * clocks start and counts in the peak). */
static int measure_plan(const char *spec, int ci, int what, bool general, bool pr)
{
    weft_diag d;
    weft_topo *t = NULL;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    double w0 = bench_now(), c0 = cpu_now();
    char x[64];
    weft_err e;
    if (what == 0) {
        weft_bound b;
        weft_bound_opts bo;
        weft_bound_opts_init(&bo);
        e = weft_bound_compute(t, bound_colls[ci], &bo, &b, &d);
        double c1 = cpu_now(), w1 = bench_now();
        if (!e) {
            weft_rat_format(b.algbw, x, sizeof x);
            printf("%-10s %-13s %6u %-5s %8.3f %8.3f %9.1f %5s %6s %9s  %s\n", spec,
                   weft_coll_name(plan_colls[ci]), b.ranks, "bound", c1 - c0, w1 - w0, peak_mib(),
                   "-", "-", "-", x);
            weft_bound_fini(&b);
        }
    } else {
        weft_plan *p = NULL;
        weft_optimal o;
        weft_optimal_opts oo;
        weft_optimal_opts_init(&oo);
        oo.use_structure = !general;
        oo.algo = pr ? WEFT_MAXFLOW_PUSH_RELABEL : WEFT_MAXFLOW_DINIC;
        e = weft_synth_optimal(t, plan_colls[ci], &oo, &p, &o, &d);
        double c1 = cpu_now(), w1 = bench_now();
        if (!e) {
            weft_rat_format(o.algbw, x, sizeof x);
            uint32_t trees = 0;
            uint64_t flows = 0;
            for (uint32_t i = 0; i < o.n_phases; i++) {
                trees += o.phase[i].n_trees;
                flows += o.phase[i].maxflows;
            }
            char k[32];
            if (o.n_phases == 2)
                snprintf(k, sizeof k, "%u+%u", o.phase[0].k, o.phase[1].k);
            else
                snprintf(k, sizeof k, "%u", o.phase[0].k);
            printf("%-10s %-13s %6u %-5s %8.3f %8.3f %9.1f %5s %6u %9llu  %s\n", spec,
                   weft_coll_name(plan_colls[ci]), o.ranks, "plan", c1 - c0, w1 - w0, peak_mib(), k,
                   trees, (unsigned long long)flows, x);
            weft_optimal_fini(&o);
            weft_plan_free(p);
        }
    }
    if (e)
        fprintf(stderr, "%s %s: %s\n", spec, weft_coll_name(plan_colls[ci]), d.msg);
    weft_topo_free(t);
    return e ? 1 : 0;
}

static int bench_plans(int n, const char **specs, bool all, bool general, bool pr)
{
    static const char *defaults[] = {"a100:1", "a100:2", "mi250:1", "a100:4", "mi250:2"};
    if (n == 0) {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            specs[n++] = defaults[i];
    }
    printf("%-10s %-13s %6s %-5s %8s %8s %9s %5s %6s %9s  %s\n", "fabric", "coll", "ranks", "what",
           "cpu_s", "wall_s", "peak_MiB", "k", "trees", "maxflows", "algbw_exact");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        for (int ci = 0; ci < (all ? 3 : 1); ci++) {
            for (int what = 0; what < 2; what++) {
                pid_t pid = fork();
                if (pid == 0) {
                    alarm(600);
                    int rc = measure_plan(specs[i], ci, what, general, pr);
                    fflush(stdout);
                    _exit(rc);
                }
                int status = 0;
                if (pid > 0)
                    waitpid(pid, &status, 0);
                if (WIFSIGNALED(status))
                    printf("%-10s %-13s stopped after 600 s\n", specs[i],
                           weft_coll_name(plan_colls[ci]));
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *defaults[] = {
        "a100:2",   "a100:4",   "mi250:2",     "h100:16",
        "h100:128", "h100:512", "torus:16x16", "clos:hosts=256,nics=2"};
    bool all = false, plans = false, general = false, pr = false;
    const char *specs[64];
    int n = 0;
    for (int i = 1; i < argc && n < 64; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--plan") == 0)
            plans = true;
        else if (strcmp(argv[i], "--general") == 0)
            general = true;
        else if (strcmp(argv[i], "--push-relabel") == 0)
            pr = true;
        else
            specs[n++] = argv[i];
    }
    if (plans)
        return bench_plans(n, specs, all, general, pr);
    if (n == 0) {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            specs[n++] = defaults[i];
    }
    printf("%-10s %-13s %-12s %-4s %6s %7s %8s %8s %5s %6s %8s %9s  %s\n", "fabric", "coll",
           "maxflow", "sym", "ranks", "nodes", "build_s", "bound_s", "iters", "orbits", "maxflows",
           "peak_MiB", "algbw_exact");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        for (int coll = 0; coll < (all ? 3 : 1); coll++) {
            if (coll == WEFT_BOUND_REDUCESCATTER)
                continue;
            for (int algo = 1; algo <= 2; algo++) {
                for (int sym = 1; sym >= 0; sym--) {
                    pid_t pid = fork();
                    if (pid == 0) {
                        int rc =
                            measure(specs[i], (weft_bound_coll)coll, (weft_maxflow_algo)algo, sym);
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
