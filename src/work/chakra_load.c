/* Loading Chakra execution traces for weft_chakra_run (weft/work.h,
 * weft_chakra_load and weft_chakra_parse): each rank's file decoded
 * (chakra.c), its nodes checked and their dependencies resolved to indices.
 * File order: chakra_load < chakra_trace < chakra_run (work/chakra_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"
#include "base/heap.h"
#include "work/chakra_int.h"

typedef struct ck_id {
    uint64_t id;
    uint32_t idx;
} ck_id;

static void rank_fini(ck_rank *r)
{
    weft__free(r->file);
    weft_ck_free(&r->t);
    weft__free(r->dep);
    weft__free(r->dep_off);
}

void weft_chakra_free(weft_chakra *w)
{
    if (!w)
        return;
    for (uint32_t i = 0; i < w->n; i++)
        rank_fini(&w->r[i]);
    weft__free(w->r);
    weft__free(w);
}

uint64_t weft_chakra_nodes(const weft_chakra *w)
{
    return w->nodes;
}

/* Order of ids by (id, index): qsort's convention, for weft__heapsort
 * (in place: no copy of an array of up to 2^24 records). */
static int id_cmp(const void *a, const void *b)
{
    const ck_id *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int weft__ck_coll_of(uint64_t ct)
{
    switch (ct) {
    case WEFT_CK_ALL_REDUCE:
        return WEFT_COLL_ALLREDUCE;
    case WEFT_CK_ALL_GATHER:
        return WEFT_COLL_ALLGATHER;
    case WEFT_CK_REDUCE_SCATTER:
    case WEFT_CK_REDUCE_SCATTER_BLOCK:
        return WEFT_COLL_REDUCESCATTER;
    case WEFT_CK_ALL_TO_ALL:
        return WEFT_COLL_ALLTOALL;
    case WEFT_CK_BROADCAST:
        return WEFT_COLL_BROADCAST;
    case WEFT_CK_BARRIER:
        return -1;
    default:
        return -2;
    }
}

const char *weft__ck_coll_name(uint64_t ct)
{
    static const char *const names[] = {
        "allreduce", "reduce",        "allgather",           "gather", "scatter", "broadcast",
        "alltoall",  "reducescatter", "reducescatter_block", "barrier"};
    return ct < sizeof names / sizeof *names ? names[ct] : "?";
}

/* Checks rank r's nodes and resolves their deps to indices. */
static weft_err check_rank(ck_rank *r, uint32_t ranks, weft_diag *d)
{
    size_t n = r->t.n, total = 0;
    ck_id *ids = weft__malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        goto oom;
    if (n >= NONE) {
        weft__free(ids);
        return weft_diag_set(d, WEFT_ELIMIT, "%s: %zu nodes, more than weft handles", r->file, n);
    }
    for (size_t i = 0; i < n; i++) {
        const weft_ck_node *nd = &r->t.nodes[i];
        const weft_ck_attrs *at = weft_ck_attr(&r->t, nd);
        ids[i] = (ck_id){nd->id, (uint32_t)i};
        total += nd->ndeps;
        const char *why = NULL;
        char buf[200];
        if (nd->type > WEFT_CK_COLL) {
            snprintf(buf, sizeof buf, "unknown node type %llu", (unsigned long long)nd->type);
            why = buf;
        } else if (nd->type == WEFT_CK_COLL && weft__ck_coll_of(at->comm_type) == -2) {
            snprintf(buf, sizeof buf,
                     "collective %s (comm_type %llu) is not supported (allreduce, allgather, "
                     "reducescatter, alltoall, broadcast, barrier)",
                     weft__ck_coll_name(at->comm_type), (unsigned long long)at->comm_type);
            why = buf;
        } else if ((nd->type == WEFT_CK_COLL || nd->type == WEFT_CK_SEND) &&
                   at->comm_size > ((uint64_t)1 << 50)) {
            snprintf(buf, sizeof buf, "comm_size %llu is more than 1 PiB",
                     (unsigned long long)at->comm_size);
            why = buf;
        } else if (nd->type == WEFT_CK_SEND && (at->comm_dst < 0 || at->comm_dst >= ranks)) {
            snprintf(buf, sizeof buf, "send to rank %lld, not one of the %u ranks",
                     (long long)at->comm_dst, ranks);
            why = buf;
        } else if (nd->type == WEFT_CK_RECV && (at->comm_src < 0 || at->comm_src >= ranks)) {
            snprintf(buf, sizeof buf, "recv from rank %lld, not one of the %u ranks",
                     (long long)at->comm_src, ranks);
            why = buf;
        }
        if (why) {
            weft__free(ids);
            return weft_diag_set(d, WEFT_EINVAL, "%s: node %llu ('%s'): %s", r->file,
                                 (unsigned long long)nd->id, weft_ck_name(&r->t, nd), why);
        }
    }
    weft__heapsort(ids, n, sizeof *ids, id_cmp);
    for (size_t i = 1; i < n; i++)
        if (ids[i].id == ids[i - 1].id) {
            weft_diag_set(d, WEFT_EINVAL, "%s: node id %llu appears twice (nodes %u and %u)",
                          r->file, (unsigned long long)ids[i].id, ids[i - 1].idx, ids[i].idx);
            weft__free(ids);
            return WEFT_EINVAL;
        }
    r->dep_off = weft__malloc((n + 1) * sizeof *r->dep_off);
    r->dep = weft__malloc((total ? total : 1) * sizeof *r->dep);
    if (!r->dep_off || !r->dep)
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const weft_ck_node *nd = &r->t.nodes[i];
        r->dep_off[i] = (uint32_t)k;
        for (size_t j = 0; j < nd->ndeps; j++) {
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (ids[mid].id < r->t.deps[nd->dep + j])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || ids[lo].id != r->t.deps[nd->dep + j]) {
                weft_diag_set(d, WEFT_EINVAL,
                              "%s: node %llu ('%s') depends on node %llu, which "
                              "the trace does not have",
                              r->file, (unsigned long long)nd->id, weft_ck_name(&r->t, nd),
                              (unsigned long long)r->t.deps[nd->dep + j]);
                weft__free(ids);
                return WEFT_EINVAL;
            }
            r->dep[k++] = ids[lo].idx;
        }
    }
    r->dep_off[n] = (uint32_t)k;
    weft__free(ids);
    return WEFT_OK;
