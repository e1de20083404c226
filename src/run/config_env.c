/* The one place weft reads the environment: WEFT_* variables into a
 * weft_comm_config (see weft/comm.h for the list). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "weft/comm.h"

void weft_comm_config_init(weft_comm_config *c)
{
    memset(c, 0, sizeof *c);
    c->rank = 0;
    c->size = 1;
    c->listen_fd = -1;
    c->timeout_ms = WEFT_DEFAULT_TIMEOUT_MS;
    c->transport = WEFT_TRANSPORT_AUTO;
    c->tcp_conns = WEFT_DEFAULT_TCP_CONNS;
}

/* An unsigned decimal integer in [lo, hi]. */
static bool parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Seconds, decimal allowed ("2.5"), into milliseconds; > 0. */
static bool parse_seconds(const char *s, uint32_t *ms)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v > 0) || v > 4.0e6)
        return false;
    double m = v * 1000.0 + 0.5;
    *ms = m < 1 ? 1 : (uint32_t)m;
    return true;
}

/* WEFT_RELAY: off, on, or bytes (a decimal integer with an optional K, M
 * or G, powers of 2), at least 1. */
static bool parse_relay(const char *s, uint64_t *out)
{
    if (strcmp(s, "off") == 0 || strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    if (strcmp(s, "on") == 0) {
        *out = WEFT_RELAY_DEFAULT_MIN;
        return true;
    }
    if (!*s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K')
        shift = 10;
    else if (*end == 'M')
        shift = 20;
    else if (*end == 'G')
        shift = 30;
    if (shift)
        end++;
    if (*end || errno || v == 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

weft_err weft_comm_config_from_env_options(weft_comm_config *c, weft_diag *d)
{
    weft_comm_config cfg = *c;
    unsigned long v;
    const char *s;
    if ((s = getenv("WEFT_SECRET")) != NULL) {
        if (!weft_secret_parse(s, cfg.secret))
            return weft_diag_set(d, WEFT_EINVAL, "WEFT_SECRET: expected %d hex digits",
                                 2 * WEFT_SECRET_BYTES);
        cfg.has_secret = true;
    }
    if ((s = getenv("WEFT_LISTEN_FD")) != NULL) {
        if (!parse_uint(s, 0, 1 << 20, &v))
            return weft_diag_set(d, WEFT_EINVAL, "WEFT_LISTEN_FD: expected a descriptor, got '%s'",
                                 s);
        cfg.listen_fd = (int)v;
    }
    if ((s = getenv("WEFT_TIMEOUT")) != NULL && !parse_seconds(s, &cfg.timeout_ms))
        return weft_diag_set(d, WEFT_EINVAL,
                             "WEFT_TIMEOUT: expected seconds in (0, 4000000], got '%s'", s);
    if ((s = getenv("WEFT_TRANSPORT")) != NULL) {
        if (strcmp(s, "auto") == 0)
            cfg.transport = WEFT_TRANSPORT_AUTO;
        else if (strcmp(s, "shm") == 0)
            cfg.transport = WEFT_TRANSPORT_SHM;
        else if (strcmp(s, "tcp") == 0)
            cfg.transport = WEFT_TRANSPORT_TCP;
        else
            return weft_diag_set(d, WEFT_EINVAL,
                                 "WEFT_TRANSPORT: expected auto, shm or tcp, got '%s'", s);
    }
    cfg.ifname = getenv("WEFT_SOCKET_IFNAME");
    if ((s = getenv("WEFT_TCP_CONNS")) != NULL) {
        if (!parse_uint(s, 1, WEFT_MAX_TCP_CONNS, &v))
            return weft_diag_set(d, WEFT_EINVAL, "WEFT_TCP_CONNS: expected 1 .. %u, got '%s'",
                                 WEFT_MAX_TCP_CONNS, s);
        cfg.tcp_conns = (uint32_t)v;
    }
    if ((s = getenv("WEFT_CPUS")) != NULL) {
        if (!parse_uint(s, 1, WEFT_MAX_CPUS, &v))
            return weft_diag_set(d, WEFT_EINVAL, "WEFT_CPUS: expected 1 .. %u, got '%s'",
                                 WEFT_MAX_CPUS, s);
        cfg.cpus = (uint32_t)v;
    }
    if ((s = getenv("WEFT_RESTART")) != NULL) {
        if (!parse_uint(s, 0, UINT32_MAX, &v))
            return weft_diag_set(d, WEFT_EINVAL, "WEFT_RESTART: expected a count, got '%s'", s);
        cfg.restart = (uint32_t)v;
    }
    if ((s = getenv("WEFT_NETNS")) != NULL && *s != '/')
        return weft_diag_set(d, WEFT_EINVAL,
                             "WEFT_NETNS: expected an absolute path to a network namespace "
                             "(/var/run/netns/NAME), got '%s'",
                             s);
    cfg.netns = s;
    /* Empty means unset, so that a launcher can clear them. */
    if ((s = getenv("WEFT_FABRIC")) != NULL)
        cfg.fabric = *s ? s : NULL;
    if ((s = getenv("WEFT_ALGO")) != NULL)
        cfg.algo = *s ? s : NULL;
    if ((s = getenv("WEFT_PLAN")) != NULL)
        cfg.plan_file = *s ? s : NULL;
    if ((s = getenv("WEFT_TUNING")) != NULL)
        cfg.tuning = *s ? s : NULL;
    if ((s = getenv("WEFT_HOST")) != NULL)
        cfg.host = *s ? s : NULL;
    if ((s = getenv("WEFT_RELAY")) != NULL && !parse_relay(s, &cfg.relay_min))
        return weft_diag_set(d, WEFT_EINVAL,
                             "WEFT_RELAY: expected off, on or a size in bytes (K, M, G allowed), "
                             "got '%s'",
                             s);
    if (cfg.algo && cfg.plan_file)
        return weft_diag_set(d, WEFT_EINVAL, "WEFT_ALGO=%s and WEFT_PLAN=%s: give one, not both",
                             cfg.algo, cfg.plan_file);
    *c = cfg;
    return WEFT_OK;
}

weft_err weft_comm_config_from_env(weft_comm_config *c, weft_diag *d)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    unsigned long v;
    const char *s = getenv("WEFT_SIZE");
    if (!parse_uint(s, 1, WEFT_MAX_RANKS, &v))
        return weft_diag_set(d, WEFT_EINVAL, "WEFT_SIZE: expected 1 .. %u, got '%s'",
                             WEFT_MAX_RANKS, s ? s : "(unset)");
    cfg.size = (uint32_t)v;
    s = getenv("WEFT_RANK");
    if (!parse_uint(s, 0, cfg.size - 1, &v))
        return weft_diag_set(d, WEFT_EINVAL, "WEFT_RANK: expected 0 .. %u, got '%s'", cfg.size - 1,
                             s ? s : "(unset)");
    cfg.rank = (uint32_t)v;
    cfg.addr = getenv("WEFT_ADDR");
    if (!cfg.addr || !*cfg.addr)
        return weft_diag_set(d, WEFT_EINVAL, "WEFT_ADDR: expected host:port, got '%s'",
                             cfg.addr ? cfg.addr : "(unset)");
    weft_err e = weft_comm_config_from_env_options(&cfg, d);
    if (e)
        return e;
    *c = cfg;
    return WEFT_OK;
}

weft_err weft_comm_init_env(weft_comm **out, weft_diag *d)
{
    weft_comm_config cfg;
    weft_err e = weft_comm_config_from_env(&cfg, d);
    if (e)
        return e;
    return weft_comm_init(&cfg, out, d);
}
