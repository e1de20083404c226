/* Over 900 lines on purpose: one transport's connection state (set-up,
 * framing, progress, notices and the lingering close all read and write the
 * same connection queues, private to this file).
 *
 * The TCP transport: several connections per peer, one set per interface.
 *
 * Every rank listens on port 0 of each configured interface address and
 * publishes (address, port) pairs. For every pair of ranks a < b, rank a
 * opens nconn = interfaces x conns connections to b; connection c goes to
 * b's interface c / conns. Each connection opens with the hello handshake
 * (hello.h) carrying the job secret, the rank and the index c, answered by
 * b's hello; b refuses and logs anything else, so strangers never get in,
 * and reads the hellos of all pending connections side by side
 * (hello_gate.h), so silent ones cannot hold the real ones back.
 *
 * A message of len bytes is cut into np parts at multiples of 8 bytes (so
 * every part holds whole elements of any dtype); part i travels on one
 * connection as a 16-byte frame header (magic, length) and the bytes. Lane 0
 * messages (the built-in schedules) use np = clamp(len / 64 KiB, 1, nconn)
 * parts, part i on a connection of interface i mod interfaces; a message on lane k >= 1 (the plan
 * executor's streams, see xport.h) uses np = clamp(len / 64 KiB, 1,
 * interfaces) parts on connection (k-1) mod conns of each interface's set,
 * so lanes = conns independent streams, each striped over every NIC. Both
 * sides compute the same cut, so the receiver knows each part's length and
 * refuses a frame whose magic or length differs (a malformed or oversized
 * message) before reading its payload. Each connection keeps FIFO queues of
 * the requests whose parts it carries.
 *
 * All sockets are non-blocking; progress polls the connections that have
 * work and moves what it can. A peer that closes or resets a connection we
 * are using ends the wait with WEFT_EPEER.
 *
 * Causes. A rank that fails or closes tells each peer why before it shuts
 * its connections: a notice frame (magic "WFTN", length 20, then the five
 * words of a weft__cause, cause.h) on every connection whose sending side
 * is between frames (one in the middle of a frame is first completed with
 * zeros where the socket takes them at once; the receiver fails anyway).
 * A receiver that finds a notice where it expected a data frame fails
 * with the cause it carries, so a rank that failed because its neighbour
 * failed because of a killed rank names the killed rank ("tcp: rank 2
 * died (reported by rank 3)"), as over shared memory; a notice of a close
 * reads "rank 2 closed its communicator". A connection that ends without
 * a notice (end of file, reset, broken pipe) means the peer's process is
 * gone: "tcp: rank 2 died". A send that fails looks for a notice already
 * waiting on the connection first. The cause is the transport's `cause`,
 * which the communicator passes on when it fails in turn. A send that fails
 * while a receive is pending on the same connection does not fail at once:
 * the peer may have written data and then its notice before the connection
 * broke, so the receives go on and meet the notice (or the end) in order.
 *
 * Closing. Closing a socket whose receive queue holds unread bytes makes
 * the kernel answer with a reset and drop what it has not yet sent (Linux
 * net/ipv4/tcp.c, tcp_close(), after RFC 2525 section 2.17), and a peer
 * that keeps sending to a closed socket gets a reset too: either can drop
 * the notice, and the peer then reports "rank N died" for a rank that
 * closed or failed. So close (and abort) send the notice and shut only the
 * writing side (the peer reads the notice, then end of file); close then
 * lingers: it reads and discards what peers still send until each
 * connection has reached end of file or has all its bytes, notice and end
 * included, acknowledged by the peer (SIOCOUTQ is 0), at most
 * TCP_LINGER_NS in all, and only then closes the sockets. Reductions received over TCP go
 * through a 256 KiB bounce buffer per connection and are combined into the
 * destination whole elements at a time.
 *
 * With a network namespace (params netns, WEFT_NETNS), the calling thread
 * switches into it only while it creates sockets: around the listeners in
 * open and around the outgoing connections in connect (accepted sockets
 * inherit the listener's namespace). No helper thread; the thread is back
 * in its own namespace whenever these functions return, so the bootstrap
 * and everything else of the process stay in the original namespace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/cause.h"
#include "run/clock.h"
#include "run/hello.h"
#include "run/hello_gate.h"
#include "run/sock.h"
#include "run/transport/xport.h"
#include "weft/log.h"

#define TCP_MAX_IFS 4u
#define TCP_FRAME_MAGIC 0x44544657u /* "WFTD" */
#define TCP_NOTE_MAGIC 0x4e544657u  /* "WFTN" */
#define TCP_FRAME_HDR 16u
#define TCP_NOTE_LEN 20u /* a weft__cause: five 32-bit words */
#define TCP_NOTE_BYTES (TCP_FRAME_HDR + TCP_NOTE_LEN)
#define TCP_MIN_PART (64u * 1024u)
#define TCP_BOUNCE (256u * 1024u)
/* The longest a close waits for its notices to be acknowledged (see
 * "Closing" at the top). A peer that reads its connection takes them in
 * microseconds; this bounds only the wait for one that never reads. */