oom:
    weft__free(ids);
    return weft_diag_code(d, WEFT_ENOMEM);
}

weft_err weft_chakra_parse(const uint8_t *const *bufs, const size_t *lens, const char *const *names,
                           uint32_t n, weft_chakra **out, weft_diag *d)
{
    weft_chakra *w = weft__calloc(1, sizeof *w);
    if (!w || !(w->r = weft__calloc(n ? n : 1, sizeof *w->r))) {
        weft__free(w);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    weft_err err = WEFT_OK;
    for (uint32_t i = 0; i < n && !err; i++) {
        ck_rank *r = &w->r[i];
        w->n = i + 1;
        size_t len = strlen(names[i]) + 1;
        if (!(r->file = weft__malloc(len))) {
            err = weft_diag_code(d, WEFT_ENOMEM);
            break;
        }
        memcpy(r->file, names[i], len);
        char why[200];
        if (weft_ck_decode(bufs[i], lens[i], &r->t, why, sizeof why) < 0) {
            err = weft_diag_set(d, strstr(why, "out of memory") ? WEFT_ENOMEM : WEFT_EINVAL,
                                "%s: %s", r->file, why);
            break;
        }
        err = check_rank(r, n, d);
        w->nodes += r->t.n;
    }
    if (err) {
        weft_chakra_free(w);
        return err;
    }
    *out = w;
    return WEFT_OK;
}

weft_err weft_chakra_load(const char *prefix, uint32_t ranks, weft_chakra **out, weft_diag *d)
{
    size_t plen = strlen(prefix) + 32;
    char *names = weft__malloc(((size_t)ranks + 1) * plen);
    uint8_t **bufs = weft__calloc(ranks ? ranks : 1, sizeof *bufs);
    size_t *lens = weft__calloc(ranks ? ranks : 1, sizeof *lens);
    const char **np = weft__calloc(ranks ? ranks : 1, sizeof *np);
    weft_err err = WEFT_OK;
    if (!names || !bufs || !lens || !np) {
        err = weft_diag_code(d, WEFT_ENOMEM);
        goto free_all;
    }
    for (uint32_t i = 0; i <= ranks; i++)
        snprintf(names + (size_t)i * plen, plen, "%s.%u.et", prefix, i);
    for (uint32_t i = 0; i < ranks && !err; i++) {
        np[i] = names + (size_t)i * plen;
        char *text = NULL;
        err = weft__file_read(np[i], (size_t)1 << 30, "a Chakra trace", &text, &lens[i], d);
        bufs[i] = (uint8_t *)text;
    }
    if (!err) {
        const char *extra = names + (size_t)ranks * plen;
        FILE *f = fopen(extra, "rb");
        if (f) {
            fclose(f);
            err = weft_diag_set(d, WEFT_EINVAL,
                                "%s: a trace for rank %u, but the fabric has %u ranks (0 to %u)",
                                extra, ranks, ranks, ranks ? ranks - 1 : 0);
        }
    }
    if (!err)
        err = weft_chakra_parse((const uint8_t *const *)bufs, lens, np, ranks, out, d);
free_all:
    for (uint32_t i = 0; bufs && i < ranks; i++)
        weft__free(bufs[i]);
    weft__free(bufs);
    weft__free(lens);
    weft__free(np);
    weft__free(names);
    return err;
}
