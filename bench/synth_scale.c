/* Benchmark of optimal schedules at scale (docs/optimal-scale.md): for each
 * fabric and collective, in its own child process (so that the peak RSS is
 * its own), the seconds of the exact bound alone, then of the full optimal
 * plan (weft_synth_optimal: bound, structured construction or packing, and
 * the cost-model check), wall and CPU, the peak memory, the plan's size and
 * the path that built it.
 *
 *   bench_synth_scale [--all | --coll C] [--verify] [--packing] [SPEC ...]
 *
 * Default fabrics: h100:16, h100:128, h100:512 (128, 1,024, 4,096 GPUs);
 * allgather only unless --all (reducescatter and allreduce too) or --coll C
 * (that one only). --verify also runs the verifier on the plan (with the
 * fabric, routes checked) and prints its seconds; --packing forces the
 * general path (use_structure off). Each child is stopped after 900 s of
 * CPU. Prints figures, never fails on time. */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "weft/synth.h"
#include "weft/topo.h"

static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int measure(const char *spec, weft_coll coll, bool verify, bool packing)
{
    weft_diag d;
    weft_topo *t = NULL;
    if (weft_topo_preset(spec, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    weft_bound_coll bc = coll == WEFT_COLL_ALLGATHER       ? WEFT_BOUND_ALLGATHER
                         : coll == WEFT_COLL_REDUCESCATTER ? WEFT_BOUND_REDUCESCATTER
                                                           : WEFT_BOUND_ALLREDUCE;
    double w0 = bench_now(), c0 = bench_cpu();
    weft_bound b;
    weft_err e = weft_bound_compute(t, bc, NULL, &b, &d);
    double w1 = bench_now(), c1 = bench_cpu();
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        weft_topo_free(t);
        return 1;
    }
    weft_bound_fini(&b);
    double bound_mib = peak_mib();
    weft_optimal_opts o;
    weft_optimal_opts_init(&o);
    o.use_structure = !packing;
    weft_plan *p = NULL;
    weft_optimal info;
    e = weft_synth_optimal(t, coll, &o, &p, &info, &d);
    double w2 = bench_now(), c2 = bench_cpu();
    if (e) {
        fprintf(stderr, "%s %s: %s\n", spec, weft_coll_name(coll), d.msg);
        weft_topo_free(t);
        return 1;
    }
    double plan_mib = peak_mib();
    double verify_s = -1;
    if (verify) {
        double v0 = bench_now();
        e = weft_plan_verify(p, t, &d);
        verify_s = bench_now() - v0;
        if (e)
            fprintf(stderr, "%s %s: verify: %s\n", spec, weft_coll_name(coll), d.msg);
    }
    char x[64];
    weft_rat_format(info.algbw, x, sizeof x);
    printf("%-10s %-13s %6u %8.3f %8.3f %8.1f %8.3f %8.3f %9.1f %10u %-8s", spec,
           weft_coll_name(coll), info.ranks, w1 - w0, c1 - c0, bound_mib, w2 - w1, c2 - c1,
           plan_mib, weft_plan_num_ops(p), weft_optimal_method_name(info.method));
    if (verify)
        printf(" %8.3f%s", verify_s, e ? " FAILED" : "");
    printf("  %s%s\n", x, weft_rat_eq(info.algbw, info.bound) ? " (= bound)" : " (BELOW BOUND)");
    weft_optimal_fini(&info);
    weft_plan_free(p);
    weft_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *defaults[] = {"h100:16", "h100:128", "h100:512"};
    bool all = false, verify = false, packing = false;
    int only = -1;
    const char *specs[64];
    int n = 0;
    for (int i = 1; i < argc && n < 64; i++) {
        if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--verify") == 0)
            verify = true;
        else if (strcmp(argv[i], "--packing") == 0)
            packing = true;
        else if (strcmp(argv[i], "--coll") == 0 && i + 1 < argc) {
            weft_coll c;
            i++;
            if (!weft_coll_parse(argv[i], strlen(argv[i]), &c) || c > WEFT_COLL_ALLREDUCE) {
                fprintf(stderr, "--coll: allgather, reducescatter or allreduce\n");
                return 2;
            }
            only = (int)c;
        } else
            specs[n++] = argv[i];
    }
    if (n == 0) {
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
            specs[n++] = defaults[i];
    }
    printf("%-10s %-13s %6s %8s %8s %8s %8s %8s %9s %10s %-8s%s  %s\n", "fabric", "coll", "ranks",
           "bound_s", "bound_cpu", "bnd_MiB", "plan_s", "plan_cpu", "peak_MiB", "ops", "method",
           verify ? " verify_s" : "", "algbw_exact");
    fflush(stdout);
    static const weft_coll colls[] = {WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER,
                                      WEFT_COLL_ALLREDUCE};
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            if (only >= 0 ? c != only : (!all && c > 0))
                continue;
            pid_t pid = fork();
            if (pid == 0) {
                /* 900 s of CPU, not wall time: the machine may be shared. */
                struct rlimit cpu_limit = {900, 900};
                setrlimit(RLIMIT_CPU, &cpu_limit);
                int rc = measure(specs[i], colls[c], verify, packing);
                fflush(stdout);
                _exit(rc);
            }
            int status = 0;
            if (pid > 0)
                waitpid(pid, &status, 0);
            if (WIFSIGNALED(status))
                printf("%-10s %-13s stopped (signal %d)\n", specs[i], weft_coll_name(colls[c]),
                       WTERMSIG(status));
            fflush(stdout);
        }
    }
    return 0;
}