#define TCP_LINGER_NS (2000 * 1000000LL)

typedef struct rqueue {
    weft__xreq **v;
    size_t cap, head, len;
} rqueue;

typedef struct tcp_conn {
    int fd; /* -1 when this connection does not exist */
    uint32_t peer, index;
    rqueue sq, rq;
    unsigned char shdr[TCP_FRAME_HDR];
    size_t shdr_done, soff;
    unsigned char rhdr[TCP_NOTE_BYTES]; /* a data frame's header, or a notice */
    size_t rhdr_done, roff;
    unsigned char *bounce;
    size_t bounce_have;
    bool sdead; /* a send failed (reset or broken pipe); receives go on */
} tcp_conn;

struct weft__xport {
    uint32_t rank, size, nifs, per_if, nconn;
    unsigned char secret[WEFT_SECRET_BYTES];
    char *netns; /* namespace file for new sockets, NULL for none */
    int lfd[TCP_MAX_IFS];
    tcp_conn *conns; /* size * nconn, [peer * nconn + index] */
    struct pollfd *pfds;
    tcp_conn **pconn;
    size_t queued;     /* parts queued over all connections */
    bool noted;        /* notices sent (abort or close): only once */
    bool has_cause;    /* progress failed because of a peer: */
    weft__cause cause; /* what it saw (tcp_cause) */
};

/* ---- Addresses ----------------------------------------------------------- */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Blob: u32 nifs, then per interface the IPv4 address (network order, as
 * stored) and the port (host order). */
static void addr_encode(const weft__xport *x, const struct sockaddr_in *bound, unsigned char *blob)
{
    memset(blob, 0, WEFT__XPORT_ADDR_BYTES);
    put32(blob, x->nifs);
    for (uint32_t i = 0; i < x->nifs; i++) {
        memcpy(blob + 4 + 8 * i, &bound[i].sin_addr.s_addr, 4);
        put32(blob + 8 + 8 * i, ntohs(bound[i].sin_port));
    }
}

static bool addr_decode(const unsigned char *blob, uint32_t i, uint32_t *nifs,
                        struct sockaddr_in *out)
{
    *nifs = get32(blob);
    if (*nifs == 0 || *nifs > TCP_MAX_IFS || i >= *nifs)
        return false;
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    memcpy(&out->sin_addr.s_addr, blob + 4 + 8 * i, 4);
    uint32_t port = get32(blob + 8 + 8 * i);
    if (port == 0 || port > 65535)
        return false;
    out->sin_port = htons((uint16_t)port);
    return true;
}

/* ---- Lifetime -------------------------------------------------------------- */

static void send_notes(weft__xport *x, const weft__cause *why);
static void linger(weft__xport *x);

static void tcp_close(weft__xport *x)
{
    if (!x)
        return;
    if (x->conns) {
        weft__cause closed = {.kind = WEFT__CAUSE_CLOSED,
                              .rank = x->rank,
                              .pid = (uint32_t)getpid(),
                              .witness = x->rank};
        send_notes(x, &closed);
        linger(x);
    }
    for (uint32_t i = 0; i < TCP_MAX_IFS; i++) {
        if (x->lfd[i] >= 0)
            close(x->lfd[i]);
    }
    for (size_t i = 0; x->conns && i < (size_t)x->size * x->nconn; i++) {
        tcp_conn *c = &x->conns[i];
        if (c->fd >= 0)
            close(c->fd);
        weft__free(c->sq.v);
        weft__free(c->rq.v);
        weft__free(c->bounce);
    }
    weft__free(x->conns);
    weft__free(x->pfds);
    weft__free(x->pconn);
    weft__free(x->netns);
    weft__free(x);
}

