/* Authentication: connections that do not present the job secret (a wrong
 * secret, bytes that are not a hello, a hello cut short, a hello naming a
 * rank that does not exist) are refused and logged, both at the bootstrap
 * rendezvous and at a TCP transport listener, and the real job still forms
 * and works, also with 40 silent connections made before the real ranks';
 * a job that cannot form names the connections without a hello.
 *
 * Ordered by events, not by time: the ranks that join rank 0 wait until
 * every stranger has been turned away (they slept 300 ms, and under load
 * the job could form first and close the listener on the strangers), and
 * no wait has a limit a busy machine can reach (CTest's timeout ends a
 * hang), except the silent-strangers check's generous bound on how long
 * the job takes to form, which is what that test is about. */
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/hello.h"
#include "run/testing_ranks.h"
#include "run/transport/xport.h"
#include "weft/comm.h"
#include "weft/log.h"

static char logbuf[8192];

static void capture(weft_log_level level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    size_t have = strlen(logbuf);
    snprintf(logbuf + have, sizeof logbuf - have, "%s\n", line);
}

/* The refused stranger sees its connection closed (EOF or reset). */
static void check_closed(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;
    CHECK(poll(&p, 1, -1) == 1 && read(fd, &b, 1) <= 0);
    close(fd);
}

static void send_hello(int fd, uint32_t kind, uint32_t rank, uint32_t size, uint32_t index,
                       unsigned char fill)
{
    weft__hello h = {.kind = kind, .rank = rank, .size = size, .index = index};
    memset(h.secret, fill, sizeof h.secret);
    unsigned char buf[WEFT__HELLO_BYTES];
    weft__hello_encode(&h, buf);
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
}

/* ---- At the rendezvous ---------------------------------------------------- */

