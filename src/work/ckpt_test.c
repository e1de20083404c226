/* Idle time and checkpoints (idle.c, ckpt.c): busy + idle = step exactly on
 * every link group of three configurations; the checkpoint plan against
 * hand-computed figures; the placement loss probabilities against brute
 * force over every failed set; the spec's parser by its messages. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "work/work_internal.h"

static weft_model model(uint32_t layers)
{
    weft_model m;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "small");
    m.layers = layers;
    m.hidden = 1024;
    m.heads = 16;
    m.seq = 1024;
    m.vocab = 32000;
    weft_model_complete(&m);
    return m;
}

typedef struct cfg {
    const char *fabric, *gpu;
    uint32_t tp, pp, gb;
    bool dist_opt;
    double nic_gbs, nvl_gbs; /* the groups' bandwidth */
} cfg;

static void check_profile(const cfg *k)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_topo_preset(k->fabric, &t, &d), WEFT_OK);
    weft_gpu g;
    CHECK(weft_gpu_find(k->gpu, &g));
    weft_work_ctx *c = NULL;
    CHECK_ERR(weft_work_ctx_new(t, &g, NULL, &c), WEFT_OK);
    weft_model m = model(8);
    weft_parallel p;
    weft_parallel_init(&p);
    p.tp = k->tp;
    p.pp = k->pp;
    p.global_batch = k->gb;
    p.dist_opt = k->dist_opt;
    weft_step_result r;
    CHECK_ERR(weft_work_step(c, &m, &p, false, NULL, &r, &d), WEFT_OK);
    weft_idle_profile ip;
    CHECK_ERR(weft_work_idle(c, &p, &r, &ip, &d), WEFT_OK);
    CHECK(ip.step_ns == llround(r.step_s * 1e9));
    CHECK_INT(ip.n, 4); /* two boxes: nvlink and nic each */
    CHECK_INT(ip.ranks_per_box, 8);
    bool nic_busy = false;
    for (size_t i = 0; i < ip.n; i++) {
        const weft_idle_group *gr = &ip.g[i];
        /* Exactly, in whole nanoseconds. */
        CHECK(gr->busy_ns + gr->idle_ns == ip.step_ns);
        CHECK(gr->busy_ns >= 0 && gr->idle_ns >= 0);
        CHECK(fabs(gr->bw_gbs - (gr->nic ? k->nic_gbs : k->nvl_gbs)) < 1e-9);
        double sum = 0, last = 0;
        for (size_t j = 0; j < gr->n; j++) {
            CHECK(gr->iv[j][0] >= last && gr->iv[j][1] > gr->iv[j][0]);
            sum += gr->iv[j][1] - gr->iv[j][0];
            last = gr->iv[j][1];
        }
        CHECK(last <= ip.step_ns * 1e-9 + 1e-12);
        CHECK(fabs(sum - gr->idle_ns * 1e-9) < 1e-9 * (double)(gr->n + 1));
        CHECK(fabs(gr->idle_bytes - gr->bw_gbs * (double)gr->idle_ns) < 1e-3);
        if (gr->nic && gr->busy_ns > 0)
            nic_busy = true;
        if (!gr->nic) /* TP over NVLink during every forward and backward */
            CHECK(k->tp == 1 || gr->busy_ns > 0);
    }
    CHECK(nic_busy); /* PP or DP crosses the boxes in every configuration */
    weft_idle_profile_fini(&ip);
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

