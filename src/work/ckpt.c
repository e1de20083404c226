/* Checkpoints in the network's idle time (weft/work.h "Idle time and
 * checkpoints"; docs/step.md "Checkpoints").
 *
 * GEMINI (Wang et al., "GEMINI: Fast Failure Recovery in Distributed
 * Training with In-Memory Checkpoints", SOSP'23) keeps each machine's
 * checkpoint in the CPU memory of K machines, its own among them, and
 * sends it to the others in the gaps of the training traffic, so that a
 * checkpoint every iteration costs no step time when the gaps suffice.
 * Here the gaps are the idle intervals of the box's NIC group
 * (weft_work_idle), filled at min(NICs, GPUs x PCIe) with strictly lower
 * priority than training traffic: the checkpoint never delays a
 * collective and moves only while the group is idle. The state checkpointed
 * is the optimizer's (counts.mem_optim): fp32 master weights and Adam's
 * two moments, 12 bytes a parameter, sharded over the data-parallel group
 * by the distributed optimizer or ZeRO 1-3 (Megatron-LM
 * megatron/core/optimizer/distrib_optimizer.py, "fp32 main params, exp_avg,
 * exp_avg_sq" per shard; Rajbhandari et al., ZeRO, SC'20, Sec. 3: K = 12
 * bytes of optimizer state a parameter for mixed-precision Adam); the 16-bit
 * weights are rounded from the fp32 masters and are not saved again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work/work_internal.h"

/* ---- host figures ---- */

/* PCIe one way per x16 link: lanes x transfer rate x 128b/130b encoding
 * (PCI-SIG, PCI Express Base Specification 4.0 and 5.0: 16 and 32 GT/s a
 * lane): Gen4 31.5 GB/s, Gen5 63.0 GB/s. DGX boxes give each GPU its own
 * x16 link to a PCIe switch shared with its NIC. */
#define PCIE4_X16 (16.0 * 16 * 128 / 130 / 8)
#define PCIE5_X16 (32.0 * 16 * 128 / 130 / 8)
#define TB 1e12

static const struct {
    const char *gpu;
    weft_host_figures h;
} hosts[] = {
    {"a100-40g",
     {PCIE4_X16, 1 * TB,
      "NVIDIA DGX A100 datasheet (320GB system): 1TB system "
      "memory, PCIe Gen4"}},
    {"a100-80g",
     {PCIE4_X16, 2 * TB,
      "NVIDIA DGX A100 datasheet (640GB system): 2TB system "
      "memory, PCIe Gen4"}},
    {"h100-sxm", {PCIE5_X16, 2 * TB, "NVIDIA DGX H100 datasheet: 2TB system memory, PCIe Gen5"}},
    {"h200", {PCIE5_X16, 2 * TB, "NVIDIA DGX H200 datasheet: 2TB system memory, PCIe Gen5"}},
};

bool weft_host_figures_get(const char *gpu, weft_host_figures *out)
{
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++)
        if (!strcmp(hosts[i].gpu, gpu)) {
            *out = hosts[i].h;
            return true;
        }
    return false;
}

/* ---- the spec ---- */

/* The default remote storage: 20 Gbit/s a box, an assumption (a typical
 * storage network share per machine), set with bw=. */
#define REMOTE_DEFAULT_GBS 2.5

