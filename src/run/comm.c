/* Building and tearing down communicators (see weft/comm.h).
 *
 * Setup, after the bootstrap has joined every rank:
 *  1. allgather a card per rank (pid, host identity, the settings that must
 *     agree) and check the settings agree;
 *  2. choose per peer: self, shared memory (same host, unless TCP is forced)
 *     or TCP; open the transports that are needed;
 *  3. allgather the transports' address blobs, connect, barrier, and let the
 *     transports drop their setup resources (listeners, segment names).
 * Every step runs against one deadline: now + the configured timeout.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/comm_internal.h"
#include "run/comm_setup.h"
#include "run/host_cpus.h"
#include "run/liveness.h"
#include "run/select.h"
#include "run/sock.h"
#include "run/transport/shm/leftovers.h"
#include "run/transport/shm/region.h"

#define CARD_MAGIC 0x44524143u /* "CARD" */
#define MAX_IFS 4u

typedef struct card {
    uint32_t magic, rank, size, pid;
    uint64_t host;
    uint32_t transport, tcp_conns, nifs, timeout_ms;
    uint64_t relay_min;
    uint32_t cpus, pad;
} card;

static weft_err check_config(const weft_comm_config *cfg, weft_diag *d)
{
    if (cfg->size < 1 || cfg->size > WEFT_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "comm: size %u is not in 1 .. %u", cfg->size,
                             WEFT_MAX_RANKS);
    if (cfg->rank >= cfg->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: rank %u is not in 0 .. %u", cfg->rank,
                             cfg->size - 1);
    if (cfg->tcp_conns > WEFT_MAX_TCP_CONNS)
        return weft_diag_set(d, WEFT_EINVAL, "comm: %u TCP connections per peer (at most %u)",
                             cfg->tcp_conns, WEFT_MAX_TCP_CONNS);
    if (cfg->cpus > WEFT_MAX_CPUS)
        return weft_diag_set(d, WEFT_EINVAL, "comm: %u CPUs (at most %u)", cfg->cpus,
                             WEFT_MAX_CPUS);
    if ((unsigned)cfg->transport > WEFT_TRANSPORT_TCP)
        return weft_diag_set(d, WEFT_EINVAL, "comm: unknown transport choice %d",
                             (int)cfg->transport);
    return WEFT_OK;
}

/* The interface addresses TCP listens on: the named ones, else the address
 * the bootstrap used, else the first non-loopback interface. */
static weft_err pick_ifaddrs(const weft_comm_config *cfg, struct in_addr local, struct in_addr *out,
                             uint32_t *n, weft_diag *d)
{
    *n = 0;
    const char *s = cfg->ifname;
    if (!s || !*s) {
        out[0] = local.s_addr != htonl(INADDR_ANY) ? local : weft__sock_default_ifaddr();
        *n = 1;
        return WEFT_OK;
    }
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char name[64];
        if (len == 0 || len >= sizeof name || *n == MAX_IFS)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "WEFT_SOCKET_IFNAME: expected 1 .. %u comma-separated interface "
                                 "names, got '%s'",
                                 MAX_IFS, cfg->ifname);
        memcpy(name, s, len);
        name[len] = '\0';
        weft_err e = weft__sock_ifaddr(name, &out[*n], d);
        if (e)
            return e;
        (*n)++;
        s += len + (comma ? 1 : 0);
    }
    return WEFT_OK;
}

static void comm_close_transports(weft_comm *c)
{
    weft__xport_shm.close(c->shm);
    weft__xport_tcp.close(c->tcp);
    c->shm = c->tcp = NULL;
}

void weft_comm_free(weft_comm *c)
{
    if (!c)
        return;
    weft__select_free(c->sel); /* prepared plans point at c */
    c->sel = NULL;
    weft__region_free(c->region);
    comm_close_transports(c);
    if (c->bops)
        c->bops->close(c->boot);
    weft__free(c->via);
    weft__free(c->host_first);
    weft__free(c->scratch);
    weft__free(c);
}

/* The host identity on this rank's card: the machine's, refined by the
 * host the configuration declares (weft_comm_config.host, WEFT_HOST), so
 * that emulated hosts on one machine talk TCP to each other. */
static unsigned long long host_id(const weft_comm_config *cfg)
{
    unsigned long long h = weft__host_id();
    if (cfg->host && *cfg->host) {
        h = weft__fnv64(h, "\0host:", 6);
        h = weft__fnv64(h, cfg->host, strlen(cfg->host));
    }
    return h;
}

