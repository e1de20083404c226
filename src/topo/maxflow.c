/* Exact integer max-flow (Dinic and highest-label push-relabel) on a
 * reusable CSR residual graph. See maxflow.h for the contract. */
#include "weft/maxflow.h"

#include <string.h>

#include "base/alloc.h"

__extension__ typedef __int128 i128;

struct weft_maxflow {
    uint32_t n, n_arcs;
    bool frozen;
    /* Arcs as added: tail, head, capacity. */
    size_t arc_cap;
    uint32_t *arc_u, *arc_v;
    int64_t *cap;
    /* Residual graph, 2 * n_arcs positions grouped by tail: positions
     * start[u] .. start[u+1]-1 leave u. */
    uint32_t *start; /* n + 1 */
    uint32_t *to;    /* head of the residual arc at a position */
    uint32_t *mate;  /* position of the reverse residual arc */
    int64_t *res;    /* residual capacity */
    uint32_t *fwd;   /* position of each added arc */
    /* Scratch of size n, reused by every run. */
    int32_t *level; /* Dinic level / push-relabel height */
    uint32_t *cur;  /* current-arc pointer */
    uint32_t *queue;
    uint32_t *stack; /* DFS path (positions); push-relabel bucket links */
    int64_t *excess;
    uint32_t *bucket; /* push-relabel: first active node per height, 2n */
    uint32_t *count;  /* push-relabel: nodes per height, 2n */
    uint32_t last_t;
};

#define NONE UINT32_MAX

weft_err weft_maxflow_new(uint32_t n_nodes, uint32_t arcs_hint, weft_maxflow **out)
{
    if (n_nodes == 0 || n_nodes > (UINT32_MAX - 2) / 2)
        return WEFT_EINVAL;
    weft_maxflow *m = weft__calloc(1, sizeof *m);
    if (!m)
        return WEFT_ENOMEM;
    m->n = n_nodes;
    m->last_t = NONE;
    if (arcs_hint) {
        m->arc_u = weft__malloc((size_t)arcs_hint * sizeof *m->arc_u);
        m->arc_v = weft__malloc((size_t)arcs_hint * sizeof *m->arc_v);
        m->cap = weft__malloc((size_t)arcs_hint * sizeof *m->cap);
        if (!m->arc_u || !m->arc_v || !m->cap) {
            weft_maxflow_free(m);
            return WEFT_ENOMEM;
        }
        m->arc_cap = arcs_hint;
    }
    *out = m;
    return WEFT_OK;
}

void weft_maxflow_free(weft_maxflow *m)
{
    if (!m)
        return;
    weft__free(m->arc_u);
    weft__free(m->arc_v);
    weft__free(m->cap);
    weft__free(m->start);
    weft__free(m->to);
    weft__free(m->mate);
    weft__free(m->res);
    weft__free(m->fwd);
    weft__free(m->level);
    weft__free(m->cur);
    weft__free(m->queue);
    weft__free(m->stack);
    weft__free(m->excess);
    weft__free(m->bucket);
    weft__free(m->count);
    weft__free(m);
}

/* Grows the three parallel arc arrays to hold need arcs. */
static weft_err reserve_arcs(weft_maxflow *m, size_t need)
{
    if (need <= m->arc_cap)
        return WEFT_OK;
    size_t ncap = m->arc_cap ? m->arc_cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    uint32_t *u = weft__realloc_array(m->arc_u, ncap, sizeof *u);
    if (!u)
        return WEFT_ENOMEM;
    m->arc_u = u;
    uint32_t *v = weft__realloc_array(m->arc_v, ncap, sizeof *v);
    if (!v)
        return WEFT_ENOMEM;
    m->arc_v = v;
    int64_t *c = weft__realloc_array(m->cap, ncap, sizeof *c);
    if (!c)
        return WEFT_ENOMEM;
    m->cap = c;
    m->arc_cap = ncap;
    return WEFT_OK;
}

weft_err weft_maxflow_add_arc(weft_maxflow *m, uint32_t u, uint32_t v, int64_t cap, uint32_t *arc)
{
    if (m->frozen || u >= m->n || v >= m->n || u == v || cap < 0)
        return WEFT_EINVAL;
    if (m->n_arcs >= (UINT32_MAX - 2) / 2)
        return WEFT_ELIMIT;
    weft_err e = reserve_arcs(m, (size_t)m->n_arcs + 1);
    if (e)
        return e;
    uint32_t a = m->n_arcs++;
    m->arc_u[a] = u;
    m->arc_v[a] = v;
    m->cap[a] = cap;
    if (arc)
        *arc = a;
    return WEFT_OK;
}