weft_err weft_ckpt_parse(const char *text, weft_ckpt_spec *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    out->replicas = 2;
    out->place = WEFT_CKPT_GROUP;
    out->remote_gbs = REMOTE_DEFAULT_GBS;
    size_t kl = strcspn(text, ":");
    if (kl == 6 && !strncmp(text, "gemini", 6))
        out->kind = WEFT_CKPT_GEMINI;
    else if (kl == 6 && !strncmp(text, "remote", 6))
        out->kind = WEFT_CKPT_REMOTE;
    else
        return weft_diag_set(d, WEFT_EINVAL,
                             "--checkpoint '%s': unknown kind '%.*s' (gemini or "
                             "remote)",
                             text, (int)kl, text);
    const char *s = text + kl;
    while (*s) {
        s++; /* ':' or ',' */
        size_t n = strcspn(s, ","), kn = strcspn(s, "=");
        char val[64];
        if (kn >= n || n - kn - 1 >= sizeof val)
            return weft_diag_set(d, WEFT_EINVAL, "--checkpoint '%s': '%.*s' is not KEY=VALUE", text,
                                 (int)n, s);
        memcpy(val, s + kn + 1, n - kn - 1);
        val[n - kn - 1] = 0;
        bool gem = out->kind == WEFT_CKPT_GEMINI;
        if (gem && kn == 8 && !strncmp(s, "replicas", 8)) {
            char *end;
            long v = strtol(val, &end, 10);
            if (*end || end == val || v < 1 || v > 64)
                return weft_diag_set(d, WEFT_EINVAL,
                                     "--checkpoint '%s': replicas '%s': a whole "
                                     "number from 1 to 64",
                                     text, val);
            out->replicas = (uint32_t)v;
        } else if (gem && kn == 9 && !strncmp(s, "placement", 9)) {
            if (!strcmp(val, "group"))
                out->place = WEFT_CKPT_GROUP;
            else if (!strcmp(val, "ring"))
                out->place = WEFT_CKPT_RING;
            else
                return weft_diag_set(d, WEFT_EINVAL,
                                     "--checkpoint '%s': placement '%s': group "
                                     "or ring",
                                     text, val);
        } else if (!gem && kn == 2 && !strncmp(s, "bw", 2)) {
            weft_rat bw;
            if (weft_parse_bandwidth(val, &bw))
                return weft_diag_set(d, WEFT_EINVAL,
                                     "--checkpoint '%s': bw '%s': a bandwidth "
                                     "such as 10GB/s or 100Gbps",
                                     text, val);
            out->remote_gbs = weft_rat_to_double(bw);
        } else {
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--checkpoint '%s': unknown option '%.*s' for "
                                 "%s (%s)",
                                 text, (int)kn, s, gem ? "gemini" : "remote",
                                 gem ? "replicas, placement" : "bw");
        }
        s += n;
    }
    return WEFT_OK;
}

/* ---- the plan ---- */

#define DAY_S 86400.0

