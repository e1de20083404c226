#include "synth/rankorder.h"

#include <string.h>

#include "base/alloc.h"

void synth_hosts_fini(synth_hosts *h)
{
    weft__free(h->start);
    weft__free(h->ranks);
    weft__free(h->host_of);
    weft__free(h->local);
    memset(h, 0, sizeof *h);
}

weft_err synth_hosts_init(synth_hosts *h, const weft_topo *t)
{
    memset(h, 0, sizeof *h);
    uint32_t n = weft_topo_num_ranks(t);
    bool hostless = weft_topo_num_hosts(t) == 0;
    for (uint32_t r = 0; r < n && !hostless; r++)
        hostless = weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r})) == WEFT_NO_HOST;
    /* Hosts are numbered by first appearance among ranks, so host ids of
     * non-rank nodes (NICs) do not leave gaps. */
    uint32_t nh_topo = hostless ? n : weft_topo_num_hosts(t);
    uint32_t *dense = weft__malloc(((size_t)nh_topo + 1) * sizeof *dense);
    h->host_of = weft__malloc((size_t)n * sizeof *h->host_of);
    h->local = weft__malloc((size_t)n * sizeof *h->local);
    h->ranks = weft__malloc((size_t)n * sizeof *h->ranks);
    if (!dense || !h->host_of || !h->local || !h->ranks)
        goto nomem;
    for (uint32_t i = 0; i < nh_topo; i++)
        dense[i] = UINT32_MAX;
    uint32_t nh = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t th =
            hostless ? r : (uint32_t)weft_topo_node_host(t, weft_topo_rank_node(t, (weft_rank){r}));
        if (dense[th] == UINT32_MAX)
            dense[th] = nh++;
        h->host_of[r] = dense[th];
    }
    h->nhosts = nh;
    h->start = weft__calloc((size_t)nh + 1, sizeof *h->start);
    if (!h->start)
        goto nomem;
    for (uint32_t r = 0; r < n; r++)
        h->start[h->host_of[r] + 1]++;
    for (uint32_t i = 0; i < nh; i++)
        h->start[i + 1] += h->start[i];
    memcpy(dense, h->start, (size_t)nh * sizeof *dense); /* cursors */
    for (uint32_t r = 0; r < n; r++) {
        uint32_t at = dense[h->host_of[r]]++;
        h->ranks[at] = r;
        h->local[r] = at - h->start[h->host_of[r]];
    }
    h->per_host = h->start[1];
    for (uint32_t i = 0; i < nh; i++) {
        if (h->start[i + 1] - h->start[i] != h->per_host)
            h->per_host = 0;
    }
    weft__free(dense);
    return WEFT_OK;
nomem:
    weft__free(dense);
    synth_hosts_fini(h);
    return WEFT_ENOMEM;
}

void synth_ring_order(const synth_hosts *h, uint32_t shift, uint32_t *order)
{
    uint32_t at = 0, rot = 0;
    for (uint32_t i = 0; i < h->nhosts; i++) {
        uint32_t len = h->start[i + 1] - h->start[i];
        uint32_t s = h->per_host ? (rot + shift) % len : 0;
        for (uint32_t j = 0; j < len; j++)
            order[at++] = h->ranks[h->start[i] + (s + j) % len];
        /* The next host starts at the local index this one ended at. */
        if (h->per_host)
            rot = (rot + len - 1) % len;
    }
}
