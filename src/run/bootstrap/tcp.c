/* The TCP rendezvous bootstrap (see boot.h).
 *
 * Rank 0 accepts size-1 connections, reading their hellos side by side
 * (hello_gate.h). Each must open with a hello (hello.h)
 * of kind BOOT naming a rank in 1 .. size-1 not seen before, the same size,
 * and, when rank 0 was given the job secret, that secret; anything else is
 * refused and logged, and rank 0 keeps waiting for the real ranks until the
 * deadline. Rank 0 then answers every rank with a BOOT_REPLY hello carrying
 * the job secret. When the deadline passes first, rank 0 answers the ranks
 * that joined with a BOOT_MISSING hello (hello.h) naming the first rank
 * that did not join, how many are missing and how long it waited, so every
 * rank says "rank R did not join within T ms" (an end of file without an
 * answer means rank 0 refused the hello: wrong secret, rank or size). Allgather frames are an
 * 8-byte little-endian length and the bytes; rank 0 checks each length before reading the bytes.
 */
#include <arpa/inet.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/bootstrap/boot.h"
#include "run/clock.h"
#include "run/hello.h"
#include "run/hello_gate.h"
#include "run/sock.h"
#include "weft/log.h"

struct weft__boot {
    uint32_t rank, size;
    /* rank 0: fds[r] is rank r's connection (fds[0] unused); others:
     * fds[0] is the connection to rank 0. -1 when closed. */
    int *fds;
    int own_listen_fd; /* a listener this bootstrap made; -1 otherwise */
};

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

static void boot_close(weft__boot *b)
{
    if (!b)
        return;
    uint32_t n = b->rank == 0 ? b->size : 1;
    for (uint32_t i = 0; b->fds && i < n; i++) {
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    }
    if (b->own_listen_fd >= 0)
        close(b->own_listen_fd);
    weft__free(b->fds);
    weft__free(b);
}

static const char *boot_check(void *arg, uint32_t li, const weft__hello *h)
{
    const weft__boot *b = arg;
    (void)li;
    if (h->size != b->size)
        return "different job size";
    if (h->rank == 0 || h->rank >= b->size)
        return "rank out of range";
    if (b->fds[h->rank] >= 0)
        return "rank already joined";
    return NULL;
}

static uint32_t timeout_ms(const weft_comm_config *cfg)
{
    return cfg->timeout_ms ? cfg->timeout_ms : WEFT_DEFAULT_TIMEOUT_MS;
}

/* Rank 0, the deadline passed: tells every rank that joined which rank did
 * not (BOOT_MISSING, hello.h), each without waiting more than 100 ms. */
static void tell_missing(const weft__boot *b, uint32_t first, uint32_t missing, uint32_t ms)
{
    weft__hello h = {
        .kind = WEFT__HELLO_BOOT_MISSING, .rank = first, .size = b->size, .index = missing};
    for (int i = 0; i < 4; i++)
        h.secret[i] = (unsigned char)(ms >> (8 * i));
    unsigned char buf[WEFT__HELLO_BYTES];
    weft__hello_encode(&h, buf);
    for (uint32_t r = 1; r < b->size; r++) {
        if (b->fds[r] >= 0)
            weft__sock_write_all(b->fds[r], buf, sizeof buf, weft__now_ns() + 100000000, NULL);
    }
}

/* Rank 0: accepts until every rank has joined, reading the hellos of all
 * pending connections side by side (hello_gate.h). */
static weft_err root_accept(weft__boot *b, const weft_comm_config *cfg, int lfd, int64_t deadline,
                            weft_diag *d)
{
    weft__hello_gate g;
    weft_err e = weft__hello_gate_init(&g, &lfd, 1, WEFT__HELLO_BOOT,
                                       cfg->has_secret ? cfg->secret : NULL, "bootstrap:", d);
    if (e)
        return e;
    uint32_t joined = 0;
    while (joined + 1 < b->size) {
        int fd;
        uint32_t li;
        weft__hello h;
        e = weft__hello_gate_next(&g, boot_check, b, deadline, &fd, &h, &li, d);
        if (e == WEFT_ETIMEDOUT) {
            char note[160];
            weft__hello_gate_note(&g, note, sizeof note);
            uint32_t first = 1;
            while (b->fds[first] >= 0)
                first++;
            uint32_t missing = b->size - 1 - joined;
            tell_missing(b, first, missing, timeout_ms(cfg));
            e = weft_diag_set(d, e,
                              "bootstrap: rank %u did not join within %u ms (%u of %u ranks "
                              "joined)%s",
                              first, timeout_ms(cfg), joined + 1, b->size, note);
        }
        if (e)
            break;
        b->fds[h.rank] = fd;
        joined++;
    }
    weft__hello_gate_fini(&g);
    return e;
}