static void test_profiles(void)
{
    /* a100: 8 HDR NICs of 25 GB/s, 8 x 12 NVLink3 of 25 GB/s per box;
     * h100: 8 NDR NICs of 50 GB/s, 8 x 18 NVLink4 of 25 GB/s. */
    static const cfg cfgs[] = {
        {"a100:2", "a100-80g", 2, 4, 16, false, 200, 2400},
        {"a100:2", "a100-80g", 8, 1, 8, true, 200, 2400},
        {"h100:2", "h100-sxm", 4, 2, 16, true, 400, 3600},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
        check_profile(&cfgs[i]);
}

/* Two boxes of 8 GPUs, each NIC group idle 5 s of a 10 s step at 200
 * GB/s: 1000 GB idle a step. */
static void test_plan(void)
{
    double iv[1][2] = {{0, 5}};
    weft_idle_group gr[4];
    memset(gr, 0, sizeof gr);
    for (int i = 0; i < 4; i++) {
        gr[i].nic = i % 2;
        gr[i].bw_gbs = i % 2 ? 200 : 2400;
        gr[i].busy_ns = gr[i].idle_ns = 5000000000;
        gr[i].n = 1;
        gr[i].iv = iv;
    }
    weft_idle_profile ip = {10000000000, 8, 4, gr};
    weft_step_result r;
    memset(&r, 0, sizeof r);
    r.step_s = 10;
    r.counts.mem_optim = 200000000000ull; /* 200 GB a GPU, 1600 GB a box */
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_ckpt_spec s;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_ckpt_parse("gemini", &s, &d), WEFT_OK);
    weft_ckpt_result o;
    CHECK_ERR(weft_ckpt_plan(&s, &g, &r, &ip, 4, 100, &o, &d), WEFT_OK);
    CHECK(o.bytes_box == 1600e9 && o.send_box == 1600e9);
    CHECK(o.path_gbs == 200); /* NICs 200 < 8 x PCIe Gen4 252 */
    CHECK(fabs(o.idle_bytes - 1000e9) < 1);
    CHECK_INT(o.iters, 2);                        /* 1600 / 1000 */
    CHECK(fabs(o.added_every_s - 3) < 1e-12);     /* (1600 - 1000) / 200 */
    CHECK(o.host_need == 3200e9 && !o.host_fits); /* the DGX A100's 2 TB */
    CHECK(o.interval_s == 20);
    CHECK(fabs(o.lost_per_day_s - 4 * (10 + 20 + 100)) < 1e-9);
    /* K = 3: twice the sending, 3200 / 1000 -> 4 steps. */
    CHECK_ERR(weft_ckpt_parse("gemini:replicas=3,placement=ring", &s, &d), WEFT_OK);
    CHECK(s.replicas == 3 && s.place == WEFT_CKPT_RING);
    CHECK_ERR(weft_ckpt_plan(&s, &g, &r, &ip, 0, 0, &o, &d), WEFT_OK);
    CHECK_INT(o.iters, 4);
    CHECK(o.lost_per_day_s == 0);
    /* Remote at 2.5 GB/s: a 640 s save; Young's interval
     * sqrt(2 x 640 x 21600) = 5258.1 s -> 526 steps. */
    CHECK_ERR(weft_ckpt_parse("remote", &s, &d), WEFT_OK);
    CHECK(s.remote_gbs == 2.5);
    CHECK_ERR(weft_ckpt_plan(&s, &g, &r, &ip, 4, 100, &o, &d), WEFT_OK);
    CHECK(fabs(o.added_every_s - 640) < 1e-9);
    CHECK_INT(o.iters, 526);
    CHECK(o.interval_s == 5260);
    CHECK(fabs(o.lost_per_day_s - (4 * (2630 + 640 + 100) + 86400.0 / 5260 * 640)) < 1e-6);
    CHECK_ERR(weft_ckpt_parse("remote:bw=100Gbps", &s, &d), WEFT_OK);
    CHECK(s.remote_gbs == 12.5);
    /* No host figures. */
    CHECK(weft_gpu_find("mi300x", &g));
    CHECK_ERR(weft_ckpt_parse("gemini", &s, &d), WEFT_OK);
    CHECK_ERR(weft_ckpt_plan(&s, &g, &r, &ip, 0, 0, &o, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--checkpoint gemini: no host figures (PCIe, host memory) for GPU 'mi300x' "
                     "(a100-40g, a100-80g, h100-sxm, h200 have them)");
}

static void test_parse_errors(void)
{
    static const struct {
        const char *in, *msg;
    } bad[] = {
        {"nvme", "--checkpoint 'nvme': unknown kind 'nvme' (gemini or remote)"},
        {"gemini:replicas=0", "--checkpoint 'gemini:replicas=0': replicas '0': a whole number "
                              "from 1 to 64"},
        {"gemini:placement=star", "--checkpoint 'gemini:placement=star': placement 'star': "
                                  "group or ring"},
        {"gemini:bw=1GB/s", "--checkpoint 'gemini:bw=1GB/s': unknown option 'bw' for gemini "
                            "(replicas, placement)"},
        {"remote:bw=fast", "--checkpoint 'remote:bw=fast': bw 'fast': a bandwidth such as "
                           "10GB/s or 100Gbps"},
        {"remote:bw", "--checkpoint 'remote:bw': 'bw' is not KEY=VALUE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        weft_ckpt_spec s;
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_ckpt_parse(bad[i].in, &s, &d), WEFT_EINVAL);
        CHECK_STR(d.msg, bad[i].msg);
    }
}

/* Every k-subset of n machines as a bit mask: does it hold a whole group
 * (group) or K in a row of the cycle (ring)? */
static double brute(weft_ckpt_place place, uint32_t n, uint32_t K, uint32_t k)
{
    uint32_t lost = 0, all = 0;
    for (uint32_t s = 0; s < 1u << n; s++) {
        if ((uint32_t)__builtin_popcount(s) != k)
            continue;
        all++;
        bool gone = false;
        for (uint32_t i = 0; i < n && !gone; i++) {
            if (place == WEFT_CKPT_GROUP && i % K)
                continue;
            bool every = true;
            for (uint32_t j = 0; j < K; j++)
                every = every && (s >> ((i + j) % n) & 1);
            gone = every;
        }
        lost += gone;
    }
    return (double)lost / all;
}

static void test_placement(void)
{
    for (uint32_t n = 1; n <= 12; n++)
        for (uint32_t K = 1; K <= n; K++)
            for (uint32_t k = 0; k <= n; k++) {
                double r = weft_ckpt_loss_prob(WEFT_CKPT_RING, n, K, k);
                CHECK(fabs(r - brute(WEFT_CKPT_RING, n, K, k)) < 1e-12);
                double g = weft_ckpt_loss_prob(WEFT_CKPT_GROUP, n, K, k);
                if (n % K)
                    CHECK(isnan(g));
                else
                    CHECK(fabs(g - brute(WEFT_CKPT_GROUP, n, K, k)) < 1e-12);
            }
    /* 64 boxes, 2 replicas, 2 failures: 32 of C(64, 2) = 2016 pairs lose a
     * group, 64 a ring neighbour pair. */
    CHECK(fabs(weft_ckpt_loss_prob(WEFT_CKPT_GROUP, 64, 2, 2) - 32.0 / 2016) < 1e-15);
    CHECK(fabs(weft_ckpt_loss_prob(WEFT_CKPT_RING, 64, 2, 2) - 64.0 / 2016) < 1e-15);
    CHECK(isnan(weft_ckpt_loss_prob(WEFT_CKPT_RING, 4, 5, 1)));
    CHECK(isnan(weft_ckpt_loss_prob(WEFT_CKPT_RING, 4, 0, 1)));
}

int main(void)
{
    test_profiles();
    test_plan();
    test_parse_errors();
    test_placement();
    return weft_test_done();
}
