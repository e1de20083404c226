/* Options, bus-bandwidth factors and results. */
#include <string.h>

#include "sim/result.h"

void weft_sim_opts_init(weft_sim_opts *o)
{
    o->alpha_s = 0;
    o->slices = 1;
    o->symmetry = true;
    o->trace = NULL;
    o->trace_run = 0;
    o->trace_label = NULL;
    o->max_classes = 0;
    o->cut_through = false;
    o->back_to_back = false;
    o->model = WEFT_SIM_FLUID;
    o->slice_bytes = 0;
    o->whole = false;
    o->bw_scale = 1;
    o->launch_s = 0;
    o->hop_s = 0;
    o->net_hop_s = 0;
    o->step_bytes = 0;
    o->step_gbps = 0;
    o->chan_share = 1;
    o->proto = -1;
    o->intra_eff = 1;
    for (int k = 0; k < WEFT__COMPUTE_COUNT; k++)
        o->compute_s_per_b[k] = 0;
    o->compute_source = NULL;
}

double weft_sim_busbw_factor(weft_coll coll, uint32_t n)
{
    switch (coll) {
    case WEFT_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_REDUCESCATTER:
    case WEFT_COLL_ALLTOALL:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

/* Is link class a busier than b? Ties go to the smaller physical link id,
 * so the order never depends on how classes were numbered. */
static bool busier(const weft_sim_link_use *a, const weft_sim_link_use *b)
{
    return a->util > b->util || (a->util == b->util && a->link.v < b->link.v);
}

void sim_result_fill(weft_sim_result *out, const sim_engine *e, const sim_classes *cls,
                     const double *class_cap, weft_coll coll, uint32_t ranks, uint64_t size,
                     double bytes_scale, double time_s)
{
    sim_engine_stats st;
    sim_engine_get_stats(e, &st);
    if (time_s >= 0)
        st.makespan_s = time_s;
    out->coll = coll;
    out->ranks = ranks;
    out->size = size;
    out->time_s = st.makespan_s;
    out->algbw_gbps = st.makespan_s > 0 ? (double)size / st.makespan_s / 1e9 : 0;
    out->busbw_gbps = out->algbw_gbps * weft_sim_busbw_factor(coll, ranks);
    out->flows = sim_engine_num_flows(e);
    out->events = st.events;
    out->flow_classes = cls->nf;
    out->link_classes = cls->nl;
    out->conservation_err = st.conservation_err;
    out->n_busiest = 0;
    for (uint32_t l = 0; l < cls->nl; l++) {
        weft_sim_link_use u;
        u.link.v = cls->lrep[l];
        u.count = cls->lcount[l];
        u.bytes = sim_engine_link_bytes(e, l) * bytes_scale;
        u.util = st.makespan_s > 0 ? u.bytes / (class_cap[l] * st.makespan_s) : 0;
        uint32_t at = out->n_busiest;
        while (at > 0 && busier(&u, &out->busiest[at - 1]))
            at--;
        if (at >= WEFT_SIM_BUSIEST)
            continue;
        uint32_t last = out->n_busiest < WEFT_SIM_BUSIEST ? out->n_busiest : WEFT_SIM_BUSIEST - 1;
        memmove(&out->busiest[at + 1], &out->busiest[at], (last - at) * sizeof u);
        out->busiest[at] = u;
        if (out->n_busiest < WEFT_SIM_BUSIEST)
            out->n_busiest++;
    }
}

void sim_result_busiest_links(weft_sim_result *out, uint32_t n_links, const double *bytes,
                              const double *cap)
{
    /* The top entries so far, with the capacity that keys them. A group
     * pushed out of the top never returns: the entries that displaced it
     * stay ahead of all its later members. */
    double ecap[WEFT_SIM_BUSIEST];
    uint32_t n = 0;
    double time = out->time_s;
    for (uint32_t l = 0; l < n_links; l++) {
        if (!(bytes[l] > 0))
            continue;
        weft_sim_link_use u = {{l}, 1, bytes[l], time > 0 ? bytes[l] / (cap[l] * time) : 0};
        uint32_t i = 0;
        while (i < n && !(out->busiest[i].bytes == u.bytes && ecap[i] == cap[l]))
            i++;
        if (i < n) {
            out->busiest[i].count++;
            continue;
        }
        uint32_t at = n;
        while (at > 0 && busier(&u, &out->busiest[at - 1]))
            at--;
        if (at >= WEFT_SIM_BUSIEST)
            continue;
        uint32_t last = n < WEFT_SIM_BUSIEST ? n : WEFT_SIM_BUSIEST - 1;
        memmove(&out->busiest[at + 1], &out->busiest[at], (last - at) * sizeof u);
        memmove(&ecap[at + 1], &ecap[at], (last - at) * sizeof *ecap);
        out->busiest[at] = u;
        ecap[at] = cap[l];
        if (n < WEFT_SIM_BUSIEST)
            n++;
    }
    out->n_busiest = n;
}

void sim_result_finish(weft_sim_result *out, const weft_sim_opts *r)
{
    out->model = r->model;
    out->proto = r->proto;
    out->slices = r->slices;
    if (!(r->launch_s > 0) || !(out->time_s > 0))
        return;
    double t = out->time_s + r->launch_s;
    for (uint32_t i = 0; i < out->n_busiest; i++)
        out->busiest[i].util *= out->time_s / t;
    out->time_s = t;
    out->algbw_gbps = (double)out->size / t / 1e9;
    out->busbw_gbps = out->algbw_gbps * weft_sim_busbw_factor(out->coll, out->ranks);
}
