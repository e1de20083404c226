/* `weft sim --compare` benchmark: how long the table of issue 13 takes.
 * Runs the weft binary itself (what a user runs), each command in its own
 * child process under a wall-clock limit: first every algorithm of the
 * allreduce --compare alone (`weft sim SPEC --algo A --coll allreduce
 * --size S`, default model), then the whole `--compare`. Prints per
 * command the wall seconds, the child's CPU seconds and its peak memory,
 * or "stopped" when it ran past the limit (the child is killed; its time
 * is then at least the limit). Never fails on time: exits 1 only when a
 * command fails or cannot be started.
 * Usage: bench_sim_compare [WEFT [SPEC [SIZE [LIMIT_S [ALGO ...]]]]]
 * (default: build/weft h100:16 1G 600, and the eleven algorithms that
 * --compare simulates for allreduce on a GPU fabric). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs argv with stdout to /dev/null, killed after limit_s seconds of wall
 * time. Prints one row; returns 0 when it exited 0 or was stopped. */
static int run(const char *label, char *const argv[], double limit_s)
{
    fflush(stdout); /* the child must not write the parent's buffer again */
    double t0 = now();
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
    bool stopped = false;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid)
            break;
        if (w < 0) {
            perror("bench_sim_compare: wait4");
            return 1;
        }
        if (!stopped && now() - t0 > limit_s) {
            kill(pid, SIGKILL); /* the child is ours: stop it at the limit */
            stopped = true;
        }
        struct timespec nap = {0, 5 * 1000 * 1000}; /* times are good to 5 ms */
        nanosleep(&nap, NULL);
    }
    double wall = now() - t0;
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec * 1e-6;
    if (stopped) {
        printf("%-14s stopped after %9.2f s wall (limit %.0f s), %9.2f s cpu\n", label, wall,
               limit_s, cpu);
        fflush(stdout);
        return 0;
    }
    printf("%-14s %9.2f s wall %9.2f s cpu %8ld KiB peak", label, wall, cpu, ru.ru_maxrss);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("  FAILED (status %d)\n", status);
        return 1;
    }
    printf("\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const algos[] = {"hier",         "nccl",       "optimal", "dbtree",
                                        "rd",           "hd",         "rabenseifner",
                                        "rings:auto",   "biring",     "rings:4", "ring"};
    char *weft = argc > 1 ? argv[1] : "build/weft";
    char *spec = argc > 2 ? argv[2] : "h100:16";
    char *size = argc > 3 ? argv[3] : "1G";
    double limit = argc > 4 ? atof(argv[4]) : 600;
    if (!(limit > 0)) {
        fprintf(stderr, "bench_sim_compare: LIMIT_S must be a positive number of seconds\n");
        return 2;
    }
    size_t na = argc > 5 ? (size_t)(argc - 5) : sizeof algos / sizeof *algos;
    printf("weft sim %s --coll allreduce --size %s (default model), limit %.0f s a command\n",
           spec, size, limit);
    int rc = 0;
    for (size_t i = 0; i < na; i++) {
        char *a = argc > 5 ? argv[5 + i] : (char *)algos[i];
        char *cmd[] = {weft, "sim", spec, "--algo", a, "--coll", "allreduce", "--size", size,
                       NULL};
        rc |= run(a, cmd, limit);
    }
    char *cmd[] = {weft, "sim", spec, "--coll", "allreduce", "--compare", "--size", size, NULL};
    rc |= run("--compare", cmd, limit);
    return rc;
}