/* Steps 1-3 of the setup (see the top of the file). */
static weft_err comm_connect(weft_comm *c, const weft_comm_config *cfg, struct in_addr local,
                             int64_t deadline, weft_diag *d)
{
    weft_err e = WEFT_ENOMEM;
    struct in_addr ifs[MAX_IFS];
    uint32_t nifs = 0;
    card *cards = NULL;
    unsigned char *addrs = NULL;
    bool *serve_shm = NULL, *serve_tcp = NULL;
    uint32_t n = c->size;

    /* Interfaces are named as the namespace of the data sockets sees them;
     * the bootstrap's address means nothing there. */
    int root_ns;
    e = weft__sock_netns_enter(cfg->netns, "WEFT_NETNS", &root_ns, d);
    if (e)
        return e;
    if (cfg->netns && *cfg->netns)
        local.s_addr = htonl(INADDR_ANY);
    e = pick_ifaddrs(cfg, local, ifs, &nifs, d);
    weft_err back = weft__sock_netns_leave(root_ns, e ? NULL : d);
    if (e || (e = back))
        return e;
    uint32_t conns = cfg->tcp_conns ? cfg->tcp_conns : WEFT_DEFAULT_TCP_CONNS;
    card me = {.magic = CARD_MAGIC,
               .rank = c->rank,
               .size = n,
               .pid = (uint32_t)getpid(),
               .host = host_id(cfg),
               .transport = (uint32_t)cfg->transport,
               .tcp_conns = conns,
               .nifs = nifs,
               .timeout_ms = (uint32_t)(c->timeout_ns / 1000000),
               .relay_min = cfg->relay_min,
               .cpus = cfg->cpus ? cfg->cpus : weft__host_cpus_detect()};
    e = WEFT_ENOMEM;
    cards = weft__calloc(n, sizeof *cards);
    addrs = weft__calloc(n, 2 * WEFT__XPORT_ADDR_BYTES);
    serve_shm = weft__calloc(n, sizeof *serve_shm);
    serve_tcp = weft__calloc(n, sizeof *serve_tcp);
    if (!cards || !addrs || !serve_shm || !serve_tcp) {
        weft_diag_code(d, e);
        goto free_scratch;
    }
    e = c->bops->allgather(c->boot, &me, sizeof me, cards, deadline, d);
    if (e)
        goto free_scratch;
    for (uint32_t r = 0; r < n; r++) {
        const card *k = &cards[r];
        const char *what = NULL;
        if (k->magic != CARD_MAGIC || k->rank != r || k->size != n)
            what = "rank and size";
        else if (k->transport != me.transport)
            what = "the transport (WEFT_TRANSPORT)";
        else if (k->tcp_conns != me.tcp_conns)
            what = "TCP connections per peer (WEFT_TCP_CONNS)";
        else if (k->timeout_ms != me.timeout_ms)
            what = "the timeout (WEFT_TIMEOUT)";
        else if (k->relay_min != me.relay_min)
            what = "relaying (WEFT_RELAY)";
        else if (k->host == me.host && k->cpus != me.cpus)
            what = "the CPUs of their host (WEFT_CPUS)";
        if (what) {
            e = weft_diag_set(d, WEFT_EINVAL, "comm: rank %u and rank %u disagree on %s", c->rank,
                              r, what);
            goto free_scratch;
        }
    }
    /* Host groups, alike on every rank: the first rank of each rank's host. */
    for (uint32_t r = 0; r < n; r++) {
        uint32_t f = 0;
        while (cards[f].host != cards[r].host)
            f++;
        c->host_first[r] = f;
    }
    c->relay_min = cfg->relay_min;
    c->host_cpus = me.cpus;
    bool need_shm = false, need_tcp = false;
    for (uint32_t r = 0; r < n; r++) {
        if (r == c->rank) {
            c->via[r] = WEFT__VIA_SELF;
        } else if (cards[r].host == me.host && cfg->transport != WEFT_TRANSPORT_TCP) {
            c->via[r] = WEFT__VIA_SHM;
            serve_shm[r] = need_shm = true;
        } else if (cfg->transport == WEFT_TRANSPORT_SHM) {
            e = weft_diag_set(d, WEFT_EINVAL,
                              "comm: WEFT_TRANSPORT=shm but rank %u is on another host than rank "
                              "%u",
                              r, c->rank);
            goto free_scratch;
        } else {
            c->via[r] = WEFT__VIA_TCP;
            serve_tcp[r] = need_tcp = true;
        }
    }
    unsigned char blob[2 * WEFT__XPORT_ADDR_BYTES];
    memset(blob, 0, sizeof blob);
    weft__xport_params xp = {.rank = c->rank,
                             .size = n,
                             .secret = NULL,
                             .ifaddrs = ifs,
                             .nifaddrs = nifs,
                             .conns = conns,
                             .host_cpus = me.cpus,
                             .netns = cfg->netns};
    unsigned char secret[WEFT_SECRET_BYTES];
    memcpy(secret, cfg->secret, sizeof secret);
    xp.secret = secret;
    if (need_shm && (e = weft__xport_shm.open(&xp, &c->shm, blob, d)))
        goto free_scratch;
    if (need_tcp && (e = weft__xport_tcp.open(&xp, &c->tcp, blob + WEFT__XPORT_ADDR_BYTES, d)))
        goto free_scratch;
    e = c->bops->allgather(c->boot, blob, sizeof blob, addrs, deadline, d);
    if (e)
        goto free_scratch;
    /* Per transport, the blobs of every rank, contiguous. */
    unsigned char *xaddrs = weft__malloc((size_t)n * WEFT__XPORT_ADDR_BYTES);
    if (!xaddrs) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_scratch;
    }
    for (int t = 0; t < 2 && !e; t++) {
        weft__xport *x = t == 0 ? c->shm : c->tcp;
        if (!x)
            continue;
        for (uint32_t r = 0; r < n; r++)
            memcpy(xaddrs + (size_t)r * WEFT__XPORT_ADDR_BYTES,
                   addrs + ((size_t)r * 2 + (size_t)t) * WEFT__XPORT_ADDR_BYTES,
                   WEFT__XPORT_ADDR_BYTES);
        const weft__xport_ops *ops = t == 0 ? &weft__xport_shm : &weft__xport_tcp;
        e = ops->connect(x, t == 0 ? serve_shm : serve_tcp, xaddrs, deadline, d);
    }
    weft__free(xaddrs);
    if (e)
        goto free_scratch;
    unsigned char one = 1, *all = (unsigned char *)cards; /* n >= 1 bytes of scratch */
    e = c->bops->allgather(c->boot, &one, 1, all, deadline, d);
    if (e)
        goto free_scratch;
    if (c->shm)
        weft__xport_shm.ready(c->shm);
    if (c->tcp)
        weft__xport_tcp.ready(c->tcp);
