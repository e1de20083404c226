/* The hello gate (hello_gate.h): a real peer gets through whatever silent
 * connections come before or after it, beyond the 128 slots too (the rest
 * waits in the backlog, none is dropped to make room), strangers that
 * speak are refused, and the note names the connections without a hello.
 * A flood of strangers from 20 addresses gets the log lines the limit
 * allows (hello_gate.h), counted exactly, and the summary with the rest.
 * Deadlines are generous bounds; nothing waits on a clock to synchronise
 * (the flood's strangers have all spoken before the gate starts). */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/hello_gate.h"
#include "run/sock.h"
#include "run/testing_ranks.h"
#include "weft/log.h"

enum { MANY = 200 };

static const unsigned char secret[WEFT_SECRET_BYTES] = {7, 7, 7};

static int listener(int *port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in bound;
    int fd = -1;
    CHECK_ERR(weft__sock_listen(&a, &fd, &bound, NULL), WEFT_OK);
    *port = ntohs(bound.sin_port);
    return fd;
}

static void say_hello(int fd, uint32_t rank, unsigned char fill)
{
    weft__hello h = {.kind = WEFT__HELLO_BOOT, .rank = rank, .size = 2};
    memset(h.secret, 0, sizeof h.secret);
    memcpy(h.secret, secret, sizeof secret);
    if (fill)
        memset(h.secret, fill, sizeof h.secret);
    unsigned char buf[WEFT__HELLO_BYTES];
    weft__hello_encode(&h, buf);
    CHECK(write(fd, buf, sizeof buf) == (ssize_t)sizeof buf);
}

static const char *only_rank_1(void *arg, uint32_t li, const weft__hello *h)
{
    (void)arg;
    (void)li;
    return h->rank == 1 ? NULL : "rank out of range";
}

/* MANY silent connections and one real one, the real one first or last. */
static void real_among_silent(bool real_first)
{
    int port, lfd = listener(&port);
    int quiet[MANY], real = -1;
    if (real_first) {
        real = weft__test_dial_loopback(port);
        say_hello(real, 1, 0);
    }
    for (int i = 0; i < MANY; i++)
        quiet[i] = weft__test_dial_loopback(port);
    if (!real_first) {
        real = weft__test_dial_loopback(port);
        say_hello(real, 1, 0);
    }
    weft__hello_gate g;
    CHECK_ERR(weft__hello_gate_init(&g, &lfd, 1, WEFT__HELLO_BOOT, secret, "test:", NULL), WEFT_OK);
    int fd = -1;
    uint32_t li = 9;
    weft__hello h;
    CHECK_ERR(weft__hello_gate_next(&g, only_rank_1, NULL, weft__now_ns() + 240000000000LL, &fd, &h,
                                    &li, NULL),
              WEFT_OK);
    CHECK_INT(h.rank, 1);
    CHECK_INT(li, 0);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    weft__hello_gate_fini(&g);
    for (int i = 0; i < MANY; i++)
        if (quiet[i] >= 0)
            close(quiet[i]);
    close(real);
    close(lfd);
}

/* No real peer: a wrong secret is refused as it speaks; at the deadline
 * the note counts it and the silent ones. */
static void note(void)
{
    int port, lfd = listener(&port);
    int quiet[3];
    for (int i = 0; i < 3; i++)
        quiet[i] = weft__test_dial_loopback(port);
    int wrong = weft__test_dial_loopback(port);
    say_hello(wrong, 1, 0x55);
    weft__hello_gate g;
    CHECK_ERR(weft__hello_gate_init(&g, &lfd, 1, WEFT__HELLO_BOOT, secret, "test:", NULL), WEFT_OK);
    int fd;
    uint32_t li;
    weft__hello h;
    weft_diag d;
    CHECK_ERR(weft__hello_gate_next(&g, only_rank_1, NULL, weft__now_ns() + 300000000LL, &fd, &h,
                                    &li, &d),
              WEFT_ETIMEDOUT);
    CHECK_STR(d.msg, "hello: timed out");
    char buf[160];
    weft__hello_gate_note(&g, buf, sizeof buf);
    const char *want = "; 4 connections without a valid hello, the last from 127.0.0.1:";
    CHECK(strncmp(buf, want, strlen(want)) == 0);
    CHECK_CONTAINS(buf, " (no complete hello)");
    weft__hello_gate_fini(&g);
    weft__hello_gate_note(&g, buf, sizeof buf); /* refused ones stay counted */
    CHECK(strncmp(buf, "; 1 connection without a valid hello, the last from 127.0.0.1:", 62) == 0);
    CHECK_CONTAINS(buf, " (wrong job secret)");
    for (int i = 0; i < 3; i++)
        close(quiet[i]);
    close(wrong);
    close(lfd);
}

