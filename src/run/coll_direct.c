/* The direct allreduce for small buffers (see coll.h).
 *
 * A ring allreduce pays 2(size-1) message latencies, each a wake-up of the
 * next rank; for a few KiB that latency is the whole cost. Here every rank
 * posts its input to every other rank at once (to rank+1, rank+2, ... so
 * that not every rank writes to rank 0 first) and then takes in the
 * contributions in rank order, combining each into recvbuf as it arrives
 * (the transport reduces straight out of its slots): one message latency in
 * all. Every rank computes ((in_0 op in_1) op in_2) ... in the same order,
 * so results are bit-identical across ranks even for floating point.
 *
 * No deadlock: every rank posts all its sends before it waits for anything,
 * and a waiting rank keeps driving its own sends, so every message a rank
 * waits for is eventually delivered whatever order the ranks wait in.
 *
 * In place, contributions are combined into recvbuf while sends may still
 * be reading it (a transport moves a send when the peer's ring has room),
 * so the ranks send from a private copy of their input.
 *
 * Agreement (call_agree.h). A rank publishes its arguments (a control-page
 * record, or on TCP a message to every peer ahead of its data), starts its
 * sends and only then waits for everyone's arguments and compares, before
 * it receives anything: the arguments travel with the data instead of a
 * round trip ahead of it (which cost 0.3-0.6 us per call at 1-16 KiB on 2
 * ranks over shared memory, and doubled the call over TCP). Beyond
 * WEFT__CALL_ALL_MAX ranks on TCP the ranks agree first.
 */
#include <string.h>

#include "base/alloc.h"
#include "run/coll.h"
#include "run/p2p.h"

/* Largest (size-1) * buffer bytes the direct schedule takes: beyond it the
 * ring's lower traffic wins over the direct schedule's single round
 * (measured with bench/run.sh on the development host; docs/run.md). */
#define DIRECT_MAX_BYTES (64u << 10)
/* Sends a stack array holds before the request array goes to the heap. */
#define DIRECT_STACK_REQS 8u

bool weft__allreduce_direct_fits(uint32_t size, size_t bytes)
{
    return size > 1 && bytes <= DIRECT_MAX_BYTES / (size - 1);
}

weft_err weft__allreduce_direct(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                size_t es, weft__reduce_fn fn, weft_diag *d)
{
    uint32_t n = c->size, me = c->rank;
    size_t bytes = count * es;
    const unsigned char *in = sendbuf;
    unsigned char *out = recvbuf, *copy = NULL;
    weft__xreq stack[DIRECT_STACK_REQS], *sends = stack;
    weft__xreq *stack_waits[DIRECT_STACK_REQS], **waits = stack_waits;
    weft_err e = WEFT_ENOMEM;
    if (n - 1 > DIRECT_STACK_REQS) {
        sends = weft__calloc(n - 1, sizeof *sends);
        waits = weft__calloc(n - 1, sizeof *waits);
        if (!sends || !waits) {
            weft_diag_code(d, e);
            goto free_reqs;
        }
    }
    if (in == out) {
        if (!(copy = weft__malloc(bytes))) {
            weft_diag_code(d, e);
            goto free_reqs;
        }
        memcpy(copy, in, bytes);
        in = copy;
    }
    weft__call_early_state agree;
    bool late = weft__call_early(c, &agree, &e, d);
    if (e || (!late && (e = weft__call_agree(c, d))))
        goto free_copy;
    for (uint32_t k = 1; k < n; k++) {
        weft__xreq *s = &sends[k - 1];
        *s = (weft__xreq){
            .peer = (me + k) % n, .is_send = true, .buf = (unsigned char *)in, .len = bytes};
        waits[k - 1] = s;
        if ((e = weft__comm_post(c, s, d)))
            goto free_copy;
    }
    if (late && ((e = weft__comm_kick(c, d)) || (e = weft__call_late(c, &agree, d))))
        goto free_copy;
    for (uint32_t q = 0; q < n; q++) {
        if (q == me) {
            if (q == 0 && in != out)
                memcpy(out, in, bytes);
            else if (q != 0)
                fn(out, in, count);
            continue;
        }
        weft__xreq rr = {.peer = q,
                         .is_send = false,
                         .buf = out,
                         .len = bytes,
                         .reduce = q == 0 ? NULL : fn,
                         .esize = es};
        weft__xreq *w = &rr;
        if ((e = weft__comm_post(c, &rr, d)) || (e = weft__comm_wait(c, &w, 1, d)))
            goto free_copy;
    }
    e = weft__comm_wait(c, waits, n - 1, d);
free_copy:
    weft__free(copy);
free_reqs:
    if (sends != stack) {
        weft__free(sends);
        weft__free(waits);
    }
    return e;
}