static weft_err tcp_open(const weft__xport_params *p, weft__xport **out,
                         unsigned char addr[WEFT__XPORT_ADDR_BYTES], weft_diag *d)
{
    if (p->nifaddrs == 0 || p->nifaddrs > TCP_MAX_IFS || p->conns == 0 ||
        p->conns > WEFT_MAX_TCP_CONNS)
        return weft_diag_set(d, WEFT_EINVAL,
                             "tcp: %u interfaces (1 .. %u) and %u connections "
                             "per peer (1 .. %u) are not possible",
                             p->nifaddrs, TCP_MAX_IFS, p->conns, WEFT_MAX_TCP_CONNS);
    weft_err e = WEFT_ENOMEM;
    weft__xport *x = weft__calloc(1, sizeof *x);
    if (!x)
        return weft_diag_code(d, e);
    for (uint32_t i = 0; i < TCP_MAX_IFS; i++)
        x->lfd[i] = -1;
    x->rank = p->rank;
    x->size = p->size;
    x->nifs = p->nifaddrs;
    x->per_if = p->conns;
    x->nconn = p->nifaddrs * p->conns;
    memcpy(x->secret, p->secret, WEFT_SECRET_BYTES);
    if (p->netns && *p->netns && !(x->netns = weft__strdup(p->netns))) {
        weft_diag_code(d, e);
        goto close_xport;
    }
    size_t n = (size_t)x->size * x->nconn;
    x->conns = weft__calloc(n, sizeof *x->conns);
    x->pfds = weft__calloc(n, sizeof *x->pfds);
    x->pconn = weft__calloc(n, sizeof *x->pconn);
    if (!x->conns || !x->pfds || !x->pconn) {
        weft__free(x->conns); /* its fds are 0, not -1: close must skip it */
        x->conns = NULL;
        weft_diag_code(d, e);
        goto close_xport;
    }
    for (size_t i = 0; i < n; i++) {
        x->conns[i].fd = -1;
        x->conns[i].peer = (uint32_t)(i / x->nconn);
        x->conns[i].index = (uint32_t)(i % x->nconn);
    }
    struct sockaddr_in bound[TCP_MAX_IFS];
    int home;
    e = weft__sock_netns_enter(x->netns, "WEFT_NETNS", &home, d);
    if (e)
        goto close_xport;
    for (uint32_t i = 0; i < x->nifs && !e; i++) {
        struct sockaddr_in at;
        memset(&at, 0, sizeof at);
        at.sin_family = AF_INET;
        at.sin_addr = p->ifaddrs[i];
        at.sin_port = 0;
        e = weft__sock_listen(&at, &x->lfd[i], &bound[i], d);
    }
    weft_err back = weft__sock_netns_leave(home, e ? NULL : d);
    if (e || (e = back))
        goto close_xport;
    addr_encode(x, bound, addr);
    *out = x;
    return WEFT_OK;
close_xport:
    tcp_close(x);
    return e;
}

/* ---- Connection setup ------------------------------------------------------ */

static weft_err send_hello(weft__xport *x, int fd, uint32_t index, int64_t deadline, weft_diag *d)
{
    weft__hello h = {.kind = WEFT__HELLO_TCP, .rank = x->rank, .size = x->size, .index = index};
    memcpy(h.secret, x->secret, WEFT_SECRET_BYTES);
    unsigned char buf[WEFT__HELLO_BYTES];
    weft__hello_encode(&h, buf);
    return weft__sock_write_all(fd, buf, sizeof buf, deadline, d);
}

/* What accept checks beyond the hello's kind and secret. */
typedef struct accept_ctx {
    const weft__xport *x;
    const bool *serve;
} accept_ctx;

static const char *tcp_check(void *arg, uint32_t li, const weft__hello *h)
{
    const accept_ctx *a = arg;
    const weft__xport *x = a->x;
    if (h->size != x->size)
        return "different job size";
    if (h->rank >= x->rank || !a->serve[h->rank])
        return "unexpected rank";
    if (h->index >= x->nconn || h->index / x->per_if != li)
        return "unexpected connection index";
    if (x->conns[(size_t)h->rank * x->nconn + h->index].fd >= 0)
        return "duplicate connection";
    return NULL;
}

/* Accepts the expected connections from lower ranks on every listener,
 * their hellos read side by side (hello_gate.h); refuses (and logs)
 * anything else, and answers each accepted one with this rank's hello. */
