/* Barrier and agreement over the bootstrap (weft_comm_barrier,
 * weft_comm_agree in weft/comm.h): small collectives that need no
 * transport; the schedule selection (select.c) checks with them that
 * every rank was configured alike. */
#include "base/alloc.h"
#include "run/clock.h"
#include "run/comm_fail.h"
#include "run/liveness.h"

static weft_err boot_gather(weft_comm *c, const void *in, size_t len, void *out, weft_diag *d)
{
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    weft_err e = c->bops->allgather(c->boot, in, len, out, weft__now_ns() + c->timeout_ns, d);
    if (e)
        return weft__comm_fail(c, e, d);
    return WEFT_OK;
}

weft_err weft_comm_barrier(weft_comm *c, weft_diag *d)
{
    unsigned char one = 1;
    unsigned char *all = weft__malloc(c->size);
    if (!all)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err e = boot_gather(c, &one, 1, all, d);
    weft__free(all);
    return e;
}

weft_err weft_comm_agree(weft_comm *c, const char *what, const void *data, size_t len, weft_diag *d)
{
    uint64_t h = weft__fnv64(WEFT__FNV_INIT, data, len);
    uint64_t *all = weft__calloc(c->size, sizeof *all);
    if (!all)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err e = boot_gather(c, &h, sizeof h, all, d);
    for (uint32_t r = 1; !e && r < c->size; r++) {
        if (all[r] != all[0])
            e = weft_diag_set(d, WEFT_EINVAL,
                              "ranks disagree on %s: rank %u has hash %016llx, rank 0 has %016llx",
                              what, r, (unsigned long long)all[r], (unsigned long long)all[0]);
    }
    weft__free(all);
    return e;
}
