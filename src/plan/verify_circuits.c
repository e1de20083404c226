/* The verifier's circuit checks (weft/plan.h, "Circuits"): in each epoch a
 * port of an OCS sends on at most one circuit and receives on at most one;
 * with a topology every circuit's OCS is an ocs node and its ends are nodes
 * linked to it; every route path that crosses an OCS names its epoch, and
 * each of its hops across an OCS is a circuit of that epoch. A plan without
 * circuits is not checked here: its OCSes act as switches. Beside verify.c
 * in the verifier's file order (it calls only verify_msg.c).
 * O(circuits log circuits + route entries log circuits). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "plan/verify_internal.h"

typedef struct ckey {
    uint32_t epoch, ocs, a, b, idx;
} ckey;

static int ckey_cmp(const void *x, const void *y)
{
    const ckey *p = x, *q = y;
    if (p->epoch != q->epoch)
        return p->epoch < q->epoch ? -1 : 1;
    if (p->ocs != q->ocs)
        return p->ocs < q->ocs ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

static const char *nm(const weft_plan *p, uint32_t id)
{
    return weft__plan_name(p, id);
}

/* Sorted by (epoch, ocs, a): two neighbours with the same key share a port
 * (a is the sending port when `sends`, else the receiving one). */
static weft_err check_ports(verifier *v, ckey *k, size_t n, bool sends)
{
    const weft_plan *p = v->p;
    qsort(k, n, sizeof *k, ckey_cmp);
    for (size_t i = 1; i < n; i++) {
        if (k[i].epoch != k[i - 1].epoch || k[i].ocs != k[i - 1].ocs || k[i].a != k[i - 1].a)
            continue;
        /* The two in the order the plan lists them. */
        uint32_t i0 = k[i - 1].idx < k[i].idx ? k[i - 1].idx : k[i].idx,
                 i1 = k[i - 1].idx < k[i].idx ? k[i].idx : k[i - 1].idx;
        const weft__plan_circuit *x = &p->circuits[i0], *y = &p->circuits[i1];
        return weft_diag_set(v->d, WEFT_EVERIFY,
                             "epoch %u: port '%s' of ocs '%s' %s two circuits (%s -> %s and "
                             "%s -> %s); a port is in at most one circuit each way",
                             k[i].epoch, nm(p, k[i].a), nm(p, k[i].ocs),
                             sends ? "sends on" : "receives on", nm(p, x->from), nm(p, x->to),
                             nm(p, y->from), nm(p, y->to));
    }
    return WEFT_OK;
}

static bool linked(const weft_topo *t, weft_node_id a, weft_node_id b)
{
    weft_link_id l;
    return weft_topo_find_link(t, a, b, &l) && weft_topo_find_link(t, b, a, &l);
}

/* With a topology: the OCS exists and is one, its ends are its ports. */
static weft_err check_against_topo(verifier *v)
{
    const weft_plan *p = v->p;
    for (size_t i = 0; i < p->ncircuits; i++) {
        const weft__plan_circuit *c = &p->circuits[i];
        weft_node_id o, a, b;
        if (!weft_topo_find_node(v->topo, nm(p, c->ocs), &o) ||
            weft_topo_node_kind(v->topo, o) != WEFT_NODE_OCS)
            return weft_diag_set(v->d, WEFT_EVERIFY,
                                 "circuit %s -> %s of epoch %u: '%s' is not an ocs node of the "
                                 "topology",
                                 nm(p, c->from), nm(p, c->to), c->epoch, nm(p, c->ocs));
        uint32_t ends[2] = {c->from, c->to};
        for (int k = 0; k < 2; k++) {
            weft_node_id *x = k ? &b : &a;
            if (!weft_topo_find_node(v->topo, nm(p, ends[k]), x) || !linked(v->topo, *x, o))
                return weft_diag_set(v->d, WEFT_EVERIFY,
                                     "circuit %s -> %s of epoch %u: '%s' is not a port of ocs "
                                     "'%s'",
                                     nm(p, c->from), nm(p, c->to), c->epoch, nm(p, ends[k]),
                                     nm(p, c->ocs));
        }
    }
    return WEFT_OK;
}

/* Whether name id x is an OCS: named so by a circuit, or an ocs node of the
 * topology. state[x]: 0 not yet known, 1 yes, 2 no. */
