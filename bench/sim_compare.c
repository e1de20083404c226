/* `weft sim --compare` benchmark: how long the tables of issue 13 take,
 * after and before the engine's symmetry reduction (src/sim/engine_symm.c).
 * Runs the weft binary itself (what a user runs), each command in its own
 * child process under a wall-clock limit: first every algorithm of the
 * allreduce --compare alone (`weft sim SPEC --algo A --coll allreduce
 * --size S`, default model), then the whole `--compare`. Each command runs
 * twice: as is ("after"), and "before": the same command on the binary
 * given with --before (a build of the engine before the reduction, e.g.
 * main's), or without it on the same binary with --no-symmetry (every
 * flow simulated on its own; the ring without a plan then also loses its
 * classes). Prints per command the wall seconds, the child's CPU seconds
 * and its peak memory, the before run's wall seconds or "stopped" when it
 * ran past the limit (the child is killed; its time is then at least the
 * limit, and the ratio a lower bound, ">="), and before / after. Never
 * fails on time: exits 1 only when a command fails or cannot be started.
 * Usage: bench_sim_compare [--before OLD_WEFT] [WEFT [SPEC [SIZE [LIMIT_S
 * [ALGO ...]]]]] (default: build/weft, both h100:16 and the 256-GPU rail
 * clos clos:hosts=32, 1G, 60 s, and the eleven algorithms that --compare
 * simulates for allreduce on a GPU fabric). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

/* One child run: wall and CPU seconds, peak KiB; stopped when it ran past
 * the limit and was killed. */
typedef struct outcome {
    double wall, cpu;
    long kib;
    bool stopped, failed;
} outcome;

/* Runs argv with stdout to /dev/null, killed after limit_s seconds of wall
 * time. Returns 0 when it could be run (it may still have failed). */
static int run(char *const argv[], double limit_s, outcome *o)
{
    fflush(stdout); /* the child must not write the parent's buffer again */
    memset(o, 0, sizeof *o);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_sim_compare: fork");
        return 1;
    }
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execv(argv[0], argv);
        fprintf(stderr, "bench_sim_compare: cannot run %s\n", argv[0]);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid)
            break;
        if (w < 0) {
            perror("bench_sim_compare: wait4");
            return 1;
        }
        if (!o->stopped && bench_now() - t0 > limit_s) {
            kill(pid, SIGKILL); /* the child is ours: stop it at the limit */
            o->stopped = true;
        }
        struct timespec nap = {0, 5 * 1000 * 1000}; /* times are good to 5 ms */
        nanosleep(&nap, NULL);
    }
    o->wall = bench_now() - t0;
    o->cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
             ru.ru_stime.tv_usec * 1e-6;
    o->kib = ru.ru_maxrss;
    o->failed = !o->stopped && (!WIFEXITED(status) || WEXITSTATUS(status) != 0);
    return 0;
}

/* argv of one command: weft sim SPEC [--algo A --coll allreduce | --coll
 * allreduce --compare] --size S [--no-symmetry]. */
static void command(char **cmd, char *weft, char *spec, char *algo, char *size, bool nosym)
{
    size_t n = 0;
    cmd[n++] = weft;
    cmd[n++] = "sim";
    cmd[n++] = spec;
    if (algo) {
        cmd[n++] = "--algo";
        cmd[n++] = algo;
    }
    cmd[n++] = "--coll";
    cmd[n++] = "allreduce";
    if (!algo)
        cmd[n++] = "--compare";
    cmd[n++] = "--size";
    cmd[n++] = size;
    if (nosym)
        cmd[n++] = "--no-symmetry";
    cmd[n] = NULL;
}

/* Runs one command after and before; prints its row. */
static int row(const char *label, char *weft, char *before, char *spec, char *algo, char *size,
               double limit)
{
    char *cmd[16];
    outcome a, b;
    command(cmd, weft, spec, algo, size, false);
    if (run(cmd, limit, &a))
        return 1;
    command(cmd, before ? before : weft, spec, algo, size, !before);
    if (run(cmd, limit, &b))
        return 1;
    printf("%-14s", label);
    if (a.stopped)
        printf(" stopped >%7.0f s", limit);
    else
        printf(" %9.2f s wall %8.2f s cpu %8ld KiB", a.wall, a.cpu, a.kib);
    if (b.stopped)
        printf(" | before stopped >%5.0f s", limit);
    else
        printf(" | before %8.2f s wall", b.wall);
    if (!a.stopped && a.wall > 0)
        printf("  ratio %s%.1fx", b.stopped ? ">=" : "", b.wall / a.wall);
    if (a.failed || b.failed)
        printf("  FAILED (%s)", a.failed ? "after" : "before");
    printf("\n");
    fflush(stdout);
    return a.failed || b.failed;
}

int main(int argc, char **argv)
{
    static const char *const algos[] = {"hier",   "nccl",    "optimal",      "dbtree",
                                        "rd",     "hd",      "rabenseifner", "rings:auto",
                                        "biring", "rings:4", "ring"};
    char *before = NULL;
    if (argc > 2 && strcmp(argv[1], "--before") == 0) {
        before = argv[2];
        argv += 2;
        argc -= 2;
    }
    char *weft = argc > 1 ? argv[1] : "build/weft";
    char *specs[] = {argc > 2 ? argv[2] : "h100:16", "clos:hosts=32"};
    size_t nspecs = argc > 2 ? 1 : 2;
    char *size = argc > 3 ? argv[3] : "1G";
    double limit = argc > 4 ? atof(argv[4]) : 60;
    if (!(limit > 0)) {
        fprintf(stderr, "bench_sim_compare: LIMIT_S must be a positive number of seconds\n");
        return 2;
    }
    size_t na = argc > 5 ? (size_t)(argc - 5) : sizeof algos / sizeof *algos;
    int rc = 0;
    for (size_t k = 0; k < nspecs; k++) {
        printf("%sweft sim %s --coll allreduce --size %s (default model), limit %.0f s a "
               "command; before: %s\n",
               k ? "\n" : "", specs[k], size, limit,
               before ? before : "the same binary with --no-symmetry");
        for (size_t i = 0; i < na; i++) {
            char *a = argc > 5 ? argv[5 + i] : (char *)algos[i];
            rc |= row(a, weft, before, specs[k], a, size, limit);
        }
        rc |= row("--compare", weft, before, specs[k], NULL, size, limit);
    }
    return rc;
}
