/* `weft sim --compare-fabrics` benchmark (issue 16): how long comparing
 * fat-tree (clos), MixNet-like (OCS) and torus fabrics of the same ranks
 * takes, and how long counting a large fabric's parts (weft_cost_count)
 * takes on its own.
 *
 *   bench_fabric_compare [WEFT]     (default: build/weft)
 *
 * Runs the weft binary (what a user runs) in a child per comparison: all-
 * to-all and allreduce of 64 MiB on 8 and 64 ranks, and prints each
 * command's wall seconds and the child's CPU seconds (user + system, which
 * do not depend on what else the machine runs), then its table. Then
 * counts the parts of clos:hosts=1024 and mixnet:hosts=1024 (8,192 ranks)
 * in this process and prints the time. Never fails on time; exits 1 only
 * when a command fails or a fabric cannot be counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "weft/cost.h"
#include "weft/topo.h"

static int run(const char *weft, const char *fabrics, const char *coll)
{
    double w0 = bench_now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        execl(weft, weft, "sim", "--compare-fabrics", fabrics, "--coll", coll, "--size", "64M",
              (char *)NULL);
        perror(weft);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("wait4");
        return 1;
    }
    double wall = bench_now() - w0;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    printf("^ %s on %s: %.2f s wall, %.2f s cpu\n\n", coll, fabrics, wall, cpu);
    fflush(stdout);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int count(const char *spec)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    double l0 = bench_now();
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        return 1;
    }
    double c0 = bench_now(), u0 = bench_cpu();
    weft_cost_bom b;
    weft_err e = weft_cost_count(t, &b, &d);
    double c1 = bench_now(), u1 = bench_cpu();
    if (e) {
        fprintf(stderr, "%s: %s\n", spec, d.msg);
        weft_topo_free(t);
        return 1;
    }
    uint64_t parts = 0;
    for (int p = 0; p < WEFT_COST_PARTS; p++)
        for (int r = 0; r < WEFT_COST_RATES; r++)
            parts += b.count[p][r];
    printf("count %s: %u ranks, %u nodes, %u links, %llu parts: %.4f s wall, %.4f s cpu "
           "(loading the fabric %.3f s)\n",
           spec, weft_topo_num_ranks(t), weft_topo_num_nodes(t), weft_topo_num_links(t),
           (unsigned long long)parts, c1 - c0, u1 - u0, c0 - l0);
    weft_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    const char *weft = argc > 1 ? argv[1] : "build/weft";
    static const char *const fabrics[] = {
        "clos:hosts=2,gpus=4,nics=4,leafports=2,mixnet:hosts=2,gpus=4,torus:2x4,bw=50",
        "clos:hosts=8,gpus=8,leafports=8,mixnet:hosts=8,gpus=8,torus:8x8,bw=50",
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof fabrics / sizeof *fabrics; i++) {
        rc |= run(weft, fabrics[i], "alltoall");
        rc |= run(weft, fabrics[i], "allreduce");
    }
    rc |= count("clos:hosts=1024");
    rc |= count("mixnet:hosts=1024");
    return rc;
}