static weft_err accept_lower(weft__xport *x, const bool *serve, int64_t deadline, weft_diag *d)
{
    uint32_t expected = 0, accepted = 0;
    for (uint32_t p = 0; p < x->rank; p++)
        expected += serve[p] ? x->nconn : 0;
    if (!expected)
        return WEFT_OK;
    char who[48];
    snprintf(who, sizeof who, "tcp: rank %u", x->rank);
    weft__hello_gate g;
    weft_err e = weft__hello_gate_init(&g, x->lfd, x->nifs, WEFT__HELLO_TCP, x->secret, who, d);
    if (e)
        return e;
    accept_ctx a = {x, serve};
    while (accepted < expected) {
        int fd;
        uint32_t li;
        weft__hello h;
        e = weft__hello_gate_next(&g, tcp_check, &a, deadline, &fd, &h, &li, d);
        if (e == WEFT_ETIMEDOUT) {
            char note[160];
            weft__hello_gate_note(&g, note, sizeof note);
            e = weft_diag_set(d, e,
                              "tcp: rank %u got %u of %u connections from lower ranks before the "
                              "deadline%s",
                              x->rank, accepted, expected, note);
        }
        if (e)
            break;
        e = send_hello(x, fd, h.index, deadline, d);
        if (e) {
            close(fd);
            e = weft_diag_set(d, WEFT_EPEER, "tcp: rank %u left during the handshake", h.rank);
            break;
        }
        x->conns[(size_t)h.rank * x->nconn + h.index].fd = fd;
        accepted++;
    }
    weft__hello_gate_fini(&g);
    return e;
}

/* Outgoing connections to higher ranks; the kernel completes them against
 * the listeners' backlogs, so this never waits for b to run. */
static weft_err connect_up(weft__xport *x, const bool *serve, const unsigned char *addrs,
                           int64_t deadline, weft_diag *d)
{
    weft_err e;
    for (uint32_t p = x->rank + 1; p < x->size; p++) {
        if (!serve[p])
            continue;
        const unsigned char *blob = addrs + (size_t)p * WEFT__XPORT_ADDR_BYTES;
        for (uint32_t c = 0; c < x->nconn; c++) {
            struct sockaddr_in to;
            uint32_t nifs;
            if (!addr_decode(blob, c / x->per_if, &nifs, &to) || nifs != x->nifs)
                return weft_diag_set(d, WEFT_EINVAL,
                                     "tcp: rank %u publishes %u interfaces, rank %u has %u "
                                     "(every rank needs the same number)",
                                     p, nifs, x->rank, x->nifs);
            tcp_conn *cn = &x->conns[(size_t)p * x->nconn + c];
            e = weft__sock_connect(&to, deadline, &cn->fd, d);
            if (!e)
                e = send_hello(x, cn->fd, c, deadline, d);
            if (e)
                return e;
        }
    }
    return WEFT_OK;
}

static weft_err tcp_connect(weft__xport *x, const bool *serve, const unsigned char *addrs,
                            int64_t deadline, weft_diag *d)
{
    int home;
    weft_err e = weft__sock_netns_enter(x->netns, "WEFT_NETNS", &home, d);
    if (e)
        return e;
    e = connect_up(x, serve, addrs, deadline, d);
    weft_err back = weft__sock_netns_leave(home, e ? NULL : d);
    if (e || (e = back))
        return e;
    /* Incoming connections from lower ranks. */
    e = accept_lower(x, serve, deadline, d);
    if (e)
        return e;
    /* Answers on our outgoing connections: the other side proves it knows
     * the secret too. */
    for (uint32_t p = x->rank + 1; p < x->size; p++) {
        if (!serve[p])
            continue;
        for (uint32_t c = 0; c < x->nconn; c++) {
            tcp_conn *cn = &x->conns[(size_t)p * x->nconn + c];
            unsigned char buf[WEFT__HELLO_BYTES];
            e = weft__sock_read_all(cn->fd, buf, sizeof buf, deadline, d);
            if (e)
                return weft_diag_set(d, e == WEFT_ETIMEDOUT ? e : WEFT_EPEER,
                                     "tcp: rank %u did not answer connection %u (%s)", p, c,
                                     e == WEFT_ETIMEDOUT ? "timed out" : "refused or closed");
            weft__hello h;
            const char *why = NULL;
            if (weft__hello_decode(buf, WEFT__HELLO_TCP, x->secret, &h, &why) &&
                (h.rank != p || h.index != c || h.size != x->size))
                why = "answer names another rank or connection";
            if (why)
                return weft_diag_set(d, WEFT_EAUTH, "tcp: rank %u's answer on connection %u: %s", p,
                                     c, why);
        }
    }
    return WEFT_OK;
}