weft_err weft_ckpt_plan(const weft_ckpt_spec *spec, const weft_gpu *g, const weft_step_result *r,
                        const weft_idle_profile *ip, double F, double restart_s,
                        weft_ckpt_result *out, weft_diag *d)
{
    memset(out, 0, sizeof *out);
    double step = r->step_s;
    out->bytes_gpu = r->counts.mem_optim;
    out->bytes_box = (double)ip->ranks_per_box * (double)out->bytes_gpu;
    double lag;   /* from a checkpoint's snapshot to its arrival */
    double added; /* added time per checkpoint */
    if (spec->kind == WEFT_CKPT_REMOTE) {
        out->send_box = out->bytes_box;
        out->path_gbs = spec->remote_gbs;
        double save = out->send_box / (out->path_gbs * 1e9);
        out->added_every_s = save;
        /* Young's first-order optimum interval sqrt(2 C M) for a
         * checkpoint of cost C and a mean time between failures M (J. W.
         * Young, "A first order approximation to the optimum checkpoint
         * interval", CACM 17(9), 1974), at least one step. */
        out->interval_s = F > 0 ? fmax(step, sqrt(2 * save * DAY_S / F)) : step;
        out->iters = (uint32_t)ceil(out->interval_s / step - 1e-9);
        out->interval_s = out->iters * step;
        lag = added = save;
    } else {
        weft_host_figures h;
        if (!weft_host_figures_get(g->name, &h))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--checkpoint gemini: no host figures (PCIe, "
                                 "host memory) for GPU '%s' (a100-40g, a100-80g, "
                                 "h100-sxm, h200 have them)",
                                 g->name);
        uint32_t K = spec->replicas;
        out->send_box = (double)(K - 1) * out->bytes_box;
        out->host_need = (double)K * out->bytes_box;
        out->host_fits = out->host_need <= h.mem_bytes;
        double pcie = ip->ranks_per_box * h.pcie_gbs;
        out->idle_bytes = -1;
        for (size_t i = 0; i < ip->n; i++) {
            const weft_idle_group *gr = &ip->g[i];
            if (!gr->nic)
                continue;
            double path = fmin(gr->bw_gbs, pcie);
            double b = path * 1e9 * (double)gr->idle_ns * 1e-9;
            if (out->idle_bytes < 0 || b < out->idle_bytes) {
                out->idle_bytes = b;
                out->path_gbs = path;
            }
        }
        if (out->idle_bytes < 0) /* one box: nothing to send to */
            out->idle_bytes = 0;
        if (out->send_box <= 0) {
            out->iters = 1;
        } else if (out->path_gbs > 0) {
            out->added_every_s = fmax(0, (out->send_box - out->idle_bytes) / (out->path_gbs * 1e9));
            if (out->idle_bytes > 0)
                out->iters = (uint32_t)fmin(ceil(out->send_box / out->idle_bytes), UINT32_MAX);
        } else {
            return weft_diag_set(d, WEFT_EINVAL,
                                 "--checkpoint gemini: replicas=%u needs other "
                                 "boxes, and the fabric has one",
                                 K);
        }
        /* With idle enough over `iters` steps, no added time; else every
         * step with the remainder sent after it. The checkpoint arrives an
         * interval after its snapshot. */
        added = out->iters ? 0 : out->added_every_s;
        out->interval_s = out->iters ? out->iters * step : step + added;
        lag = out->interval_s;
    }
    /* A failure at a uniform moment loses the work since the last
     * snapshot that had arrived: half an interval plus the lag from a
     * snapshot to its arrival, and the restart; checkpoints add `added`
     * each interval. */
    if (F > 0)
        out->lost_per_day_s =
            F * (out->interval_s / 2 + lag + restart_s) + DAY_S / out->interval_s * added;
    return WEFT_OK;
}

/* ---- placement ---- */

/* C(a, b) as a double, 0 outside 0 <= b <= a. */
static double choose(double a, double b)
{
    if (b < 0 || b > a)
        return 0;
    if (b > a - b)
        b = a - b;
    double c = 1;
    for (double i = 1; i <= b; i++)
        c = c * (a - b + i) / i;
    return c;
}

double weft_ckpt_loss_prob(weft_ckpt_place place, uint32_t n, uint32_t K, uint32_t k)
{
    if (K < 1 || K > n || k > n || (place == WEFT_CKPT_GROUP && n % K))
        return NAN;
    double all = choose(n, k);
    if (place == WEFT_CKPT_GROUP) {
        /* Inclusion-exclusion over the groups wholly failed: j of the n / K
         * groups fail and the other k - jK failures fall anywhere. */
        double s = 0;
        for (uint32_t j = 1; j * K <= k; j++)
            s += (j % 2 ? 1 : -1) * choose(n / K, j) * choose(n - j * K, k - j * K);
        return s / all;
    }
    if (k == n)
        return 1;
    /* Ring: loss iff the failed set holds K machines in a row of the
     * cycle. The sets without: the n - k survivors cut the cycle into n - k
     * runs of 0 .. K - 1 failures (after each survivor); marking one
     * survivor maps (set, survivor) one to one onto (start, composition of
     * k into n - k parts < K), so sets = n / (n - k) x compositions, and
     * compositions count by inclusion-exclusion over parts >= K. */
    double comp = 0;
    uint32_t parts = n - k;
    for (uint32_t j = 0; j <= parts && j * K <= k; j++)
        comp += (j % 2 ? -1 : 1) * choose(parts, j) * choose(k - j * K + parts - 1, parts - 1);
    double safe = comp * n / parts;
    return 1 - safe / all;
}