/* ---- The log limit ---------------------------------------------------------- */

enum { FLOOD_ADDRS = 20, FLOOD_EACH = 12 };

static char logbuf[1 << 16];
static unsigned loglines;

static void capture(weft_log_level level, const char *line, void *arg)
{
    (void)level;
    (void)arg;
    size_t have = strlen(logbuf);
    snprintf(logbuf + have, sizeof logbuf - have, "%s\n", line);
    loglines++;
}

/* Connects to 127.0.0.1:port from 127.0.0.k. */
static int dial_from(int k, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)k - 1);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static unsigned count(const char *hay, const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* FLOOD_EACH wrong secrets from each of FLOOD_ADDRS addresses (240 in
 * all): the first 16 addresses refused get 10 lines each, the other 4 none, and
 * the 80 held back are one summary line at fini (interval not reached),
 * or, with interval 0, one summary line for each. */
static void flood(bool interval_zero)
{
    int port, lfd = listener(&port);
    int s[FLOOD_ADDRS * FLOOD_EACH];
    for (int k = 0; k < FLOOD_ADDRS; k++) {
        for (int j = 0; j < FLOOD_EACH; j++) {
            int fd = dial_from(k + 1, port);
            s[k * FLOOD_EACH + j] = fd;
            CHECK(fd >= 0);
            if (fd >= 0)
                say_hello(fd, 1, 0x55);
        }
    }
    logbuf[0] = '\0';
    loglines = 0;
    weft_log_set_sink(capture, NULL);
    weft__hello_gate g;
    CHECK_ERR(weft__hello_gate_init(&g, &lfd, 1, WEFT__HELLO_BOOT, secret, "test:", NULL), WEFT_OK);
    g.log_interval_ns = interval_zero ? 0 : 3600 * 1000000000LL;
    int fd;
    uint32_t li;
    weft__hello h;
    CHECK_ERR(weft__hello_gate_next(&g, only_rank_1, NULL, weft__now_ns() + 2000000000LL, &fd, &h,
                                    &li, NULL),
              WEFT_ETIMEDOUT);
    CHECK_INT(g.refused, FLOOD_ADDRS * FLOOD_EACH);
    weft__hello_gate_fini(&g);
    weft_log_set_sink(NULL, NULL);
    unsigned held = (FLOOD_ADDRS - 16) * FLOOD_EACH + 16 * (FLOOD_EACH - 10);
    CHECK_INT(count(logbuf, "test: refused connection from 127.0.0."), 16 * 10);
    /* Which 16 addresses come first depends on the order of refusals. */
    unsigned with10 = 0, with0 = 0;
    for (int k = 1; k <= FLOOD_ADDRS; k++) {
        char from[64];
        snprintf(from, sizeof from, "test: refused connection from 127.0.0.%d:", k);
        unsigned n = count(logbuf, from);
        with10 += n == 10;
        with0 += n == 0;
    }
    CHECK_INT(with10, 16);
    CHECK_INT(with0, FLOOD_ADDRS - 16);
    if (interval_zero) {
        CHECK_INT(count(logbuf, "test: refused 1 more connection not logged one by one (the last "
                                "from 127.0.0."),
                  held);
        CHECK_INT(loglines, 16 * 10 + held);
    } else {
        char want[96];
        snprintf(want, sizeof want, "test: refused %u more connections not logged one by one",
                 held);
        CHECK_INT(count(logbuf, want), 1);
        CHECK_CONTAINS(logbuf, ": wrong job secret)\n");
        CHECK_INT(loglines, 16 * 10 + 1);
    }
    for (int i = 0; i < FLOOD_ADDRS * FLOOD_EACH; i++)
        if (s[i] >= 0)
            close(s[i]);
    close(lfd);
}

int main(void)
{
    flood(false);
    flood(true);
    real_among_silent(true);
    real_among_silent(false);
    note();
    return weft_test_done();
}