static void tcp_ready(weft__xport *x)
{
    for (uint32_t i = 0; i < TCP_MAX_IFS; i++) {
        if (x->lfd[i] >= 0) {
            close(x->lfd[i]);
            x->lfd[i] = -1;
        }
    }
}

/* ---- Messages ---------------------------------------------------------------- */

/* The parts of a request: lane 0 is striped over all nconn connections of
 * the peer, lane k >= 1 over its stream's connection in each interface's
 * set (one per interface), so lanes never share a connection. */
static uint32_t nparts(const weft__xport *x, const weft__xreq *r)
{
    size_t np = r->len / TCP_MIN_PART;
    uint32_t most = r->lane ? x->nifs : x->nconn;
    if (np < 1)
        np = 1;
    if (np > most)
        np = most;
    return (uint32_t)np;
}

/* The connection index (within the peer's) that carries part i of r: lane 0
 * takes one connection of each interface in turn (so even a two-part
 * message uses two NICs), lane k its connection in interface i's set. */
static uint32_t part_conn(const weft__xport *x, const weft__xreq *r, uint32_t i)
{
    if (r->lane)
        return i * x->per_if + (r->lane - 1) % x->per_if;
    return (i % x->nifs) * x->per_if + i / x->nifs;
}

/* Which part of r connection c carries (the inverse of part_conn). */
static uint32_t conn_part(const weft__xport *x, const weft__xreq *r, const tcp_conn *c)
{
    if (r->lane)
        return c->index / x->per_if;
    return (c->index % x->per_if) * x->nifs + c->index / x->per_if;
}

/* Part i of np of a len-byte message: cut at multiples of 8 bytes. */
static void part_range(size_t len, uint32_t np, uint32_t i, size_t *off, size_t *n)
{
    size_t per = len / 8 / np * 8;
    *off = per * i;
    *n = i + 1 == np ? len - *off : per;
}

/* The bytes of r that connection c carries. */
static void conn_range(const weft__xport *x, const weft__xreq *r, const tcp_conn *c, size_t *off,
                       size_t *n)
{
    part_range(r->len, nparts(x, r), conn_part(x, r, c), off, n);
}

static bool q_push(rqueue *q, weft__xreq *r)
{
    if (q->len == q->cap) {
        size_t ncap = q->cap ? q->cap * 2 : 8;
        weft__xreq **v = weft__realloc_array(NULL, ncap, sizeof *v);
        if (!v)
            return false;
        for (size_t i = 0; i < q->len; i++)
            v[i] = q->v[(q->head + i) % q->cap];
        weft__free(q->v);
        q->v = v;
        q->cap = ncap;
        q->head = 0;
    }
    q->v[(q->head + q->len) % q->cap] = r;
    q->len++;
    return true;
}

static weft__xreq *q_front(const rqueue *q)
{
    return q->len ? q->v[q->head] : NULL;
}

static void q_pop(rqueue *q)
{
    q->head = (q->head + 1) % q->cap;
    q->len--;
}

static weft_err tcp_post(weft__xport *x, weft__xreq *r, weft_diag *d)
{
    uint32_t np = nparts(x, r);
    r->complete = false;
    r->parts_left = np;
    for (uint32_t i = 0; i < np; i++) {
        tcp_conn *c = &x->conns[(size_t)r->peer * x->nconn + part_conn(x, r, i)];
        if (!q_push(r->is_send ? &c->sq : &c->rq, r))
            return weft_diag_code(d, WEFT_ENOMEM);
        x->queued++;
    }
    return WEFT_OK;
}

static uint32_t tcp_lanes(const weft__xport *x)
{
    return x->per_if;
}

static bool tcp_busy(const weft__xport *x)
{
    return x->queued > 0;
}

static void part_done(weft__xport *x, rqueue *q)
{
    weft__xreq *r = q_front(q);
    q_pop(q);
    x->queued--;
    if (--r->parts_left == 0)
        r->complete = true;
}

/* Fails with the cause of notice bytes p (from c's peer): the cause it
 * carries when valid, else the peer's own abort. */
static weft_err note_error(weft__xport *x, tcp_conn *c, const unsigned char *p, weft_diag *d)
{
    weft__cause why = {.kind = get32(p),
                       .rank = get32(p + 4),
                       .pid = get32(p + 8),
                       .witness = get32(p + 12),
                       .detail = get32(p + 16)};
    if (!weft__cause_valid(&why, x->size))
        why = (weft__cause){.kind = WEFT__CAUSE_ABORTED, .rank = c->peer, .witness = x->rank};
    x->cause = why;
    x->has_cause = true;
    return weft__cause_diag(d, "tcp", &why, x->rank);
}