free_scratch:
    weft__free(cards);
    weft__free(addrs);
    weft__free(serve_shm);
    weft__free(serve_tcp);
    return e;
}

weft_err weft__comm_setup(const weft_comm_config *cfg, const weft__boot_ops *bops,
                          const weft__boot_params *bp, weft_comm **out, weft_diag *d)
{
    weft_err e = check_config(cfg, d);
    if (e)
        return e;
    weft_comm *c = weft__calloc(1, sizeof *c);
    if (!c)
        return weft_diag_code(d, WEFT_ENOMEM);
    c->rank = cfg->rank;
    c->size = cfg->size;
    c->timeout_ns =
        (int64_t)(cfg->timeout_ms ? cfg->timeout_ms : WEFT_DEFAULT_TIMEOUT_MS) * 1000000;
    c->via = weft__calloc(c->size, 1);
    c->host_first = weft__calloc(c->size, sizeof *c->host_first);
    if (!c->via || !c->host_first) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto free_comm;
    }
    int64_t deadline = weft__now_ns() + c->timeout_ns;
    weft__boot_params p = *bp;
    p.deadline = deadline;
    weft_comm_config job = *cfg;
    struct in_addr local;
    e = bops->open(&p, &c->boot, job.secret, &local, d);
    if (e)
        goto free_comm;
    job.has_secret = true;
    c->bops = bops;
    memcpy(c->secret, job.secret, sizeof c->secret);
    c->boot_local = local;
    /* Names of weft_comm_alloc's segments: the same on every rank, hard to
     * guess without the secret. */
    c->job_tag = weft__shm_job_tag(job.secret, sizeof job.secret);
    e = comm_connect(c, &job, local, deadline, d);
    if (e)
        goto free_comm;
    /* Control pages for the calls that exchange records (small calls on
     * any buffers, calls on weft_comm_alloc memory): only when every peer
     * is on shared memory, which every rank knows alike. */
    bool all_shm = c->size > 1;
    for (uint32_t q = 0; q < c->size; q++)
        all_shm = all_shm && (q == c->rank || c->via[q] == WEFT__VIA_SHM);
    if (all_shm && (e = weft__region_init(c, d)))
        goto free_comm;
    e = weft__select_init(c, cfg, d);
    if (e)
        goto free_comm;
    *out = c;
    return WEFT_OK;
free_comm:
    weft_comm_free(c);
    return e;
}

weft_err weft_comm_init(const weft_comm_config *cfg, weft_comm **out, weft_diag *d)
{
    if (!cfg)
        return weft_diag_set(d, WEFT_EINVAL, "comm: no configuration");
    weft__boot_params p = {.cfg = cfg};
    return weft__comm_setup(cfg, &weft__boot_tcp, &p, out, d);
}

uint32_t weft_comm_rank(const weft_comm *c)
{
    return c->rank;
}

uint32_t weft_comm_size(const weft_comm *c)
{
    return c->size;
}

bool weft_comm_failed(const weft_comm *c)
{
    return c->failed;
}

const char *weft_comm_transport(const weft_comm *c, uint32_t peer)
{
    if (peer >= c->size)
        return "?";
    static const char *const names[] = {"self", "shm", "tcp"};
    return names[c->via[peer]];
}
