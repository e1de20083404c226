/* Accepting connections that must open with a hello (see hello_gate.h). */
#include "run/hello_gate.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/sock.h"
#include "weft/log.h"

struct weft__hello_pending {
    int fd;
    uint32_t li;
    int64_t deadline;
    size_t got;
    bool ready; /* a hello that passed, not yet handed out */
    weft__hello h;
    unsigned char buf[WEFT__HELLO_BYTES];
    char peer[32];
    uint32_t ip; /* the peer's IPv4 address, network order */
};

weft_err weft__hello_gate_init(weft__hello_gate *g, const int *lfds, uint32_t nl, uint32_t kind,
                               const unsigned char *secret, const char *who, weft_diag *d)
{
    memset(g, 0, sizeof *g);
    g->lfds = lfds;
    g->nl = nl;
    g->kind = kind;
    g->secret = secret;
    snprintf(g->who, sizeof g->who, "%s", who);
    g->log_interval_ns = WEFT__HELLO_GATE_LOG_INTERVAL_NS;
    g->summary_at = weft__now_ns();
    g->p = weft__calloc(WEFT__HELLO_GATE_PENDING, sizeof *g->p);
    g->pfds = weft__calloc(nl + WEFT__HELLO_GATE_PENDING, sizeof *g->pfds);
    if (!g->p || !g->pfds) {
        weft__hello_gate_fini(g);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    return WEFT_OK;
}

static void summary(weft__hello_gate *g, int64_t now)
{
    if (g->held)
        weft_log(WEFT_LOG_WARN, "run",
                 "%s refused %u more connection%s not logged one by one (the last from %s: %s)",
                 g->who, g->held, g->held == 1 ? "" : "s", g->last_peer, g->last_why);
    g->held = 0;
    g->summary_at = now;
}

void weft__hello_gate_fini(weft__hello_gate *g)
{
    for (uint32_t i = 0; g->p && i < g->np; i++)
        close(g->p[i].fd);
    g->np = 0;
    summary(g, weft__now_ns());
    weft__free(g->p);
    weft__free(g->pfds);
    g->p = NULL;
    g->pfds = NULL;
}

/* True when a refusal from ip gets a line of its own (see the log limit in
 * hello_gate.h); counts it. */
static bool log_admit(weft__hello_gate *g, uint32_t ip)
{
    uint32_t k = 0;
    while (k < g->log_npeers && g->log_ip[k] != ip)
        k++;
    if (k == g->log_npeers) {
        if (k == WEFT__HELLO_GATE_LOG_PEERS)
            return false;
        g->log_ip[k] = ip;
        g->log_lines[k] = 0;
        g->log_npeers++;
    }
    if (g->log_lines[k] == WEFT__HELLO_GATE_LOG_FIRST)
        return false;
    g->log_lines[k]++;
    return true;
}

/* Removes pending connection i (order is not kept); closes it and counts
 * it as refused unless it is handed out (why NULL). */
static void take(weft__hello_gate *g, uint32_t i, const char *why)
{
    weft__hello_pending *p = &g->p[i];
    if (why) {
        bool line = log_admit(g, p->ip);
        if (line)
            weft_log(WEFT_LOG_WARN, "run", "%s refused connection from %s: %s", g->who, p->peer,
                     why);
        close(p->fd);
        g->refused++;
        memcpy(g->last_peer, p->peer, sizeof g->last_peer);
        g->last_why = why;
        if (!line) {
            g->held++;
            int64_t now = weft__now_ns();
            if (now - g->summary_at >= g->log_interval_ns)
                summary(g, now);
        }
    }
    g->p[i] = g->p[--g->np];
}

/* Reads what pending connection i has sent; marks it ready when it holds a
 * hello that passed. */
static void read_hello(weft__hello_gate *g, uint32_t i, weft__hello_check check, void *arg)
{
    weft__hello_pending *p = &g->p[i];
    ssize_t n = recv(p->fd, p->buf + p->got, sizeof p->buf - p->got, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        take(g, i, "no complete hello");
        return;
    }
    p->got += (size_t)n;
    if (p->got < sizeof p->buf)
        return;
    const char *why = NULL;
    if (weft__hello_decode(p->buf, g->kind, g->secret, &p->h, &why))
        why = check(arg, p->li, &p->h);
    if (why)
        take(g, i, why);
    else
        p->ready = true;
}

/* Accepts what listener li has queued, without waiting, while slots are
 * free. When every slot is taken, what the pending connections sent is
 * read first (strangers that spoke are refused, real peers become ready);
 * if that frees none, the rest stays in the kernel's backlog, in arrival
 * order, until hellos arrive or pending ones time out. No connection is
 * dropped to make room: that could drop a real peer whose hello is on its
 * way (a job of more ranks than slots connects in one burst). */
static weft_err accept_all(weft__hello_gate *g, uint32_t li, int64_t now, weft__hello_check check,
                           void *arg, weft_diag *d)
{
    for (;;) {
        if (g->np == WEFT__HELLO_GATE_PENDING) {
            for (uint32_t i = g->np; i-- > 0;)
                if (!g->p[i].ready)
                    read_hello(g, i, check, arg);
            if (g->np == WEFT__HELLO_GATE_PENDING)
                return WEFT_OK;
        }
        int fd;
        struct sockaddr_in peer;
        weft_diag ad;
        weft_err e = weft__sock_accept(g->lfds[li], 0, &fd, &peer, &ad);
        if (e == WEFT_ETIMEDOUT)
            return WEFT_OK; /* none left */
        if (e)
            return weft_diag_set(d, e, "%s %s", g->who, ad.msg);
        weft__hello_pending *p = &g->p[g->np++];
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->li = li;
        p->deadline = now + WEFT__HELLO_WAIT_NS;
        weft__sock_format(&peer, p->peer, sizeof p->peer);
        p->ip = peer.sin_addr.s_addr;
    }
}

weft_err weft__hello_gate_next(weft__hello_gate *g, weft__hello_check check, void *arg,
                               int64_t deadline, int *fd, weft__hello *h, uint32_t *li,
                               weft_diag *d)
{
    for (;;) {
        /* Hand out a connection whose hello passed; checked again, as
         * handing out an earlier one may have changed the answer (a rank
         * that joined twice). */
        for (uint32_t i = g->np; i-- > 0;) {
            if (!g->p[i].ready)
                continue;
            const char *why = check(arg, g->p[i].li, &g->p[i].h);
            if (why) {
                take(g, i, why);
                continue;
            }
            *fd = g->p[i].fd;
            *li = g->p[i].li;
            *h = g->p[i].h;
            take(g, i, NULL);
            return WEFT_OK;
        }
        int64_t now = weft__now_ns(), wake = deadline;
        for (uint32_t i = g->np; i-- > 0;) {
            if (g->p[i].deadline <= now)
                take(g, i, "no complete hello");
            else if (g->p[i].deadline < wake)
                wake = g->p[i].deadline;
        }
        if (now >= deadline)
            return weft_diag_set(d, WEFT_ETIMEDOUT, "hello: timed out");
        /* Listeners only while a slot is free (else they stay readable). */
        bool room = g->np < WEFT__HELLO_GATE_PENDING;
        for (uint32_t l = 0; l < g->nl; l++)
            g->pfds[l] = (struct pollfd){.fd = room ? g->lfds[l] : -1, .events = POLLIN};
        for (uint32_t i = 0; i < g->np; i++)
            g->pfds[g->nl + i] = (struct pollfd){.fd = g->p[i].fd, .events = POLLIN};
        uint32_t np = g->np;
        int rc = poll(g->pfds, g->nl + np, weft__ms_until(wake, 1000));
        if (rc < 0 && errno != EINTR)
            return weft_diag_set(d, WEFT_EIO, "%s poll: %s", g->who, strerror(errno));
        if (rc <= 0)
            continue;
        /* Every pending connection that has something, so that strangers
         * are refused (and logged) as they speak, not only while no real
         * peer is ready. From the back, so that take() (which moves the
         * last into the hole) never moves an unvisited one. */
        for (uint32_t i = np; i-- > 0;)
            if (g->pfds[g->nl + i].revents)
                read_hello(g, i, check, arg);
        now = weft__now_ns();
        for (uint32_t l = 0; l < g->nl; l++) {
            if (!(g->pfds[l].revents & POLLIN))
                continue;
            weft_err e = accept_all(g, l, now, check, arg, d);
            if (e)
                return e;
        }
    }
}

void weft__hello_gate_note(const weft__hello_gate *g, char *buf, size_t size)
{
    uint32_t n = g->refused + g->np;
    if (!n) {
        buf[0] = '\0';
        return;
    }
    const char *peer = g->np ? g->p[g->np - 1].peer : g->last_peer;
    const char *why = g->np ? "no complete hello" : g->last_why;
    snprintf(buf, size, "; %u connection%s without a valid hello, the last from %s (%s)", n,
             n == 1 ? "" : "s", peer, why);
}
