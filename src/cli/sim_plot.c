/* The plots of weft sim. See sim_plot.h. */
#include "cli/sim_plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/svg_plot.h"
#include "weft/synth.h"

bool cli_sim_bound_coll(weft_coll c, weft_bound_coll *out)
{
    switch (c) {
    case WEFT_COLL_ALLGATHER:
        *out = WEFT_BOUND_ALLGATHER;
        return true;
    case WEFT_COLL_REDUCESCATTER:
        *out = WEFT_BOUND_REDUCESCATTER;
        return true;
    case WEFT_COLL_ALLREDUCE:
        *out = WEFT_BOUND_ALLREDUCE;
        return true;
    default:
        return false;
    }
}

bool cli_sim_bound_gbps(const weft_topo *t, weft_coll coll, double *gbps)
{
    weft_bound_coll bc;
    if (!cli_sim_bound_coll(coll, &bc))
        return false;
    weft_bound bd;
    memset(&bd, 0, sizeof bd);
    if (weft_bound_compute(t, bc, NULL, &bd, NULL)) {
        weft_bound_fini(&bd);
        return false;
    }
    *gbps = weft_rat_to_double(bd.algbw);
    weft_bound_fini(&bd);
    return true;
}

int cli_sim_plot(const char *path, const char *spec, const weft_topo *t, weft_coll coll,
                 const uint64_t *sizes, size_t nsizes, const cli_sim_plot_algo *algos,
                 size_t nalgos, const double *bound_gbps)
{
    size_t ns = nalgos + (bound_gbps != NULL);
    cli_plot_series *s = calloc(ns, sizeof *s);
    double *y = calloc((ns ? ns : 1) * nsizes, sizeof *y);
    if (!s || !y) {
        free(s);
        free(y);
        return cli_fail(WEFT_ENOMEM, NULL);
    }
    uint32_t n = weft_topo_num_ranks(t);
    char bound_name[64];
    size_t k = 0;
    if (bound_gbps) {
        double bus = *bound_gbps * weft_sim_busbw_factor(coll, n);
        snprintf(bound_name, sizeof bound_name, "bound (%.1f GB/s)", bus);
        for (size_t i = 0; i < nsizes; i++)
            y[i] = bus;
        s[k++] = (cli_plot_series){bound_name, sizes, y, nsizes, true};
    }
    for (size_t a = 0; a < nalgos; a++, k++) {
        double *ya = y + k * nsizes;
        for (size_t i = 0; i < nsizes; i++)
            ya[i] = algos[a].res[i].busbw_gbps;
        s[k] = (cli_plot_series){algos[a].name, sizes, ya, nsizes, false};
    }
    char title[512];
    snprintf(title, sizeof title, "%s on %s (%u ranks), simulated", weft_coll_name(coll), spec, n);
    cli_plot p = {title, "size (bytes; K, M, G = 2^10, 2^20, 2^30)", "busbw (GB/s)", s, ns};
    int rc = cli_plot_write(path, &p);
    free(s);
    free(y);
    return rc;
}
