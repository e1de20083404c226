/* MSCCL export, the XML half: the steps msccl_export.c assigned to
 * threadblocks become the <algo> document, in memory (a failure writes
 * nothing). It checks the profile's limits on steps per threadblock and
 * threadblocks per channel, numbers the threadblocks of each rank, and marks
 * the steps others wait for (hasdep). Time O(steps + threadblocks^2 per
 * rank). See docs/msccl.md for the mapping. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/msccl_internal.h"
#include "plan/plan_internal.h"

#define NONE UINT32_MAX

static void put(xout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(xout *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || weft__grow((void **)&o->buf, &o->cap, o->len + (size_t)n + 1, 1)) {
        o->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
}

weft_err weft__msccl_write_doc(xctx *x, const weft_msccl_opts *opts, xout *out)
{
    const weft_plan_info *in = x->info;
    uint32_t n = in->nranks;
    size_t nt = x->nkeys;
    weft_err e = WEFT_OK;
    /* Steps of each threadblock in order, and each step's index there. */
    uint32_t *tb_start = weft__calloc(nt + 1, sizeof *tb_start);
    uint32_t *by_tb = weft__malloc((x->nsteps ? x->nsteps : 1) * sizeof *by_tb);
    uint32_t *pos = weft__malloc((x->nsteps ? x->nsteps : 1) * sizeof *pos);
    uint32_t *tb_id = weft__malloc((nt ? nt : 1) * sizeof *tb_id);
    if (!tb_start || !by_tb || !pos || !tb_id) {
        e = weft_diag_code(x->d, WEFT_ENOMEM);
        goto free_all;
    }
    for (size_t i = 0; i < x->nsteps; i++)
        tb_start[x->steps[i].tb + 1]++;
    for (size_t t = 0; t < nt; t++)
        tb_start[t + 1] += tb_start[t];
    {
        uint32_t *fill = weft__malloc((nt ? nt : 1) * sizeof *fill);
        if (!fill) {
            e = weft_diag_code(x->d, WEFT_ENOMEM);
            goto free_all;
        }
        memcpy(fill, tb_start, nt * sizeof *fill);
        for (size_t i = 0; i < x->nsteps; i++) {
            uint32_t t = x->steps[i].tb;
            pos[i] = fill[t] - tb_start[t];
            by_tb[fill[t]++] = (uint32_t)i;
        }
        weft__free(fill);
    }
    uint32_t max_steps = weft_msccl_max_steps(opts->profile);
    uint32_t nchan = 0;
    for (size_t t = 0; t < nt; t++) {
        const xk *k = &x->keys[t];
        uint32_t count = tb_start[t + 1] - tb_start[t];
        if (count > max_steps) {
            char what[64];
            if (k->kind == TB_LOCAL)
                snprintf(what, sizeof what, "local steps");
            else if (x->pair_of[t] != NONE)
                snprintf(what, sizeof what, "sends to rank %u and receives from rank %u", k->peer,
                         x->keys[x->pair_of[t]].peer);
            else
                snprintf(what, sizeof what, "%s rank %u",
                         k->kind == TB_SEND ? "sends to" : "receives from", k->peer);
            e = weft_diag_set(x->d, WEFT_ELIMIT,
                              "rank %u threadblock for %s on channel %u has %u steps; the %s "
                              "profile allows %u per threadblock (MSCCL_MAX_NUM_STEPS)",
                              k->rank, what, k->chan, count, weft_msccl_profile_name(opts->profile),
                              max_steps);
            goto free_all;
        }
        if (k->chan + 1 > nchan)
            nchan = k->chan + 1;
    }
    /* Threadblock ids: 0.. per rank in key order; at most 32 per channel and
     * the profile's number per GPU. */
    for (size_t t = 0, first = 0, id = 0; t < nt; t++) {
        if (x->keys[t].rank != x->keys[first].rank)
            first = t, id = 0;
        tb_id[t] = NONE;
        if (x->alias[t] != t)
            continue; /* merged into its pair's threadblock */
        if (id >= weft__msccl_max_tbs(opts->profile)) {
            e = weft_diag_set(x->d, WEFT_ELIMIT,
                              "rank %u needs more than %u threadblocks; the %s profile allows %u "
                              "per GPU (MSCCL_MAX_NUM_THREAD_BLOCKS)",
                              x->keys[t].rank, weft__msccl_max_tbs(opts->profile),
                              weft_msccl_profile_name(opts->profile),
                              weft__msccl_max_tbs(opts->profile));
            goto free_all;
        }
        tb_id[t] = (uint32_t)id++;
        uint32_t same_chan = 0;
        for (size_t u = first; u <= t; u++)
            same_chan += x->alias[u] == u && x->keys[u].chan == x->keys[t].chan;
        if (same_chan > WEFT_MSCCL_MAX_TBS_PER_CHANNEL) {
            e = weft_diag_set(x->d, WEFT_ELIMIT,
                              "rank %u needs more than %u threadblocks on channel %u "
                              "(MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL)",
                              x->keys[t].rank, WEFT_MSCCL_MAX_TBS_PER_CHANNEL, x->keys[t].chan);
            goto free_all;
        }
    }
    for (size_t i = 0; i < x->nsteps; i++)
        if (x->steps[i].dep != NONE)
            x->steps[x->steps[i].dep].hasdep = true;

    bool ag = in->coll == WEFT_COLL_ALLGATHER;
    uint32_t nin = weft_plan_buf_slots(x->p, WEFT_BUF_IN);
    uint32_t nout = weft_plan_buf_slots(x->p, WEFT_BUF_OUT);
    if (in->inplace) {
        nin = ag ? 0 : nin;
        nout = ag ? nout : 0;
    }
    uint64_t per_loop = weft_plan_size_chunks(x->p);
    if (in->coll == WEFT_COLL_ALLTOALL)
        per_loop = nin > nout ? nin : nout;
    char name[64];
    snprintf(name, sizeof name, "weft_%s", weft_coll_name(in->coll));
    put(out,
        "<algo name=\"%s\" proto=\"%s\" nchannels=\"%u\" nchunksperloop=\"%llu\" ngpus=\"%u\" "
        "coll=\"%s\" inplace=\"%d\" outofplace=\"%d\" minBytes=\"%llu\" maxBytes=\"%llu\"",
        opts->name ? opts->name : name, opts->proto ? opts->proto : "Simple", nchan ? nchan : 1,
        (unsigned long long)per_loop, n, weft__msccl_coll_name(in->coll, opts->profile),
        in->inplace ? 1 : 0, in->inplace ? 0 : 1, (unsigned long long)opts->min_bytes,
        (unsigned long long)opts->max_bytes);
    if (weft_coll_has_root(in->coll))
        put(out, " root=\"%u\"", in->root.v);
    put(out, ">\n");
    size_t t = 0;
    for (uint32_t r = 0; r < n; r++) {
        put(out, "  <gpu id=\"%u\" i_chunks=\"%u\" o_chunks=\"%u\" s_chunks=\"%u\">\n", r, nin,
            nout, in->scratch);
        for (; t < nt && x->keys[t].rank == r; t++) {
            if (x->alias[t] != t)
                continue;
            const xk *k = &x->keys[t];
            int send = k->kind == TB_SEND ? (int)k->peer : -1;
            int recv = k->kind == TB_RECV      ? (int)k->peer
                       : x->pair_of[t] != NONE ? (int)x->keys[x->pair_of[t]].peer
                                               : -1;
            put(out, "    <tb id=\"%u\" send=\"%d\" recv=\"%d\" chan=\"%u\">\n", tb_id[t], send,
                recv, k->chan);
            for (uint32_t j = tb_start[t]; j < tb_start[t + 1]; j++) {
                const xstep *s = &x->steps[by_tb[j]];
                long long depid = -1, deps = -1;
                if (s->dep != NONE) {
                    depid = tb_id[x->steps[s->dep].tb];
                    deps = pos[s->dep];
                }
                put(out,
                    "      <step s=\"%u\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%lld\" "
                    "dstbuf=\"%c\" dstoff=\"%lld\" cnt=\"%u\" depid=\"%lld\" deps=\"%lld\" "
                    "hasdep=\"%d\"/>\n",
                    j - tb_start[t], weft__msccl_step_names[s->type], s->srcbuf,
                    (long long)s->srcoff, s->dstbuf, (long long)s->dstoff, s->cnt, depid, deps,
                    s->hasdep ? 1 : 0);
            }
            put(out, "    </tb>\n");
        }
        put(out, "  </gpu>\n");
    }
    put(out, "</algo>\n");
    if (out->oom)
        e = weft_diag_code(x->d, WEFT_ENOMEM);
free_all:
    weft__free(tb_id);
    weft__free(pos);
    weft__free(by_tb);
    weft__free(tb_start);
    return e;
}