weft_err weft_maxflow_freeze(weft_maxflow *m)
{
    if (m->frozen)
        return WEFT_EINVAL;
    size_t n = m->n, pos = 2 * (size_t)m->n_arcs;
    size_t pos_alloc = pos ? pos : 1, arcs_alloc = m->n_arcs ? m->n_arcs : 1;
    m->start = weft__calloc(n + 1, sizeof *m->start);
    m->to = weft__malloc(pos_alloc * sizeof *m->to);
    m->mate = weft__malloc(pos_alloc * sizeof *m->mate);
    m->res = weft__malloc(pos_alloc * sizeof *m->res);
    m->fwd = weft__malloc(arcs_alloc * sizeof *m->fwd);
    m->level = weft__malloc(n * sizeof *m->level);
    m->cur = weft__malloc(n * sizeof *m->cur);
    m->queue = weft__malloc(n * sizeof *m->queue);
    m->stack = weft__malloc(n * sizeof *m->stack);
    m->excess = weft__malloc(n * sizeof *m->excess);
    m->bucket = weft__malloc(2 * n * sizeof *m->bucket);
    m->count = weft__malloc(2 * n * sizeof *m->count);
    if (!m->start || !m->to || !m->mate || !m->res || !m->fwd || !m->level || !m->cur ||
        !m->queue || !m->stack || !m->excess || !m->bucket || !m->count)
        return WEFT_ENOMEM; /* weft_maxflow_free releases the partial layout */
    for (uint32_t a = 0; a < m->n_arcs; a++) {
        m->start[m->arc_u[a] + 1]++;
        m->start[m->arc_v[a] + 1]++;
    }
    for (size_t v = 0; v < n; v++)
        m->start[v + 1] += m->start[v];
    /* cur doubles as the fill cursor here. */
    for (size_t v = 0; v < n; v++)
        m->cur[v] = m->start[v];
    for (uint32_t a = 0; a < m->n_arcs; a++) {
        uint32_t u = m->arc_u[a], v = m->arc_v[a];
        uint32_t pf = m->cur[u]++, pb = m->cur[v]++;
        m->to[pf] = v;
        m->to[pb] = u;
        m->mate[pf] = pb;
        m->mate[pb] = pf;
        m->fwd[a] = pf;
        m->res[pf] = m->cap[a];
        m->res[pb] = 0;
    }
    m->frozen = true;
    return WEFT_OK;
}

uint32_t weft_maxflow_num_nodes(const weft_maxflow *m)
{
    return m->n;
}

uint32_t weft_maxflow_num_arcs(const weft_maxflow *m)
{
    return m->n_arcs;
}

void weft_maxflow_set_cap(weft_maxflow *m, uint32_t arc, int64_t cap)
{
    m->cap[arc] = cap < 0 ? 0 : cap;
}

int64_t weft_maxflow_cap(const weft_maxflow *m, uint32_t arc)
{
    return m->cap[arc];
}

int64_t weft_maxflow_flow(const weft_maxflow *m, uint32_t arc)
{
    return m->frozen ? m->res[m->mate[m->fwd[arc]]] : 0;
}

/* Restores every residual capacity to the arc capacities. */
static void reset_residual(weft_maxflow *m)
{
    for (uint32_t a = 0; a < m->n_arcs; a++) {
        uint32_t p = m->fwd[a];
        m->res[p] = m->cap[a];
        m->res[m->mate[p]] = 0;
    }
}

/* ---- Dinic ---------------------------------------------------------------- */

/* BFS levels from s over positive residuals; true when t is reached. Nodes
 * at t's level or beyond are not expanded: they cannot lie on a shortest
 * augmenting path. */
static bool dinic_levels(weft_maxflow *m, uint32_t s, uint32_t t)
{
    for (uint32_t v = 0; v < m->n; v++)
        m->level[v] = -1;
    uint32_t head = 0, tail = 0;
    m->level[s] = 0;
    m->queue[tail++] = s;
    while (head < tail) {
        uint32_t u = m->queue[head++];
        if (m->level[t] >= 0 && m->level[u] >= m->level[t])
            break;
        for (uint32_t p = m->start[u]; p < m->start[u + 1]; p++) {
            uint32_t v = m->to[p];
            if (m->res[p] > 0 && m->level[v] < 0) {
                m->level[v] = m->level[u] + 1;
                m->queue[tail++] = v;
            }
        }
    }
    return m->level[t] >= 0;
}