static weft_err boot_open(const weft__boot_params *p, weft__boot **out,
                          unsigned char secret[WEFT_SECRET_BYTES], struct in_addr *local,
                          weft_diag *d)
{
    const weft_comm_config *cfg = p->cfg;
    weft_err e = WEFT_ENOMEM;
    weft__boot *b = weft__calloc(1, sizeof *b);
    if (!b)
        return weft_diag_code(d, WEFT_ENOMEM);
    b->rank = cfg->rank;
    b->size = cfg->size;
    b->own_listen_fd = -1;
    uint32_t nfds = b->rank == 0 ? b->size : 1;
    b->fds = weft__malloc(nfds * sizeof *b->fds);
    if (!b->fds) {
        weft_diag_code(d, e);
        goto free_boot;
    }
    for (uint32_t i = 0; i < nfds; i++)
        b->fds[i] = -1;

    struct sockaddr_in at;
    memset(&at, 0, sizeof at);
    if (cfg->listen_fd < 0 || b->rank != 0) {
        e = weft__sock_parse_addr(cfg->addr, "rendezvous address", &at, d);
        if (e)
            goto free_boot;
    }
    unsigned char job[WEFT_SECRET_BYTES];
    unsigned char buf[WEFT__HELLO_BYTES];
    weft__hello h = {.size = b->size, .rank = b->rank};
    struct sockaddr_in me;
    socklen_t mlen = sizeof me;
    if (b->rank == 0) {
        int lfd = cfg->listen_fd;
        if (lfd >= 0) {
            e = weft__sock_prepare_fd(lfd, d);
        } else {
            struct sockaddr_in bound;
            e = weft__sock_listen(&at, &b->own_listen_fd, &bound, d);
            lfd = b->own_listen_fd;
        }
        if (e)
            goto free_boot;
        e = root_accept(b, cfg, lfd, p->deadline, d);
        if (e)
            goto free_boot;
        if (b->own_listen_fd >= 0) {
            close(b->own_listen_fd);
            b->own_listen_fd = -1;
        }
        if (cfg->has_secret) {
            memcpy(job, cfg->secret, sizeof job);
        } else if (weft_secret_generate(job)) {
            e = weft_diag_set(d, WEFT_EIO, "bootstrap: cannot draw a random job secret");
            goto free_boot;
        }
        h.kind = WEFT__HELLO_BOOT_REPLY;
        memcpy(h.secret, job, sizeof job);
        weft__hello_encode(&h, buf);
        local->s_addr = htonl(INADDR_LOOPBACK);
        for (uint32_t r = 1; r < b->size; r++) {
            e = weft__sock_write_all(b->fds[r], buf, sizeof buf, p->deadline, d);
            if (e) {
                weft_diag_set(d, WEFT_EPEER, "bootstrap: lost rank %u while answering it", r);
                goto free_boot;
            }
            if (r == 1 && getsockname(b->fds[r], (struct sockaddr *)&me, &mlen) == 0)
                *local = me.sin_addr;
        }
    } else {
        e = weft__sock_connect(&at, p->deadline, &b->fds[0], d);
        if (e)
            goto free_boot;
        h.kind = WEFT__HELLO_BOOT;
        if (cfg->has_secret)
            memcpy(h.secret, cfg->secret, WEFT_SECRET_BYTES);
        weft__hello_encode(&h, buf);
        e = weft__sock_write_all(b->fds[0], buf, sizeof buf, p->deadline, d);
        if (!e)
            e = weft__sock_read_all(b->fds[0], buf, sizeof buf, p->deadline, d);
        if (e == WEFT_ETIMEDOUT) {
            /* Rank 0 answers once every rank has joined, or says which did
             * not when its own deadline passes; neither came in time. */
            e = weft_diag_set(d, e,
                              "bootstrap: rank 0 at %s did not answer rank %u within %u ms (the "
                              "job did not form: a rank did not join?)",
                              cfg->addr, b->rank, timeout_ms(cfg));
            goto free_boot;
        }
        if (e) {
            e = weft_diag_set(d, WEFT_EPEER,
                              "bootstrap: rank 0 at %s did not let rank %u join (refused: wrong "
                              "secret, rank or size?)",
                              cfg->addr, b->rank);
            goto free_boot;
        }
        const char *why;
        weft__hello reply;
        if (weft__hello_decode(buf, WEFT__HELLO_BOOT_MISSING, NULL, &reply, &why)) {
            uint32_t ms = 0;
            for (int i = 3; i >= 0; i--)
                ms = ms << 8 | reply.secret[i];
            e = weft_diag_set(d, WEFT_ETIMEDOUT,
                              "bootstrap: the job did not form: rank %u did not join within %u "
                              "ms (rank 0 at %s waited; %u of %u ranks missing)",
                              reply.rank, ms, cfg->addr, reply.index, b->size);
            goto free_boot;
        }
        if (!weft__hello_decode(buf, WEFT__HELLO_BOOT_REPLY, cfg->has_secret ? cfg->secret : NULL,
                                &reply, &why)) {
            e = weft_diag_set(d, WEFT_EAUTH, "bootstrap: rank 0 at %s answered badly: %s",
                              cfg->addr, why);
            goto free_boot;
        }
        memcpy(job, reply.secret, sizeof job);
        local->s_addr = htonl(INADDR_ANY);
        if (getsockname(b->fds[0], (struct sockaddr *)&me, &mlen) == 0)
            *local = me.sin_addr;
    }
    memcpy(secret, job, sizeof job);
    *out = b;
    return WEFT_OK;
free_boot:
    boot_close(b);
    return e;
}