/* A notice waiting whole on c where its next frame starts, read without
 * consuming it: true and its bytes in p. */
static bool peek_note(const tcp_conn *c, unsigned char *p)
{
    if (c->rhdr_done || c->roff)
        return false;
    ssize_t k = recv(c->fd, p, TCP_NOTE_BYTES, MSG_PEEK | MSG_DONTWAIT);
    return k == (ssize_t)TCP_NOTE_BYTES && get32(p) == TCP_NOTE_MAGIC &&
           get64(p + 8) == TCP_NOTE_LEN;
}

static weft_err io_error(weft__xport *x, tcp_conn *c, int err, weft_diag *d)
{
    unsigned char note[TCP_NOTE_BYTES];
    if ((err == 0 || err == ECONNRESET || err == EPIPE) && peek_note(c, note))
        return note_error(x, c, note + TCP_FRAME_HDR, d);
    if (err == 0 || err == ECONNRESET || err == EPIPE) {
        /* Gone without a notice: its process ended. */
        weft__cause why = {.kind = WEFT__CAUSE_DIED, .rank = c->peer, .witness = x->rank};
        x->cause = why;
        x->has_cause = true;
        return weft__cause_diag(d, "tcp", &why, x->rank);
    }
    if (err == ETIMEDOUT || err == EHOSTUNREACH)
        return weft_diag_set(d, WEFT_EPEER, "tcp: lost rank %u: %s", c->peer, strerror(err));
    return weft_diag_set(d, WEFT_EIO, "tcp: connection to rank %u: %s", c->peer, strerror(err));
}

static weft_err do_send(weft__xport *x, tcp_conn *c, bool *moved, weft_diag *d)
{
    while (c->sq.len) {
        weft__xreq *r = q_front(&c->sq);
        size_t off, n;
        conn_range(x, r, c, &off, &n);
        if (c->shdr_done == 0 && c->soff == 0) {
            put32(c->shdr, TCP_FRAME_MAGIC);
            put32(c->shdr + 4, 0);
            put64(c->shdr + 8, n);
        }
        struct iovec iov[2];
        int niov = 0;
        if (c->shdr_done < TCP_FRAME_HDR)
            iov[niov++] = (struct iovec){c->shdr + c->shdr_done, TCP_FRAME_HDR - c->shdr_done};
        if (c->soff < n)
            iov[niov++] = (struct iovec){r->buf + off + c->soff, n - c->soff};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
        ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return WEFT_OK;
            if ((errno == EPIPE || errno == ECONNRESET) && c->rq.len) {
                c->sdead = true; /* the receives read on to the notice (top) */
                return WEFT_OK;
            }
            return io_error(x, c, errno, d);
        }
        *moved = true;
        size_t got = (size_t)k;
        size_t h = TCP_FRAME_HDR - c->shdr_done;
        if (got >= h) {
            c->shdr_done = TCP_FRAME_HDR;
            c->soff += got - h;
        } else {
            c->shdr_done += got;
        }
        if (c->shdr_done == TCP_FRAME_HDR && c->soff == n) {
            c->shdr_done = 0;
            c->soff = 0;
            part_done(x, &c->sq);
        }
    }
    return WEFT_OK;
}

/* Reads into p, returning bytes read; 0 with *err set on EOF/failure, 0 with
 * *err == -1 when nothing is available now. */