/* One blocking flow by iterative DFS with current arcs, adding at most
 * `room` units. Returns the amount added. */
static int64_t dinic_blocking(weft_maxflow *m, uint32_t s, uint32_t t, int64_t room)
{
    int64_t added = 0;
    uint32_t *path = m->stack;
    uint32_t top = 0, u = s;
    for (uint32_t v = 0; v < m->n; v++)
        m->cur[v] = m->start[v];
    while (added < room) {
        if (u == t) {
            int64_t b = room - added;
            for (uint32_t i = 0; i < top; i++)
                if (m->res[path[i]] < b)
                    b = m->res[path[i]];
            uint32_t first_sat = top;
            for (uint32_t i = 0; i < top; i++) {
                m->res[path[i]] -= b;
                m->res[m->mate[path[i]]] += b;
                if (m->res[path[i]] == 0 && first_sat == top)
                    first_sat = i;
            }
            added += b;
            /* Retreat to the tail of the first saturated arc. */
            top = first_sat;
            u = top ? m->to[path[top - 1]] : s;
            continue;
        }
        uint32_t end = m->start[u + 1];
        uint32_t p = m->cur[u];
        for (; p < end; p++) {
            uint32_t v = m->to[p];
            if (m->res[p] > 0 && m->level[v] == m->level[u] + 1)
                break;
        }
        m->cur[u] = p;
        if (p < end) {
            path[top++] = p;
            u = m->to[p];
            continue;
        }
        /* Dead end: u cannot reach t in the level graph any more. */
        if (u == s)
            break;
        m->level[u] = -1;
        top--;
        u = top ? m->to[path[top - 1]] : s;
        m->cur[u]++;
    }
    return added;
}

static int64_t run_dinic(weft_maxflow *m, uint32_t s, uint32_t t, int64_t limit)
{
    int64_t flow = 0;
    while (flow < limit && dinic_levels(m, s, t))
        flow += dinic_blocking(m, s, t, limit - flow);
    return flow;
}

/* ---- Push-relabel ----------------------------------------------------------- */

/* Exact heights by a backward BFS from t over positive residuals; nodes that
 * cannot reach t get height n (they are on the source side). Rebuilds the
 * active buckets and height counts; returns the highest active height or
 * -1. */
static int32_t pr_global_relabel(weft_maxflow *m, uint32_t s, uint32_t t)
{
    int32_t n = (int32_t)m->n;
    for (uint32_t v = 0; v < m->n; v++)
        m->level[v] = n;
    for (uint32_t h = 0; h < 2 * m->n; h++) {
        m->bucket[h] = NONE;
        m->count[h] = 0;
    }
    uint32_t head = 0, tail = 0;
    m->level[t] = 0;
    m->queue[tail++] = t;
    while (head < tail) {
        uint32_t v = m->queue[head++];
        for (uint32_t p = m->start[v]; p < m->start[v + 1]; p++) {
            uint32_t w = m->to[p];
            if (w != s && m->level[w] == n && m->res[m->mate[p]] > 0) {
                m->level[w] = m->level[v] + 1;
                m->queue[tail++] = w;
            }
        }
    }
    int32_t highest = -1;
    for (uint32_t v = 0; v < m->n; v++) {
        m->cur[v] = m->start[v];
        if (m->level[v] < n)
            m->count[m->level[v]]++;
        if (v != s && v != t && m->excess[v] > 0 && m->level[v] < n) {
            m->stack[v] = m->bucket[m->level[v]];
            m->bucket[m->level[v]] = v;
            if (m->level[v] > highest)
                highest = m->level[v];
        }
    }
    m->level[s] = n;
    return highest;
}

