/* Failure causes passed between ranks (see cause.h). */
#include "run/cause.h"

#include <stdio.h>

weft__cause weft__cause_local(uint32_t rank, uint32_t pid, int err)
{
    weft__cause c = {.kind = WEFT__CAUSE_LOCAL,
                     .rank = rank,
                     .pid = pid,
                     .witness = rank,
                     .detail = (uint32_t)err};
    return c;
}

bool weft__cause_valid(const weft__cause *c, uint32_t size)
{
    return c->kind > WEFT__CAUSE_NONE && c->kind < WEFT__CAUSE_KINDS && c->rank < size &&
           c->witness < size;
}

void weft__cause_format(const weft__cause *c, uint32_t self, char *buf, size_t len)
{
    char who[48];
    if (c->pid)
        snprintf(who, sizeof who, "rank %u (pid %u)", c->rank, c->pid);
    else
        snprintf(who, sizeof who, "rank %u", c->rank);
    int n;
    switch (c->kind) {
    case WEFT__CAUSE_DIED:
        n = snprintf(buf, len, "%s died", who);
        break;
    case WEFT__CAUSE_CLOSED:
        n = snprintf(buf, len, "%s closed its communicator", who);
        break;
    case WEFT__CAUSE_STALLED:
        /* The witness's own words (p2p.c), which name it already. */
        snprintf(buf, len, "rank %u waited %u ms for rank %u without progress", c->witness,
                 c->detail, c->rank);
        return;
    case WEFT__CAUSE_LOCAL:
        n = snprintf(buf, len, "%s failed: %s", who, weft_strerror((weft_err)c->detail));
        break;
    default:
        n = snprintf(buf, len, "%s failed (aborted its communicator)", who);
        break;
    }
    if (c->witness != c->rank && c->witness != self && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (reported by rank %u)", c->witness);
}

weft_err weft__cause_diag(weft_diag *d, const char *subsys, const weft__cause *c, uint32_t self)
{
    char line[200];
    weft__cause_format(c, self, line, sizeof line);
    return weft_diag_set(d, WEFT_EPEER, "%s: %s", subsys, line);
}