static int boot_body(weft_comm *c, void *arg)
{
    (void)arg;
    int32_t v = (int32_t)weft_comm_rank(c) + 1, sum = 0;
    CHECK_ERR(weft_allreduce(c, &v, &sum, 1, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    CHECK_INT(sum, 6);
    if (weft_comm_rank(c) == 0) {
        CHECK_CONTAINS(logbuf, "weft WARN run: bootstrap: refused connection from 127.0.0.1:");
        CHECK_CONTAINS(logbuf, ": wrong job secret\n");
        CHECK_CONTAINS(logbuf, ": not a weft hello (bad magic)\n");
        CHECK_CONTAINS(logbuf, ": no complete hello\n");
        CHECK_CONTAINS(logbuf, ": rank out of range\n");
    }
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}

/* The job works: an allreduce of rank + 1. */
static int boot_body_plain(weft_comm *c, void *arg)
{
    (void)arg;
    int32_t v = (int32_t)weft_comm_rank(c) + 1, sum = 0;
    CHECK_ERR(weft_allreduce(c, &v, &sum, 1, WEFT_INT32, WEFT_SUM, NULL), WEFT_OK);
    CHECK_INT(sum, 6);
    return weft__test_failed > 99 ? 99 : weft__test_failed;
}
/* Closed by the parent once rank 0 has turned every stranger away; the
 * other ranks join only then (EOF on the read end). */
static int strangers_done[2];

static int boot_child(const weft_comm_config *cfg, void *arg)
{
    weft_log_set_sink(capture, NULL);
    close(strangers_done[1]);
    char b;
    if (cfg->rank != 0 && read(strangers_done[0], &b, 1) != 0)
        return 96;
    close(strangers_done[0]);
    return weft__test_with_comm(cfg, boot_body, arg);
}

static void boot_strangers(const pid_t *pids, uint32_t n, int port, void *arg)
{
    (void)pids;
    (void)arg;
    int wrong = weft__test_dial_loopback(port), garbage = weft__test_dial_loopback(port);
    int cut = weft__test_dial_loopback(port), range = weft__test_dial_loopback(port);
    CHECK(wrong >= 0 && garbage >= 0 && cut >= 0 && range >= 0);
    send_hello(wrong, WEFT__HELLO_BOOT, 1, n, 0, 0x55);
    char junk[WEFT__HELLO_BYTES];
    memset(junk, 'G', sizeof junk);
    CHECK(write(garbage, junk, sizeof junk) == (ssize_t)sizeof junk);
    CHECK(write(cut, "WEFTHI01", 8) == 8);
    shutdown(cut, SHUT_WR);
    send_hello(range, WEFT__HELLO_BOOT, 7, n, 0, 0xab); /* right secret, no such rank */
    check_closed(wrong);
    check_closed(garbage);
    check_closed(cut);
    check_closed(range);
    close(strangers_done[1]);
}

static void test_bootstrap(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.has_secret = true;
    memset(cfg.secret, 0xab, sizeof cfg.secret);
    cfg.timeout_ms = 600000;
    int codes[3];
    if (pipe(strangers_done) < 0) {
        CHECK(!"pipe");
        return;
    }
    CHECK_INT(weft__test_ranks(3, &cfg, boot_child, boot_strangers, NULL, 1200000, codes, NULL), 0);
    close(strangers_done[0]);
    for (int r = 0; r < 3; r++)
        CHECK_INT(codes[r], 0);
}

/* ---- Silent strangers ------------------------------------------------------- */

enum { SILENT = 40 };

/* The ranks other than 0 wait for one byte each from this pipe, written
 * once the silent strangers are connected (in rank 0's backlog first). */
static int go[2];

static int silent_child(const weft_comm_config *cfg, void *arg)
{
    char b;
    if (cfg->rank != 0 && read(go[0], &b, 1) != 1)
        return 98;
    return weft__test_with_comm(cfg, boot_body_plain, arg);
}

static void silent_strangers(const pid_t *pids, uint32_t n, int port, void *arg)
{
    (void)pids;
    int *fds = arg;
    for (int i = 0; i < SILENT; i++) {
        fds[i] = weft__test_dial_loopback(port);
        CHECK(fds[i] >= 0);
    }
    for (uint32_t r = 1; r < n; r++)
        CHECK(write(go[1], "g", 1) == 1);
}

/* 40 connections that never send a byte, made before the real ranks, do
 * not keep the job from forming: their hellos are awaited side by side
 * with the real ones. One at a time with 2 s each they take 80 s, past the
 * 60 s deadline, and the job fails (codes): no clock of the test's own
 * decides the result, and the deadline is far beyond what load makes of a
 * job that forms in well under a second when nothing else runs. */
static void test_silent_bootstrap(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.has_secret = true;
    memset(cfg.secret, 0xab, sizeof cfg.secret);
    cfg.timeout_ms = 60000;
    int fds[SILENT], codes[3];
    CHECK(pipe(go) == 0);
    CHECK_INT(weft__test_ranks(3, &cfg, silent_child, silent_strangers, fds, 120000, codes, NULL),
              0);
    for (int r = 0; r < 3; r++)
        CHECK_INT(codes[r], 0);
    for (int i = 0; i < SILENT; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    close(go[0]);
    close(go[1]);
}

/* A job that cannot form says why: rank 0 of 2 with five silent
 * connections and no rank 1 names them when the deadline passes. */
static void test_silent_cause(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 64) == 0 &&
          getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
    int s[5];
    for (int i = 0; i < 5; i++)
        s[i] = weft__test_dial_loopback(ntohs(a.sin_port));
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.rank = 0;
    cfg.size = 2;
    cfg.listen_fd = lfd;
    cfg.has_secret = true;
    memset(cfg.secret, 0xab, sizeof cfg.secret);
    cfg.timeout_ms = 1500;
    weft_comm *c = NULL;
    weft_diag d;
    weft_log_set_sink(capture, NULL);
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ETIMEDOUT);
    weft_log_set_sink(NULL, NULL);
    const char *want = "bootstrap: rank 1 did not join within 1500 ms (1 of 2 ranks joined); 5 "
                       "connections "
                       "without a valid hello, the last from 127.0.0.1:";
    CHECK(strncmp(d.msg, want, strlen(want)) == 0);
    CHECK_CONTAINS(d.msg, " (no complete hello)");
    if (strncmp(d.msg, want, strlen(want)) != 0)
        fprintf(stderr, "got: %s\n", d.msg);
    for (int i = 0; i < 5; i++)
        if (s[i] >= 0)
            close(s[i]);
    close(lfd);
}

/* ---- At a TCP transport listener ------------------------------------------ */

static const unsigned char job_secret[WEFT_SECRET_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static weft_err drive(weft__xport *x, weft__xreq *r)
{
    while (!r->complete) {
        bool moved = false;
        weft_err e = weft__xport_tcp.progress(x, 100000000, &moved, NULL);
        if (e)
            return e;
    }
    return WEFT_OK;
}

static weft__xport *open_tcp(uint32_t rank, unsigned char *blob)
{
    struct in_addr lo = {htonl(INADDR_LOOPBACK)};
    weft__xport_params p = {
        .rank = rank, .size = 2, .secret = job_secret, .ifaddrs = &lo, .nifaddrs = 1, .conns = 2};
    weft__xport *x = NULL;
    CHECK_ERR(weft__xport_tcp.open(&p, &x, blob, NULL), WEFT_OK);
    return x;
}

enum { MSG = 300001 };

static void test_transport(void)
{
    int up[2], down[2];
    if (pipe(up) < 0 || pipe(down) < 0)
        return;
    unsigned char addrs[2 * WEFT__XPORT_ADDR_BYTES];
    bool serve[2] = {true, true};
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) { /* rank 1: accepts */
        weft_test_child_start();
        weft_log_set_sink(capture, NULL);
        weft__xport *x = open_tcp(1, addrs + WEFT__XPORT_ADDR_BYTES);
        if (!x)
            _exit(90);
        if (write(up[1], addrs + WEFT__XPORT_ADDR_BYTES, WEFT__XPORT_ADDR_BYTES) < 0 ||
            read(down[0], addrs, WEFT__XPORT_ADDR_BYTES) != WEFT__XPORT_ADDR_BYTES)
            _exit(91);
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft__xport_tcp.connect(x, serve, addrs, weft__now_ns() + 600000000000LL, &d),
                  WEFT_OK);
        weft__xport_tcp.ready(x);
        unsigned char *buf = calloc(1, MSG);
        weft__xreq r = {.peer = 0, .is_send = false, .buf = buf, .len = MSG};
        CHECK_ERR(weft__xport_tcp.post(x, &r, NULL), WEFT_OK);
        CHECK_ERR(drive(x, &r), WEFT_OK);
        size_t bad = 0;
        for (size_t i = 0; i < MSG; i++)
            bad += buf[i] != (unsigned char)(i * 7);
        CHECK_INT(bad, 0);
        CHECK_CONTAINS(logbuf, "weft WARN run: tcp: rank 1 refused connection from 127.0.0.1:");
        CHECK_CONTAINS(logbuf, ": wrong job secret\n");
        CHECK_CONTAINS(logbuf, ": unexpected rank\n");
        CHECK_CONTAINS(logbuf, ": unexpected connection index\n");
        CHECK_CONTAINS(logbuf, ": unexpected connection kind\n");
        free(buf);
        weft__xport_tcp.close(x);
        fflush(stderr);
        _exit(weft_test_child_status(0));
    }
    /* rank 0: connects, after four strangers knocked on rank 1's door. */
    weft__xport *x = open_tcp(0, addrs);
    CHECK(read(up[0], addrs + WEFT__XPORT_ADDR_BYTES, WEFT__XPORT_ADDR_BYTES) ==
          WEFT__XPORT_ADDR_BYTES);
    CHECK(write(down[1], addrs, WEFT__XPORT_ADDR_BYTES) == WEFT__XPORT_ADDR_BYTES);
    const unsigned char *b1 = addrs + WEFT__XPORT_ADDR_BYTES;
    int port = b1[8] | b1[9] << 8; /* the blob's first port, little-endian */
    /* Silent ones first: rank 1 must not wait for them one by one (2 s
     * each outlasted the 8 s deadline before hellos were read side by
     * side). */
    int quiet[SILENT];
    for (int i = 0; i < SILENT; i++)
        quiet[i] = weft__test_dial_loopback(port);
    int s[4];
    for (int i = 0; i < 4; i++)
        s[i] = weft__test_dial_loopback(port);
    send_hello(s[0], WEFT__HELLO_TCP, 0, 2, 0, 0x00); /* wrong secret */
    weft__hello h = {.kind = WEFT__HELLO_TCP, .rank = 1, .size = 2, .index = 0};
    unsigned char buf[WEFT__HELLO_BYTES];
    memcpy(h.secret, job_secret, sizeof h.secret);
    weft__hello_encode(&h, buf);
    CHECK(write(s[1], buf, sizeof buf) == (ssize_t)sizeof buf); /* rank 1 is itself */
    h.rank = 0;
    h.index = 9;
    weft__hello_encode(&h, buf);
    CHECK(write(s[2], buf, sizeof buf) == (ssize_t)sizeof buf); /* no such connection */
    h.index = 0;
    h.kind = WEFT__HELLO_BOOT;
    weft__hello_encode(&h, buf);
    CHECK(write(s[3], buf, sizeof buf) == (ssize_t)sizeof buf); /* a bootstrap hello */
    if (x) {
        CHECK_ERR(weft__xport_tcp.connect(x, serve, addrs, weft__now_ns() + 600000000000LL, NULL),
                  WEFT_OK);
        unsigned char *msg = malloc(MSG);
        for (size_t i = 0; i < MSG; i++)
            msg[i] = (unsigned char)(i * 7);
        weft__xreq r = {.peer = 1, .is_send = true, .buf = msg, .len = MSG};
        CHECK_ERR(weft__xport_tcp.post(x, &r, NULL), WEFT_OK);
        CHECK_ERR(drive(x, &r), WEFT_OK);
        free(msg);
    }
    for (int i = 0; i < 4; i++)
        check_closed(s[i]);
    for (int i = 0; i < SILENT; i++)
        if (quiet[i] >= 0)
            close(quiet[i]);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    weft__xport_tcp.close(x);
}

int main(void)
{
    test_bootstrap();
    test_silent_bootstrap();
    test_silent_cause();
    test_transport();
    return weft_test_done();
}
