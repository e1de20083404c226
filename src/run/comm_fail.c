/* Failing a communicator (comm_fail.h): the first failure is kept, told to
 * the peers and repeated by later calls. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/comm_fail.h"

/* The peer failure a transport saw when it failed (xport.h `cause`). */
static bool transport_cause(const weft_comm *c, weft__cause *out)
{
    return (c->shm && weft__xport_shm.cause && weft__xport_shm.cause(c->shm, out)) ||
           (c->tcp && weft__xport_tcp.cause && weft__xport_tcp.cause(c->tcp, out));
}

weft_err weft__comm_fail(weft_comm *c, weft_err err, weft_diag *d)
{
    return weft__comm_fail_cause(c, err, NULL, d);
}

weft_err weft__comm_fail_cause(weft_comm *c, weft_err err, const weft__cause *why, weft_diag *d)
{
    if (!c->failed) {
        c->failed = true;
        const char *text = d && d->msg[0] ? d->msg : weft_strerror(err);
        size_t len = strlen(text);
        if (len >= sizeof c->fail_msg)
            len = sizeof c->fail_msg - 1;
        memcpy(c->fail_msg, text, len);
        c->fail_msg[len] = '\0';
        /* Only a transport that failed records a cause, and the first
         * failure of a transport fails the communicator: a cause found is
         * this failure's. */
        weft__cause cause;
        if (why)
            cause = *why;
        else if (!transport_cause(c, &cause))
            cause = weft__cause_local(c->rank, (uint32_t)getpid(), err);
        if (c->region)
            c->region_abort(c->region, &cause);
        if (c->shm)
            weft__xport_shm.abort(c->shm, &cause);
        if (c->tcp)
            weft__xport_tcp.abort(c->tcp, &cause);
        /* Dropping the bootstrap ends peers' bootstrap waits too (every
         * later use looks at c->failed first). */
        if (!c->bops->keep_on_fail) {
            c->bops->close(c->boot);
            c->boot = NULL;
        }
    }
    return err;
}

weft_err weft__comm_fail_oom(weft_comm *c, weft_err e, const char *what, weft_diag *d)
{
    if (e != WEFT_ENOMEM || c->size < 2)
        return e;
    char why[WEFT_DIAG_MSG_SIZE] = "";
    if (d && strcmp(d->msg, weft_strerror(WEFT_ENOMEM)) != 0)
        snprintf(why, sizeof why, ": %.4000s", d->msg);
    weft_diag_set(d, WEFT_ENOMEM, "comm: rank %u: out of memory in %s%s", c->rank, what, why);
    return weft__comm_fail(c, WEFT_ENOMEM, d);
}
