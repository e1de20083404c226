/* The GEMINI checkpoint replayed through the flow engine
 * (weft_ckpt_simulate, weft/work.h; docs/step.md "Checkpoints").
 *
 * Per box, weft_sim_background (weft/sim.h) over two links: the box's NIC
 * group (its bandwidth out of the host) and its PCIe (ranks x the GPU's
 * x16 link, the host figures of ckpt.c). The step's training traffic on
 * the NIC group is replayed as class-0 flows, one per busy interval of
 * weft_work_idle's profile, holding the group whole from the interval's
 * start to its end, and the replay repeats the step. The checkpoint, K - 1
 * copies of the box's state, is one class-1 flow over NIC group and PCIe
 * from the first step's start: the engine's strict priority gives it what
 * training leaves, and nothing more.
 *
 * Why it must agree with ckpt.c's analytic answer: the replayed training
 * flows saturate the NIC group exactly in its busy intervals and leave it
 * idle otherwise, which is the analytic model's assumption (the checkpoint
 * moves only in idle time, at min(NIC group, PCIe)), so a checkpoint of S
 * bytes with I bytes of idle a step arrives in step ceil(S / I), and sent
 * after one step's traffic it needs (S - I) / path beyond the step. The
 * engine reaches those figures by simulation (rates by progressive
 * filling, class by class, event by event) rather than by arithmetic; the
 * boxes are all simulated and the latest decides, where ckpt.c takes the
 * box of least idle bytes (the same one when the boxes' NIC groups have
 * one bandwidth). And the engine checks what the model promises: every
 * training flow finishes at the same time, bit for bit, with the
 * checkpoint as without it. */
#include <math.h>
#include <string.h>

#include "weft/sim.h"
#include "work/work_internal.h"

/* At most this many steps replayed, this many engine flows in one
 * replay, and in all (bounds on the work: the engine runs about a million
 * flows a second here, gpt3-175b on a100:64 replays 16 boxes in 140,000
 * flows; a checkpoint needing more is reported as beyond the replay). */
#define MAX_STEPS WEFT_CKPT_SIM_STEPS
#define MAX_FLOWS (1u << 20)
#define MAX_TOTAL (1u << 22)

/* How many busy intervals group gr has in [0, step] (the complement of
 * its idle intervals). */
static uint32_t busy_count(const weft_idle_group *gr, double step)
{
    uint32_t n = 0;
    double prev = 0;
    for (size_t i = 0; i < gr->n; i++) {
        n += gr->iv[i][0] > prev;
        prev = gr->iv[i][1];
    }
    return n + (prev < step);
}

/* The checkpoint's arrival over `steps` steps of gr (*arrive), and the
 * most a training flow finishes later beside it than without it, folded
 * into *delay (weft_sim_background, weft/sim.h). */
static weft_err arrival(const weft_idle_group *gr, double step, double pcie_gbs, double send,
                        uint32_t steps, double *arrive, double *delay, uint64_t *flows)
{
    return weft_sim_background(gr->bw_gbs, pcie_gbs, (const double(*)[2])gr->iv, gr->n, step, steps,
                               send, arrive, delay, flows);
}

/* Has an earlier NIC group of ip the same bandwidth and idle intervals as
 * group i (so the same replay)? */
static bool seen(const weft_idle_profile *ip, size_t i)
{
    const weft_idle_group *g = &ip->g[i];
    for (size_t j = 0; j < i; j++) {
        const weft_idle_group *h = &ip->g[j];
        if (h->nic && h->bw_gbs == g->bw_gbs && h->n == g->n &&
            (!g->n || !memcmp(h->iv, g->iv, g->n * sizeof *g->iv)))
            return true;
    }
    return false;
}

/* The replay of NIC group i failed: out of memory, or figures the engine
 * refuses (a step or a bandwidth that is not positive, intervals out of
 * order or past the step), named with the group. */
static weft_err replay_error(weft_diag *d, weft_err err, size_t i, const weft_idle_group *gr,
                             double step, double pcie)
{
    if (err != WEFT_EINVAL)
        return weft_diag_code(d, err);
    return weft_diag_set(d, err,
                         "--checkpoint gemini: cannot replay NIC group %zu: step %g s, NIC group "
                         "%g GB/s, PCIe %g GB/s, %zu idle intervals (the step's idle profile is "
                         "not one the engine can replay)",
                         i, step, gr->bw_gbs, pcie, gr->n);
}

weft_err weft_ckpt_simulate(const weft_gpu *g, const weft_idle_profile *ip,
                            const weft_ckpt_result *cr, weft_ckpt_sim *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    weft_host_figures h;
    if (!weft_host_figures_get(g->name, &h))
        return weft_diag_set(d, WEFT_EINVAL,
                             "--checkpoint gemini: no host figures (PCIe, host memory) for GPU "
                             "'%s' (a100-40g, a100-80g, h100-sxm, h200 have them)",
                             g->name);
    double step = (double)ip->step_ns * 1e-9, send = cr->send_box;
    double pcie = ip->ranks_per_box * h.pcie_gbs;
    out->iters = 1;
    if (!(send > 0))
        return WEFT_OK; /* one replica: nothing to send */
    uint32_t worst = 1;
    bool never = false, beyond = false;
    for (size_t i = 0; i < ip->n; i++) {
        const weft_idle_group *gr = &ip->g[i];
        if (!gr->nic || seen(ip, i))
            continue;
        out->groups++;
        /* Every iteration: one step's traffic, then the rest alone. */
        double t1 = 0;
        weft_err err = arrival(gr, step, pcie, send, 1, &t1, &out->training_delay_s, &out->flows);
        if (err)
            return replay_error(d, err, i, gr, step, pcie);
        if (t1 - step > out->added_every_s)
            out->added_every_s = t1 - step;
        if (gr->idle_ns <= 0) {
            never = true; /* never at no added time */
            continue;
        }
        /* Over repeating steps: enough of them for the idle bytes to
         * cover the checkpoint, and one more. */
        double path = fmin(gr->bw_gbs, pcie) * 1e9, idle = path * (double)gr->idle_ns * 1e-9;
        uint32_t flows_step = 2 * (busy_count(gr, step) + 1);
        double need = ceil(send / idle) + 1;
        if (need > MAX_STEPS || need * flows_step > MAX_FLOWS ||
            (double)out->flows + 2 * need * flows_step > MAX_TOTAL) {
            beyond = true;
            continue;
        }
        uint32_t steps = (uint32_t)need;
        double tm = 0;
        err = arrival(gr, step, pcie, send, steps, &tm, &out->training_delay_s, &out->flows);
        if (err)
            return replay_error(d, err, i, gr, step, pcie);
        if (steps > out->steps)
            out->steps = steps;
        if (tm > out->arrival_s)
            out->arrival_s = tm;
        /* The step the checkpoint arrives in (an arrival at a step's very
         * end, to rounding, is that step's). */
        double k = ceil(tm / step - 1e-9);
        if (k > steps)
            beyond = true;
        else if (k > worst)
            worst = (uint32_t)k;
    }
    out->iters = never ? 0 : beyond ? UINT32_MAX : worst;
    return WEFT_OK;
}
