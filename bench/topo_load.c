/* Loading a 100,000-rank fabric from a .topo file.
 *
 *   bench_topo_load [HOSTS] [FILE]
 *
 * Generates the text of a fabric of HOSTS hosts (default 12,500) of 8 ranks
 * each: per host an NVSwitch joined to every rank, direct NVLink-like links
 * between every pair of ranks, and one NIC per rank; the NICs form a
 * rail-optimised leaf/spine network (rail r = NIC r of every host; 32 hosts
 * per leaf, 16 spines per rail, every leaf joined to every spine of its
 * rail). With the default size that is 215,756 nodes and 1,400,096 directed
 * links in a 49.5 MB file. The text goes to FILE (default: a temporary file, removed at the
 * end); a forked child then loads it with weft_topo_load_file and writes it
 * back with weft_topo_write to /dev/null, and the figures are printed: nodes,
 * links, file size, load seconds (wall clock, and CPU time, which does not
 * depend on what else the machine runs), write seconds and the child's peak RSS
 * (getrusage RUSAGE_CHILDREN ru_maxrss, and VmHWM seen by the child).
 *
 * Never fails on time; exits 1 only if the file cannot be made or loaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "weft/topo.h"

#define RANKS_PER_HOST 8
#define HOSTS_PER_LEAF 32
#define SPINES_PER_RAIL 16

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Writes the fabric; returns 0 or -1 on a write error. */
static int generate(FILE *f, long hosts)
{
    long leaves = (hosts + HOSTS_PER_LEAF - 1) / HOSTS_PER_LEAF;
    fprintf(f, "# bench_topo_load: %ld hosts x %d ranks, rail-optimised leaf/spine\n", hosts,
            RANKS_PER_HOST);
    for (long h = 0; h < hosts; h++) {
        for (int g = 0; g < RANKS_PER_HOST; g++)
            fprintf(f, "node h%ld.g%d compute host=h%ld\n", h, g, h);
        fprintf(f, "node h%ld.nvsw switch host=h%ld\n", h, h);
        for (int g = 0; g < RANKS_PER_HOST; g++)
            fprintf(f, "node h%ld.nic%d nic host=h%ld\n", h, g, h);
    }
    for (int r = 0; r < RANKS_PER_HOST; r++) {
        for (long l = 0; l < leaves; l++)
            fprintf(f, "node r%d.leaf%ld switch rail=%d tier=leaf\n", r, l, r);
        for (int s = 0; s < SPINES_PER_RAIL; s++)
            fprintf(f, "node r%d.spine%d switch rail=%d tier=spine\n", r, s, r);
    }
    for (long h = 0; h < hosts; h++) {
        for (int g = 0; g < RANKS_PER_HOST; g++) {
            fprintf(f, "duplex h%ld.g%d h%ld.nvsw 450GB/s 0.5us\n", h, g, h);
            for (int o = 0; o < RANKS_PER_HOST; o++) {
                if (o != g)
                    fprintf(f, "link h%ld.g%d h%ld.g%d 2400/7GB/s 0.25us\n", h, g, h, o);
            }
            fprintf(f, "duplex h%ld.g%d h%ld.nic%d 64GB/s\n", h, g, h, g);
            fprintf(f, "duplex h%ld.nic%d r%d.leaf%ld 400Gbps 1us\n", h, g, g, h / HOSTS_PER_LEAF);
        }
    }
    for (int r = 0; r < RANKS_PER_HOST; r++) {
        for (long l = 0; l < leaves; l++) {
            for (int s = 0; s < SPINES_PER_RAIL; s++)
                fprintf(f, "duplex r%d.leaf%ld r%d.spine%d 800Gbps 1us\n", r, l, r, s);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* The child's peak resident set in KiB from /proc/self/status, or -1. */
static long vm_hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    }
    fclose(f);
    return kib;
}

static int load(const char *path)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now();
    weft_err e = weft_topo_load_file(path, &t, &d);
    double t1 = now(), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (e) {
        fprintf(stderr, "bench_topo_load: %s\n", d.msg);
        return 1;
    }
    FILE *null = fopen("/dev/null", "w");
    double t2 = now();
    weft_err we = null ? weft_topo_write(t, null) : WEFT_EIO;
    double t3 = now();
    if (null)
        fclose(null);
    printf("nodes          %u\n", weft_topo_num_nodes(t));
    printf("ranks          %u\n", weft_topo_num_ranks(t));
    printf("links          %u\n", weft_topo_num_links(t));
    printf("load_seconds   %.3f\n", t1 - t0);
    printf("load_cpu_s     %.3f\n", c1 - c0);
    printf("write_seconds  %.3f%s\n", t3 - t2, we ? " (write failed)" : "");
    printf("child_vmhwm_mb %.1f\n", (double)vm_hwm_kib() / 1024.0);
    fflush(stdout);
    weft_topo_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    long hosts = argc > 1 ? strtol(argv[1], NULL, 10) : 12500;
    if (hosts < 1 || hosts > 1000000) {
        fprintf(stderr, "usage: bench_topo_load [HOSTS (1..1000000)] [FILE]\n");
        return 2;
    }
    char tmp[] = "/tmp/weft-topo-load-XXXXXX";
    const char *path = argc > 2 ? argv[2] : tmp;
    FILE *f;
    if (argc > 2) {
        f = fopen(path, "w");
    } else {
        int fd = mkstemp(tmp);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
    }
    if (!f) {
        perror("bench_topo_load: cannot create the file");
        return 1;
    }
    double g0 = now();
    int gen = generate(f, hosts);
    if (fclose(f) != 0 || gen) {
        fprintf(stderr, "bench_topo_load: cannot write %s\n", path);
        if (argc <= 2)
            unlink(path);
        return 1;
    }
    struct stat st;
    stat(path, &st);
    printf("hosts          %ld\n", hosts);
    printf("file_mb        %.1f\n", (double)st.st_size / 1e6);
    printf("generate_s     %.3f\n", now() - g0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(load(path));
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        perror("bench_topo_load: fork");
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    printf("child_maxrss_mb %.1f\n", (double)ru.ru_maxrss / 1024.0);
    if (argc <= 2)
        unlink(path);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
