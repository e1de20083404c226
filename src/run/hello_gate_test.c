/* The hello gate (hello_gate.h): a real peer gets through whatever silent
 * connections come before or after it, beyond the 128 slots too (the rest
 * waits in the backlog, none is dropped to make room), strangers that
 * speak are refused, and the note names the connections without a hello.
 * Deadlines are generous bounds; nothing waits on a clock to synchronise. */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/hello_gate.h"
#include "run/sock.h"
#include "run/testing_ranks.h"

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
    if (fill) memset(h.secret, fill, sizeof h.secret);
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
    if (fd >= 0) close(fd);
    weft__hello_gate_fini(&g);
    for (int i = 0; i < MANY; i++)
        if (quiet[i] >= 0) close(quiet[i]);
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

int main(void)
{
    real_among_silent(true);
    real_among_silent(false);
    note();
    return weft_test_done();
}