static int64_t run_push_relabel(weft_maxflow *m, uint32_t s, uint32_t t)
{
    int32_t n = (int32_t)m->n;
    uint32_t *next = m->stack; /* bucket links */
    memset(m->excess, 0, m->n * sizeof *m->excess);
    for (uint32_t p = m->start[s]; p < m->start[s + 1]; p++) {
        int64_t r = m->res[p];
        if (r > 0) {
            m->res[p] = 0;
            m->res[m->mate[p]] += r;
            m->excess[m->to[p]] += r;
        }
    }
    int32_t highest = pr_global_relabel(m, s, t);
    /* Global relabelling after about as much work as one BFS costs. */
    uint64_t work = 0, relabel_every = 6 * (uint64_t)m->n + 2 * (uint64_t)m->n_arcs;
    while (highest >= 0) {
        uint32_t u = m->bucket[highest];
        if (u == NONE) {
            highest--;
            continue;
        }
        m->bucket[highest] = next[u];
        if (m->level[u] != highest || m->excess[u] == 0)
            continue; /* stale entry left by a gap */
        /* Discharge u. */
        while (m->excess[u] > 0) {
            uint32_t end = m->start[u + 1];
            uint32_t p = m->cur[u];
            for (; p < end && m->excess[u] > 0; p++) {
                uint32_t v = m->to[p];
                if (m->res[p] > 0 && m->level[u] == m->level[v] + 1) {
                    int64_t d = m->excess[u] < m->res[p] ? m->excess[u] : m->res[p];
                    m->res[p] -= d;
                    m->res[m->mate[p]] += d;
                    if (m->excess[v] == 0 && v != t && v != s) {
                        next[v] = m->bucket[m->level[v]];
                        m->bucket[m->level[v]] = v;
                    }
                    m->excess[u] -= d;
                    m->excess[v] += d;
                    if (m->excess[u] == 0)
                        break;
                }
            }
            if (m->excess[u] == 0) {
                m->cur[u] = p < end ? p : m->start[u];
                break;
            }
            /* Relabel. */
            int32_t old = m->level[u], h = 2 * n;
            for (uint32_t q = m->start[u]; q < end; q++)
                if (m->res[q] > 0 && m->level[m->to[q]] + 1 < h)
                    h = m->level[m->to[q]] + 1;
            work += 12 + (end - m->start[u]);
            m->cur[u] = m->start[u];
            m->count[old]--;
            if (m->count[old] == 0) {
                /* Gap: nothing above `old` can reach t any more. */
                for (uint32_t w = 0; w < m->n; w++) {
                    if (m->level[w] > old && m->level[w] < n) {
                        m->count[m->level[w]]--;
                        m->level[w] = n;
                    }
                }
                m->level[u] = n;
                break;
            }
            if (h >= n) {
                m->level[u] = n;
                break;
            }
            m->level[u] = h;
            m->count[h]++;
            /* Later pushes from u land one level below h. */
            if (h > highest)
                highest = h;
        }
        if (m->excess[u] > 0 && m->level[u] < n) {
            next[u] = m->bucket[m->level[u]];
            m->bucket[m->level[u]] = u;
        }
        if (work > relabel_every) {
            work = 0;
            highest = pr_global_relabel(m, s, t);
        }
    }
    return m->excess[t];
}

/* ---- Runs ------------------------------------------------------------------ */

weft_err weft_maxflow_run(weft_maxflow *m, weft_mf_algo algo, uint32_t s, uint32_t t, int64_t limit,
                          int64_t *value)
{
    if (!m->frozen || s >= m->n || t >= m->n || s == t)
        return WEFT_EINVAL;
    /* Every flow, excess and residual is bounded by what leaves s. */
    i128 out = 0;
    for (uint32_t a = 0; a < m->n_arcs; a++)
        if (m->arc_u[a] == s)
            out += m->cap[a];
    if (out > INT64_MAX)
        return WEFT_EOVERFLOW;
    reset_residual(m);
    m->last_t = t;
    if (algo == WEFT_MF_PUSH_RELABEL)
        *value = run_push_relabel(m, s, t);
    else
        *value = run_dinic(m, s, t, limit < 0 ? INT64_MAX : limit);
    return WEFT_OK;
}

uint32_t weft_maxflow_source_side(weft_maxflow *m, uint8_t *side)
{
    /* The nodes that cannot reach t in the residual graph: the largest
     * source side of a minimum cut, the same for every maximum flow (and
     * for a maximum preflow), so both algorithms report the same cut. */
    memset(side, 1, m->n);
    if (m->last_t == NONE)
        return m->n;
    uint32_t head = 0, tail = 0, marked = m->n - 1;
    side[m->last_t] = 0;
    m->queue[tail++] = m->last_t;
    while (head < tail) {
        uint32_t v = m->queue[head++];
        for (uint32_t p = m->start[v]; p < m->start[v + 1]; p++) {
            uint32_t w = m->to[p];
            if (side[w] && m->res[m->mate[p]] > 0) {
                side[w] = 0;
                marked--;
                m->queue[tail++] = w;
            }
        }
    }
    return marked;
}
