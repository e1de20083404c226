/* A bootstrap that rides on another communicator's (see boot.h): its
 * allgathers are the parent's, so a second communicator of the same ranks
 * forms without a second rendezvous. Collective like any bootstrap: every
 * rank opens it on its parent in the same order. Closing it leaves the
 * parent's bootstrap open; a parent that failed (its bootstrap dropped,
 * comm_fail.c) makes every allgather WEFT_EPEER. */
#include <string.h>

#include "base/alloc.h"
#include "run/bootstrap/boot.h"
#include "run/comm_internal.h"

struct weft__boot {
    weft_comm *parent;
};

static void sub_close(weft__boot *b)
{
    weft__free(b);
}

static weft_err sub_open(const weft__boot_params *p, weft__boot **out,
                         unsigned char secret[WEFT_SECRET_BYTES], struct in_addr *local,
                         weft_diag *d)
{
    weft_comm *parent = p->parent;
    if (!parent || parent->failed || !parent->boot)
        return weft_diag_set(d, WEFT_EPEER, "bootstrap: the communicator to form on has failed");
    if (p->cfg->rank != parent->rank || p->cfg->size != parent->size)
        return weft_diag_set(d, WEFT_EINVAL,
                             "bootstrap: rank %u of %u cannot form on rank %u of %u", p->cfg->rank,
                             p->cfg->size, parent->rank, parent->size);
    weft__boot *b = weft__calloc(1, sizeof *b);
    if (!b)
        return weft_diag_code(d, WEFT_ENOMEM);
    b->parent = parent;
    memcpy(secret, parent->secret, WEFT_SECRET_BYTES);
    *local = parent->boot_local;
    *out = b;
    return WEFT_OK;
}

static weft_err sub_allgather(weft__boot *b, const void *in, size_t len, void *out,
                              int64_t deadline, weft_diag *d)
{
    weft_comm *p = b->parent;
    if (p->failed || !p->boot)
        return weft_diag_set(d, WEFT_EPEER, "bootstrap: the communicator formed on failed: %s",
                             p->fail_msg);
    return p->bops->allgather(p->boot, in, len, out, deadline, d);
}

const weft__boot_ops weft__boot_sub = {
    .name = "sub",
    .open = sub_open,
    .allgather = sub_allgather,
    .close = sub_close,
};
