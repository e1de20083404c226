/* A background transfer in a link's idle time, replayed through the flow
 * engine (weft_sim_background, weft/sim.h).
 *
 * One engine of two links: the training link and the transfer's second
 * link. Training is replayed as class-0 flows, one per busy interval (the
 * complement of the idle intervals in each period), each released at the
 * interval's start by a linkless timer flow whose route latency is that
 * time and carrying link_gbs x the interval's length, so that it holds
 * the link whole from the interval's start to its end. The transfer is one
 * class-1 flow over both links from 0: the engine's strict priority
 * (engine.h, "Traffic classes") gives it what training leaves, and
 * nothing more. The same replay without the transfer gives each training
 * flow's reference finish, so *delay checks what the priority model
 * promises rather than assuming it. */
#include <math.h>

#include "sim/engine.h"
#include "weft/sim.h"

/* One replay; with bytes > 0 the transfer is the last flow. The engine
 * after its run in *out (NULL on failure). */
static weft_err replay(double link_gbs, double path_gbs, const double (*idle)[2], size_t nidle,
                       double period, uint32_t periods, double bytes, sim_engine **out)
{
    double cap[2] = {link_gbs * 1e9, path_gbs * 1e9};
    sim_engine *e = NULL;
    weft_err err = sim_engine_new(2, cap, NULL, &e);
    uint32_t link = 0, both[2] = {0, 1}, rlink = 0, rboth = 0;
    double one[2] = {1, 1};
    if (!err && !(err = sim_engine_add_route(e, 1, &link, one, 0, &rlink)))
        err = sim_engine_add_route(e, 2, both, one, 0, &rboth);
    for (uint32_t k = 0; !err && k < periods; k++) {
        double prev = 0, off = k * period;
        for (size_t i = 0; !err && i <= nidle; i++) {
            double a = prev, b = i < nidle ? idle[i][0] : period;
            if (i < nidle)
                prev = idle[i][1];
            if (!(b > a))
                continue;
            uint32_t rt, timer, f;
            if (!(err = sim_engine_add_route(e, 0, NULL, NULL, off + a, &rt)) &&
                !(err = sim_engine_add_flow(e, rt, 0, 1, &timer)) &&
                !(err = sim_engine_add_flow(e, rlink, cap[0] * (b - a), 1, &f)))
                err = sim_engine_add_dep(e, f, timer);
        }
    }
    uint32_t bg;
    if (!err && bytes > 0 && !(err = sim_engine_add_flow(e, rboth, bytes, 1, &bg)))
        err = sim_engine_set_class(e, bg, 1);
    if (!err)
        err = sim_engine_run(e, 0, NULL);
    if (err) {
        sim_engine_free(e);
        e = NULL;
    }
    *out = e;
    return err;
}

static bool figures_ok(double link_gbs, double path_gbs, const double (*idle)[2], size_t nidle,
                       double period, double bytes)
{
    if (!(link_gbs > 0) || !(path_gbs > 0) || !isfinite(link_gbs) || !isfinite(path_gbs) ||
        !(period > 0) || !isfinite(period) || !(bytes > 0) || !isfinite(bytes) || (nidle && !idle))
        return false;
    /* Within the period: an interval past its end would leave that
     * period's last busy flow running into the next period's first, two
     * training flows sharing the link the model says one saturates. */
    double prev = 0;
    for (size_t i = 0; i < nidle; i++) {
        if (!(idle[i][0] >= prev) || !(idle[i][1] >= idle[i][0]) || !(idle[i][1] <= period))
            return false;
        prev = idle[i][1];
    }
    return true;
}

weft_err weft_sim_background(double link_gbs, double path_gbs, const double (*idle)[2],
                             size_t nidle, double period, uint32_t periods, double bytes,
                             double *arrive, double *delay, uint64_t *flows)
{
    if (!arrive || !delay || !flows || !periods ||
        !figures_ok(link_gbs, path_gbs, idle, nidle, period, bytes))
        return WEFT_EINVAL;
    sim_engine *with = NULL, *without = NULL;
    weft_err err = replay(link_gbs, path_gbs, idle, nidle, period, periods, bytes, &with);
    if (!err)
        err = replay(link_gbs, path_gbs, idle, nidle, period, periods, 0, &without);
    if (!err) {
        uint32_t n = sim_engine_num_flows(without);
        *flows += n + sim_engine_num_flows(with);
        for (uint32_t f = 0; f < n; f++) {
            double s, dr, d1, d2;
            sim_engine_flow_times(with, f, &s, &dr, &d1);
            sim_engine_flow_times(without, f, &s, &dr, &d2);
            if (d1 - d2 > *delay)
                *delay = d1 - d2;
        }
        double s, dr;
        sim_engine_flow_times(with, n, &s, &dr, arrive);
    }
    sim_engine_free(with);
    sim_engine_free(without);
    return err;
}