static weft_err boot_allgather(weft__boot *b, const void *in, size_t len, void *out,
                               int64_t deadline, weft_diag *d)
{
    if (len > WEFT__BOOT_MAX_BYTES)
        return weft_diag_set(d, WEFT_ELIMIT, "bootstrap: %zu-byte message exceeds the limit", len);
    unsigned char hdr[8];
    unsigned char *o = out;
    weft_err e;
    if (b->rank != 0) {
        put64(hdr, len);
        e = weft__sock_write_all(b->fds[0], hdr, 8, deadline, d);
        if (!e)
            e = weft__sock_write_all(b->fds[0], in, len, deadline, d);
        if (!e)
            e = weft__sock_read_all(b->fds[0], hdr, 8, deadline, d);
        if (e)
            return weft_diag_set(d, e == WEFT_ETIMEDOUT ? e : WEFT_EPEER,
                                 "bootstrap: lost the connection to rank 0");
        if (get64(hdr) != (uint64_t)len * b->size)
            return weft_diag_set(d, WEFT_EPARSE, "bootstrap: rank 0 sent %llu bytes, expected %llu",
                                 (unsigned long long)get64(hdr), (unsigned long long)len * b->size);
        e = weft__sock_read_all(b->fds[0], o, len * b->size, deadline, d);
        if (e)
            return weft_diag_set(d, e == WEFT_ETIMEDOUT ? e : WEFT_EPEER,
                                 "bootstrap: lost the connection to rank 0");
        return WEFT_OK;
    }
    memcpy(o, in, len);
    for (uint32_t r = 1; r < b->size; r++) {
        e = weft__sock_read_all(b->fds[r], hdr, 8, deadline, d);
        if (!e && get64(hdr) != len)
            return weft_diag_set(d, WEFT_EPARSE, "bootstrap: rank %u sent %llu bytes, expected %zu",
                                 r, (unsigned long long)get64(hdr), len);
        if (!e)
            e = weft__sock_read_all(b->fds[r], o + (size_t)r * len, len, deadline, d);
        if (e)
            return weft_diag_set(d, e == WEFT_ETIMEDOUT ? e : WEFT_EPEER, "bootstrap: lost rank %u",
                                 r);
    }
    put64(hdr, (uint64_t)len * b->size);
    for (uint32_t r = 1; r < b->size; r++) {
        e = weft__sock_write_all(b->fds[r], hdr, 8, deadline, d);
        if (!e)
            e = weft__sock_write_all(b->fds[r], o, len * b->size, deadline, d);
        if (e)
            return weft_diag_set(d, e == WEFT_ETIMEDOUT ? e : WEFT_EPEER, "bootstrap: lost rank %u",
                                 r);
    }
    return WEFT_OK;
}

const weft__boot_ops weft__boot_tcp = {
    .name = "tcp",
    .open = boot_open,
    .allgather = boot_allgather,
    .close = boot_close,
};