static bool is_ocs(verifier *v, unsigned char *state, uint32_t x)
{
    if (!state[x]) {
        weft_node_id n;
        state[x] = v->topo && weft_topo_find_node(v->topo, nm(v->p, x), &n) &&
                           weft_topo_node_kind(v->topo, n) == WEFT_NODE_OCS
                       ? 1
                       : 2;
    }
    return state[x] == 1;
}

static weft_err check_paths(verifier *v, const ckey *sorted, size_t n, unsigned char *state)
{
    const weft_plan *p = v->p;
    if (!p->path_count)
        return WEFT_OK;
    for (uint32_t i = 0; i < p->nops; i++) {
        for (uint32_t k = 0; k < p->path_count[i]; k++) {
            const weft__plan_path *pt = &p->paths[p->path_start[i] + k];
            const uint32_t *nodes = p->path_nodes + pt->node_start;
            for (uint32_t j = 1; j + 1 < pt->nnodes; j++) {
                if (!is_ocs(v, state, nodes[j]))
                    continue;
                if (pt->epoch == WEFT_PLAN_NO_EPOCH)
                    return weft__verify_fail(v, i,
                                             "route path %u crosses ocs '%s' (%s -> %s) but "
                                             "names no epoch, and the plan has circuits",
                                             k + 1, nm(p, nodes[j]), nm(p, nodes[j - 1]),
                                             nm(p, nodes[j + 1]));
                ckey want = {pt->epoch, nodes[j], nodes[j - 1], nodes[j + 1], 0};
                size_t lo = 0, hi = n;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (ckey_cmp(&sorted[mid], &want) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (lo == n || sorted[lo].epoch != want.epoch || sorted[lo].ocs != want.ocs ||
                    sorted[lo].a != want.a || sorted[lo].b != want.b)
                    return weft__verify_fail(v, i,
                                             "route path %u crosses ocs '%s' from %s to %s in "
                                             "epoch %u, which has no such circuit",
                                             k + 1, nm(p, nodes[j]), nm(p, nodes[j - 1]),
                                             nm(p, nodes[j + 1]), pt->epoch);
            }
        }
    }
    return WEFT_OK;
}

weft_err weft__verify_circuits(verifier *v)
{
    const weft_plan *p = v->p;
    size_t n = p->ncircuits;
    if (!n)
        return WEFT_OK;
    for (size_t i = 0; i < n; i++) {
        const weft__plan_circuit *c = &p->circuits[i];
        if (c->from == c->to)
            return weft_diag_set(v->d, WEFT_EVERIFY,
                                 "circuit %s -> %s of epoch %u on ocs '%s' joins a port to "
                                 "itself",
                                 nm(p, c->from), nm(p, c->to), c->epoch, nm(p, c->ocs));
    }
    weft_err e = WEFT_OK;
    ckey *k = weft__malloc(n * sizeof *k);
    unsigned char *state = weft__calloc(p->nnames ? p->nnames : 1, 1);
    if (!k || !state) {
        e = weft__verify_oom(v);
        goto free_keys;
    }
    if (v->topo && (e = check_against_topo(v)))
        goto free_keys;
    for (size_t i = 0; i < n; i++) {
        const weft__plan_circuit *c = &p->circuits[i];
        k[i] = (ckey){c->epoch, c->ocs, c->from, c->to, (uint32_t)i};
    }
    if ((e = check_ports(v, k, n, true)))
        goto free_keys;
    for (size_t i = 0; i < n; i++) {
        const weft__plan_circuit *c = &p->circuits[i];
        k[i] = (ckey){c->epoch, c->ocs, c->to, c->from, (uint32_t)i};
    }
    if ((e = check_ports(v, k, n, false)))
        goto free_keys;
    for (size_t i = 0; i < n; i++) {
        const weft__plan_circuit *c = &p->circuits[i];
        k[i] = (ckey){c->epoch, c->ocs, c->from, c->to, (uint32_t)i};
        state[c->ocs] = 1;
    }
    qsort(k, n, sizeof *k, ckey_cmp);
    e = check_paths(v, k, n, state);
free_keys:
    weft__free(k);
    weft__free(state);
    return e;
}