static size_t read_some(int fd, void *p, size_t n, int *err)
{
    for (;;) {
        ssize_t k = recv(fd, p, n, 0);
        if (k > 0)
            return (size_t)k;
        if (k == 0) {
            *err = 0;
            return 0;
        }
        if (errno == EINTR)
            continue;
        *err = (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : errno;
        return 0;
    }
}

static weft_err do_recv(weft__xport *x, tcp_conn *c, bool *moved, weft_diag *d)
{
    while (c->rq.len) {
        weft__xreq *r = q_front(&c->rq);
        size_t off, n;
        conn_range(x, r, c, &off, &n);
        int err;
        if (c->rhdr_done < TCP_FRAME_HDR) {
            size_t k = read_some(c->fd, c->rhdr + c->rhdr_done, TCP_FRAME_HDR - c->rhdr_done, &err);
            if (!k)
                return err < 0 ? WEFT_OK : io_error(x, c, err, d);
            *moved = true;
            c->rhdr_done += k;
            if (c->rhdr_done < TCP_FRAME_HDR)
                continue;
            uint64_t flen = get64(c->rhdr + 8);
            if (get32(c->rhdr) == TCP_NOTE_MAGIC && get32(c->rhdr + 4) == 0 && flen == TCP_NOTE_LEN)
                continue; /* a notice: its cause next */
            if (get32(c->rhdr) != TCP_FRAME_MAGIC || get32(c->rhdr + 4) != 0)
                return weft_diag_set(d, WEFT_EPARSE,
                                     "tcp: malformed frame from rank %u on connection %u (bad "
                                     "header)",
                                     c->peer, c->index);
            if (flen != n)
                return weft_diag_set(d, WEFT_EPARSE,
                                     "tcp: rank %u sent a %llu-byte part on connection %u, rank "
                                     "%u expected %zu bytes (message of %zu bytes)",
                                     c->peer, (unsigned long long)flen, c->index, x->rank, n,
                                     r->len);
        }
        if (get32(c->rhdr) == TCP_NOTE_MAGIC) {
            if (c->rhdr_done < TCP_NOTE_BYTES) {
                size_t k =
                    read_some(c->fd, c->rhdr + c->rhdr_done, TCP_NOTE_BYTES - c->rhdr_done, &err);
                if (!k)
                    return err < 0 ? WEFT_OK : io_error(x, c, err, d);
                *moved = true;
                c->rhdr_done += k;
                if (c->rhdr_done < TCP_NOTE_BYTES)
                    continue;
            }
            return note_error(x, c, c->rhdr + TCP_FRAME_HDR, d);
        }
        if (c->roff < n) {
            size_t k;
            if (!r->reduce) {
                k = read_some(c->fd, r->buf + off + c->roff, n - c->roff, &err);
            } else {
                if (!c->bounce && !(c->bounce = weft__malloc(TCP_BOUNCE)))
                    return weft_diag_code(d, WEFT_ENOMEM);
                size_t room = TCP_BOUNCE - c->bounce_have;
                if (room > n - c->roff)
                    room = n - c->roff;
                k = read_some(c->fd, c->bounce + c->bounce_have, room, &err);
            }
            if (!k)
                return err < 0 ? WEFT_OK : io_error(x, c, err, d);
            *moved = true;
            c->roff += k;
            if (r->reduce) {
                c->bounce_have += k;
                size_t whole = c->bounce_have - c->bounce_have % r->esize;
                unsigned char *dst = r->buf + off + (c->roff - c->bounce_have);
                r->reduce(dst, c->bounce, whole / r->esize);
                memmove(c->bounce, c->bounce + whole, c->bounce_have - whole);
                c->bounce_have -= whole;
            }
        }
        if (c->roff == n) {
            c->rhdr_done = 0;
            c->roff = 0;
            part_done(x, &c->rq);
        }
    }
    return WEFT_OK;
}

static weft_err service(weft__xport *x, tcp_conn *c, bool *moved, weft_diag *d)
{
    weft_err e = WEFT_OK;
    if (c->sq.len && !c->sdead)
        e = do_send(x, c, moved, d);
    if (!e && c->rq.len)
        e = do_recv(x, c, moved, d);
    /* Sends that cannot go and nothing more to read first: fail now. */
    if (!e && c->sdead && c->sq.len && !c->rq.len)
        e = io_error(x, c, EPIPE, d);
    return e;
}

static weft_err tcp_progress(weft__xport *x, int64_t wait_ns, bool *moved, weft_diag *d)
{
    bool any = false;
    nfds_t n = 0;
    size_t total = (size_t)x->size * x->nconn;
    for (size_t i = 0; i < total && x->queued; i++) {
        tcp_conn *c = &x->conns[i];
        if (!c->sq.len && !c->rq.len)
            continue;
        weft_err e = service(x, c, &any, d);
        if (e)
            return e;
        if (c->sq.len || c->rq.len) {
            short ev = (short)((c->sq.len && !c->sdead ? POLLOUT : 0) | (c->rq.len ? POLLIN : 0));
            x->pfds[n] = (struct pollfd){.fd = c->fd, .events = ev};
            x->pconn[n++] = c;
        }
    }
    if (any || n == 0 || wait_ns <= 0) {
        *moved = *moved || any;
        return WEFT_OK;
    }
    struct timespec ts = {.tv_sec = wait_ns / 1000000000, .tv_nsec = wait_ns % 1000000000};
    int rc = ppoll(x->pfds, n, &ts, NULL);
    if (rc < 0 && errno != EINTR)
        return weft_diag_set(d, WEFT_EIO, "tcp: poll: %s", strerror(errno));
    for (nfds_t i = 0; rc > 0 && i < n; i++) {
        if (!x->pfds[i].revents)
            continue;
        weft_err e = service(x, x->pconn[i], &any, d);
        if (e)
            return e;
    }
    *moved = *moved || any;
    return WEFT_OK;
}

/* Writes all n bytes of p to fd without waiting; false when the socket
 * does not take them now. */
static bool send_now(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Sends the notice of why on every connection (see the top), once. Does
 * not block. */
static void send_notes(weft__xport *x, const weft__cause *why)
{
    if (x->noted)
        return;
    x->noted = true;
    static const unsigned char zeros[4096];
    unsigned char note[TCP_NOTE_BYTES];
    put32(note, TCP_NOTE_MAGIC);
    put32(note + 4, 0);
    put64(note + 8, TCP_NOTE_LEN);
    put32(note + 16, why->kind);
    put32(note + 20, why->rank);
    put32(note + 24, why->pid);
    put32(note + 28, why->witness);
    put32(note + 32, why->detail);
    for (size_t i = 0; x->conns && i < (size_t)x->size * x->nconn; i++) {
        tcp_conn *c = &x->conns[i];
        if (c->fd < 0)
            continue;
        bool ok = true;
        if (c->shdr_done || c->soff) {
            /* In the middle of a frame: complete it with zeros. */
            weft__xreq *r = q_front(&c->sq);
            size_t off, n;
            conn_range(x, r, c, &off, &n);
            if (c->shdr_done < TCP_FRAME_HDR)
                ok = send_now(c->fd, c->shdr + c->shdr_done, TCP_FRAME_HDR - c->shdr_done);
            size_t left = n - c->soff;
            while (ok && left) {
                size_t k = left < sizeof zeros ? left : sizeof zeros;
                ok = send_now(c->fd, zeros, k);
                left -= k;
            }
        }
        if (ok)
            send_now(c->fd, note, sizeof note);
    }
}

static bool tcp_cause(const weft__xport *x, weft__cause *out)
{
    if (!x->has_cause)
        return false;
    *out = x->cause;
    return true;
}

/* Tells every peer why (send_notes), then shuts the writing side of every
 * connection: peers read the notice, then end of file. The reading side
 * stays open so close can drain it (see "Closing" at the top). */
static void tcp_abort(weft__xport *x, const weft__cause *why)
{
    if (!x)
        return;
    send_notes(x, why);
    for (size_t i = 0; x->conns && i < (size_t)x->size * x->nconn; i++) {
        if (x->conns[i].fd >= 0)
            shutdown(x->conns[i].fd, SHUT_WR);
    }
}

/* True when connection fd is done lingering: end of file or an error on
 * reading (what came is discarded), or every byte sent acknowledged. */
static bool linger_done(int fd)
{
    static unsigned char sink[16384];
    for (;;) {
        ssize_t k = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (k > 0)
            continue;
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return true;
        break;
    }
    int unacked = 0;
    return ioctl(fd, SIOCOUTQ, &unacked) != 0 || unacked == 0;
}

/* Shuts the writing side of every connection and waits until each is done
 * (linger_done), at most TCP_LINGER_NS in all; see "Closing" at the top. */
static void linger(weft__xport *x)
{
    size_t total = (size_t)x->size * x->nconn, n;
    for (size_t i = 0; i < total; i++) {
        if (x->conns[i].fd >= 0)
            shutdown(x->conns[i].fd, SHUT_WR);
    }
    int64_t deadline = weft__now_ns() + TCP_LINGER_NS;
    do {
        n = 0;
        for (size_t i = 0; i < total; i++) {
            int fd = x->conns[i].fd;
            if (fd >= 0 && !linger_done(fd))
                x->pfds[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
        /* Acknowledgements do not wake poll: look again every millisecond. */
        if (n)
            poll(x->pfds, (nfds_t)n, 1);
    } while (n && weft__now_ns() < deadline);
}

const weft__xport_ops weft__xport_tcp = {
    .name = "tcp",
    .open = tcp_open,
    .connect = tcp_connect,
    .ready = tcp_ready,
    .post = tcp_post,
    .lanes = tcp_lanes,
    .busy = tcp_busy,
    .progress = tcp_progress,
    .cause = tcp_cause,
    .abort = tcp_abort,
    .close = tcp_close,
};
