/* Accepting connections that must open with a hello (hello.h), many at once.
 *
 * A listener that took one connection at a time and waited for its hello
 * let any local process that knows the port hold a job back: each silent
 * connection cost the whole hello wait, and 20 of them outlasted the
 * setup deadline. The gate instead polls every listener and every pending
 * connection together; each pending connection has its own short deadline
 * (WEFT__HELLO_WAIT_NS from its accept), and at most
 * WEFT__HELLO_GATE_PENDING wait at once (more stay in the kernel's backlog,
 * in arrival order, until a slot frees; none is dropped to make room). A
 * real peer's hello is read as soon as it arrives, whatever strangers are
 * connected, and no byte beyond the 64 of the hello is read.
 *
 * Every refused or dropped connection is counted, so a job that still
 * cannot form can say why (weft__hello_gate_note), and logged, within a
 * limit so that a flood of strangers cannot flood the log: the first
 * WEFT__HELLO_GATE_LOG_FIRST refusals of each peer address (IPv4, any port;
 * WEFT__HELLO_GATE_LOG_PEERS addresses are remembered, later ones are held
 * back from their first) get one line each (who refused, the peer's
 * address and port, why); the others are held back and summed up in one
 * line at most every log_interval_ns (WEFT__HELLO_GATE_LOG_INTERVAL_NS),
 * written when a refusal comes after the interval and at fini: "<who>
 * refused N more connections not logged one by one (the last from A:P:
 * why)".
 *
 * Not thread-safe; the gate borrows the listeners and owns the pending
 * connections until it hands one out.
 */
#ifndef WEFT_RUN_HELLO_GATE_H
#define WEFT_RUN_HELLO_GATE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "run/hello.h"
#include "weft/err.h"

/* Most connections that wait for their hello at once. */
#define WEFT__HELLO_GATE_PENDING 128u
/* Refusals logged one by one per peer address, addresses remembered, and
 * the shortest time between two summary lines (see the top). Chosen, not
 * measured: enough lines to see what a stranger does, and a log a flood
 * grows by one line per 10 s. */
#define WEFT__HELLO_GATE_LOG_FIRST 10u
#define WEFT__HELLO_GATE_LOG_PEERS 16u
#define WEFT__HELLO_GATE_LOG_INTERVAL_NS (10 * 1000000000LL)

/* The caller's checks of a hello that decoded (magic, kind, secret): NULL
 * to take the connection, else the reason to refuse it. li is the index of
 * the listener that accepted it. */
typedef const char *(*weft__hello_check)(void *arg, uint32_t li, const weft__hello *h);

typedef struct weft__hello_pending weft__hello_pending;

typedef struct weft__hello_gate {
    const int *lfds; /* borrowed, non-blocking */
    uint32_t nl;
    uint32_t kind;
    const unsigned char *secret; /* borrowed; NULL: any secret */
    char who[48];                /* "bootstrap:", "tcp: rank 3" in log lines */
    weft__hello_pending *p;      /* WEFT__HELLO_GATE_PENDING slots, np used */
    uint32_t np;
    struct pollfd *pfds; /* nl + WEFT__HELLO_GATE_PENDING */
    uint32_t refused;    /* connections refused or dropped so far */
    char last_peer[32];
    const char *last_why;
    /* The log limit (see the top): lines per remembered address, refusals
     * held back since the last summary and when that was. */
    uint32_t log_ip[WEFT__HELLO_GATE_LOG_PEERS], log_lines[WEFT__HELLO_GATE_LOG_PEERS];
    uint32_t log_npeers, held;
    int64_t log_interval_ns, summary_at;
} weft__hello_gate;

/* Prepares g for nl (1 .. 4) listeners. `who` names the accepting side in
 * log lines. */
weft_err weft__hello_gate_init(weft__hello_gate *g, const int *lfds, uint32_t nl, uint32_t kind,
                               const unsigned char *secret, const char *who, weft_diag *d);
/* Closes the pending connections, writes the summary of refusals held
 * back, if any (the log limit, see the top), and frees; safe on a zeroed
 * gate. */
void weft__hello_gate_fini(weft__hello_gate *g);

/* Blocks until a connection presents a hello that decodes (kind, secret)
 * and passes check, or the deadline passes (WEFT_ETIMEDOUT, "hello: timed
 * out" in d: callers say what they waited for and add the note). On
 * success the caller owns *fd (non-blocking, TCP_NODELAY), *h is its hello
 * and *li the listener it came through. WEFT_EIO when poll or accept fail. */
weft_err weft__hello_gate_next(weft__hello_gate *g, weft__hello_check check, void *arg,
                               int64_t deadline, int *fd, weft__hello *h, uint32_t *li,
                               weft_diag *d);

/* "; N connections without a valid hello, the last from A:P (why)" for the
 * connections refused, dropped or still waiting, or "" when there were
 * none. Always NUL-terminates (size > 0). */
void weft__hello_gate_note(const weft__hello_gate *g, char *buf, size_t size);

#endif
