/* Forked ranks for the tests (see testing_ranks.h). */
#include "run/testing_ranks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"

double weft__test_small(weft_redop op, uint32_t r, size_t i)
{
    if (op == WEFT_PROD)
        return (r + i) % 3 == 0 ? 2 : ((r * 5 + i) % 7 == 0 ? -1 : 1);
    return (double)((r * 7 + i * 3) % 5) - 2;
}

int weft__test_with_comm(const weft_comm_config *cfg, int (*fn)(weft_comm *c, void *arg), void *arg)
{
    weft_comm *c;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_comm_init(cfg, &c, &d);
    if (e) {
        fprintf(stderr, "rank %u: weft_comm_init: %s: %s\n", cfg->rank, weft_err_name(e), d.msg);
        return 100 + (int)e;
    }
    int rc = fn(c, arg);
    weft_comm_free(c);
    return rc;
}

/* The body and argument of weft__test_comm_ranks. */
typedef struct comm_job {
    weft__comm_body body;
    void *arg;
} comm_job;

static int comm_child(const weft_comm_config *cfg, void *arg)
{
    const comm_job *j = arg;
    return weft__test_with_comm(cfg, j->body, j->arg);
}

int weft__test_comm_ranks(uint32_t n, const weft_comm_config *tmpl, weft__comm_body body, void *arg,
                          int limit_ms, int *codes, long *ms)
{
    comm_job j = {body, arg};
    return weft__test_ranks(n, tmpl, comm_child, NULL, &j, limit_ms, codes, ms);
}

void weft__test_comm_ranks_ok(uint32_t n, const weft_comm_config *tmpl, weft__comm_body body,
                              void *arg, int limit_ms, const char *what)
{
    comm_job j = {body, arg};
    weft__test_ranks_ok(n, tmpl, comm_child, &j, limit_ms, what);
}

void weft__test_ranks_ok(uint32_t n, const weft_comm_config *tmpl, weft__rank_main child, void *arg,
                         int limit_ms, const char *what)
{
    int codes[64];
    memset(codes, -1, sizeof codes);
    CHECK(n <= 64);
    if (n > 64)
        return;
    CHECK_INT(weft__test_ranks(n, tmpl, child, NULL, arg, limit_ms, codes, NULL), 0);
    for (uint32_t r = 0; r < n; r++) {
        if (codes[r] != 0)
            fprintf(stderr, "%s, %u ranks: rank %u exited with %d\n", what, n, r, codes[r]);
        CHECK_INT(codes[r], 0);
    }
}

int weft__test_ranks(uint32_t n, const weft_comm_config *tmpl, weft__rank_main child,
                     weft__rank_parent parent, void *arg, int limit_ms, int *codes, long *ms)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 128) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
        perror("test ranks: listen");
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
    pid_t *pids = calloc(n, sizeof *pids);
    int64_t start = weft__now_ns();
    fflush(stdout);
    fflush(stderr);
    for (uint32_t r = 0; r < n; r++) {
        pid_t p = fork();
        if (p < 0) {
            perror("test ranks: fork");
            for (uint32_t k = 0; k < r; k++)
                kill(pids[k], SIGKILL);
            for (uint32_t k = 0; k < r; k++)
                waitpid(pids[k], NULL, 0);
            free(pids);
            close(lfd);
            return -1;
        }
        if (p == 0) {
            weft_test_child_start();
            weft_comm_config cfg = *tmpl;
            cfg.rank = r;
            cfg.size = n;
            cfg.addr = addr;
            cfg.listen_fd = r == 0 ? lfd : -1;
            /* WEFT_CPUS runs a test as on a host with that many CPUs
             * (CMakeLists.txt runs the runtime tests so as well). */
            const char *cpus = getenv("WEFT_CPUS");
            if (!cfg.cpus && cpus)
                cfg.cpus = (uint32_t)strtoul(cpus, NULL, 10);
            if (r != 0)
                close(lfd);
            int rc = weft_test_child_status(child(&cfg, arg));
            fflush(stdout);
            fflush(stderr);
            _exit(rc);
        }
        pids[r] = p;
    }
    close(lfd);
    if (parent)
        parent(pids, n, ntohs(a.sin_port), arg);
    uint32_t left = n;
    bool killed = false;
    if (limit_ms < WEFT__TEST_HANG_MS)
        limit_ms = WEFT__TEST_HANG_MS;
    while (left) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p == 0) {
            if (!killed && weft__now_ns() - start > (int64_t)limit_ms * 1000000) {
                fprintf(stderr, "test ranks: still running after %d ms, killing\n", limit_ms);
                for (uint32_t r = 0; r < n; r++)
                    if (pids[r])
                        kill(pids[r], SIGKILL);
                killed = true;
            }
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (uint32_t r = 0; r < n; r++) {
            if (pids[r] == p) {
                codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                if (ms)
                    ms[r] = (long)(weft__now_ns() / 1000000);
                pids[r] = 0;
                left--;
            }
        }
    }
    free(pids);
    return 0;
}

void weft__test_fill(weft__test_value value, weft_dtype t, weft_redop op, void *buf, uint32_t r,
                     size_t count)
{
    for (size_t i = 0; i < count; i++)
        weft_dtype_store(t, buf, i, value(op, r, i));
}

size_t weft__test_reduce_wrong(weft__test_value value, weft_dtype t, weft_redop op,
                               const unsigned char *got, uint32_t n, size_t count)
{
    size_t es = weft_dtype_size(t);
    unsigned char *want = malloc(count * es + 1), *tmp = malloc(count * es + 1);
    if (!want || !tmp) {
        free(want);
        free(tmp);
        return count + 1; /* cannot check: never passes */
    }
    weft__test_fill(value, t, op, want, 0, count);
    for (uint32_t r = 1; r < n; r++) {
        weft__test_fill(value, t, op, tmp, r, count);
        weft_reduce_local(want, tmp, count, t, op);
    }
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += memcmp(got + i * es, want + i * es, es) != 0;
    free(want);
    free(tmp);
    return bad;
}

int weft__test_dial_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}
