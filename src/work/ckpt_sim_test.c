/* The checkpoint replayed through the flow engine (ckpt_sim.c) against
 * ckpt.c's analytic plan: the same iterations per checkpoint and added
 * step time where they must agree (every box's NIC group one bandwidth,
 * the replayed training saturating it in its busy intervals: ckpt_sim.c
 * says why), on hand-made profiles with hand-computed answers and on the
 * idle profiles of real steps with the state scaled to need 1 to many
 * steps; and no training flow ever finishes later for the checkpoint. */
#include <math.h>
#include <string.h>

#include "base/testing.h"
#include "weft/sim.h"
#include "work/testing_work.h"
#include "work/work_internal.h"

/* The analytic plan and the engine's answer for (K = 2) on ip; checks
 * that they agree and that training is never delayed. */
static void agree(const weft_idle_profile *ip, double step_s, uint64_t optim, const char *gpu,
                  weft_ckpt_result *o, weft_ckpt_sim *s)
{
    weft_step_result r;
    memset(&r, 0, sizeof r);
    r.step_s = step_s;
    r.counts.mem_optim = optim;
    weft_gpu g;
    CHECK(weft_gpu_find(gpu, &g));
    weft_ckpt_spec spec;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_ckpt_parse("gemini", &spec, &d), WEFT_OK);
    CHECK_ERR(weft_ckpt_plan(&spec, &g, &r, ip, 0, 0, o, &d), WEFT_OK);
    CHECK_ERR(weft_ckpt_simulate(&g, ip, o, s, &d), WEFT_OK);
    if (s->iters == UINT32_MAX) { /* beyond the replay: the checkpoint and one more step */
        CHECK(o->iters + 1 > WEFT_CKPT_SIM_STEPS);
        CHECK(fabs(s->added_every_s - o->added_every_s) <= 1e-9 * step_s);
        CHECK(s->training_delay_s == 0);
        return;
    }
    if (s->iters != o->iters || !(fabs(s->added_every_s - o->added_every_s) <= 1e-9 * step_s))
        fprintf(stderr, "  engine %u iterations, %.12g s added; analytic %u, %.12g s\n", s->iters,
                s->added_every_s, o->iters, o->added_every_s);
    CHECK_INT(s->iters, o->iters);
    CHECK(fabs(s->added_every_s - o->added_every_s) <= 1e-9 * step_s);
    CHECK(s->training_delay_s == 0);
}

/* Two boxes, NIC groups of 200 GB/s (8 PCIe Gen4 x16: 252 GB/s, so the
 * NICs bind). */
static weft_idle_profile two_boxes(weft_idle_group *gr, double (*iv)[2], size_t n, double step)
{
    int64_t idle = 0;
    for (size_t k = 0; k < n; k++)
        idle += llround((iv[k][1] - iv[k][0]) * 1e9);
    memset(gr, 0, 4 * sizeof *gr);
    for (int i = 0; i < 4; i++) {
        gr[i].nic = i % 2;
        gr[i].bw_gbs = i % 2 ? 200 : 2400;
        gr[i].idle_ns = idle;
        gr[i].busy_ns = llround(step * 1e9) - idle;
        gr[i].n = n;
        gr[i].iv = iv;
    }
    weft_idle_profile ip = {llround(step * 1e9), 8, 4, gr};
    return ip;
}

/* Hand-computed: a 10 s step idle 0..5 s, 1000 GB idle a step; a box
 * sends 1600 GB (200 GB a GPU). Every iteration: 1000 GB in the step, the
 * other 600 GB at 200 GB/s after it, 3 s added. Over repeating steps: 1000
 * GB in step 1, busy 5..10 s, the rest 10..13 s: arrives at 13 s, in step
 * 2. Both boxes alike: one replay of one and of three steps. */
static void test_hand(void)
{
    double iv[1][2] = {{0, 5}};
    weft_idle_group gr[4];
    weft_idle_profile ip = two_boxes(gr, iv, 1, 10);
    weft_ckpt_result o;
    weft_ckpt_sim s;
    agree(&ip, 10, 200000000000ull, "a100-80g", &o, &s);
    CHECK_INT(s.iters, 2);
    CHECK(s.added_every_s == 3);
    CHECK(s.arrival_s == 13);
    CHECK_INT(s.groups, 1);
    CHECK_INT(s.steps, 3);
    /* Three gaps (1..2, 3..4.5, 8..10: 4.5 s, 900 GB a step) and 2000 GB
     * to send: steps 1 and 2 move 1800 GB, step 3's first gap the last
     * 200 GB in 21..22 s. Every iteration: 1100 GB after the step, 5.5 s. */
    double iv3[3][2] = {{1, 2}, {3, 4.5}, {8, 10}};
    ip = two_boxes(gr, iv3, 3, 10);
    agree(&ip, 10, 250000000000ull, "a100-80g", &o, &s);
    CHECK_INT(s.iters, 3);
    CHECK(fabs(s.added_every_s - 5.5) < 1e-12);
    CHECK(fabs(s.arrival_s - 22) < 1e-12);
    CHECK_INT(s.steps, 4);
    /* One replica: nothing to send, every iteration, nothing simulated. */
    weft_gpu g;
    CHECK(weft_gpu_find("a100-80g", &g));
    weft_ckpt_result one = o;
    one.send_box = 0;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_ckpt_simulate(&g, &ip, &one, &s, &d), WEFT_OK);
    CHECK_INT(s.iters, 1);
    CHECK(s.added_every_s == 0 && s.groups == 0 && s.flows == 0);
    /* No idle time: never at no cost; every iteration costs the whole
     * send, 2000 GB at 200 GB/s. */
    ip = two_boxes(gr, iv3, 0, 10);
    agree(&ip, 10, 250000000000ull, "a100-80g", &o, &s);
    CHECK_INT(s.iters, 0);
    CHECK(fabs(s.added_every_s - 10) < 1e-12);
    /* No host figures. */
    CHECK(weft_gpu_find("mi300x", &g));
    CHECK_ERR(weft_ckpt_simulate(&g, &ip, &o, &s, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "--checkpoint gemini: no host figures (PCIe, host memory) for GPU 'mi300x' "
                     "(a100-40g, a100-80g, h100-sxm, h200 have them)");
}

/* Real steps (a GPT of 8 layers, hidden 1024, on two boxes), their idle
 * profiles as weft step computes them, with the state scaled from the
 * step's own to thousands of times it (1 to many iterations). */
/* weft_sim_background by hand: a 1 GB/s link idle in [0.5, 1] of each
 * 1 s period, a 2 GB/s second link: 0.25 GB arrive at 0.75 s, 0.75 GB
 * in the second period's gap, at 1.75 s; bad intervals (overlapping, or
 * past the period's end) are refused. */
static void test_background(void)
{
    const double idle[1][2] = {{0.5, 1.0}};
    double at = 0, delay = 0;
    uint64_t flows = 0;
    CHECK_ERR(weft_sim_background(1, 2, idle, 1, 1.0, 1, 0.25e9, &at, &delay, &flows), WEFT_OK);
    CHECK_REL(at, 0.75, 1e-12);
    CHECK(delay == 0);
    CHECK(flows > 0);
    CHECK_ERR(weft_sim_background(1, 2, idle, 1, 1.0, 2, 0.75e9, &at, &delay, &flows), WEFT_OK);
    CHECK_REL(at, 1.75, 1e-12);
    CHECK(delay == 0);
    const double overlap[2][2] = {{0.2, 0.6}, {0.5, 0.9}};
    CHECK_ERR(weft_sim_background(1, 2, overlap, 2, 1.0, 1, 1e6, &at, &delay, &flows), WEFT_EINVAL);
    CHECK_ERR(weft_sim_background(0, 2, idle, 1, 1.0, 1, 1e6, &at, &delay, &flows), WEFT_EINVAL);
    /* Past the period's end: its busy time would overlap the next
     * period's. */
    const double late[1][2] = {{1.5, 2.0}}, over[1][2] = {{0.5, 1.5}};
    CHECK_ERR(weft_sim_background(1, 2, late, 1, 1.0, 2, 1e6, &at, &delay, &flows), WEFT_EINVAL);
    CHECK_ERR(weft_sim_background(1, 2, over, 1, 1.0, 2, 1e6, &at, &delay, &flows), WEFT_EINVAL);
    const double whole[1][2] = {{0.0, 1.0}};
    CHECK_ERR(weft_sim_background(1, 2, whole, 1, 1.0, 1, 1e9, &at, &delay, &flows), WEFT_OK);
    CHECK_REL(at, 1.0, 1e-12);
}

static void test_steps(void)
{
    static const struct {
        const char *fabric, *gpu;
        uint32_t tp, pp, gb;
    } cfgs[] = {
        {"a100:2", "a100-80g", 2, 4, 16},
        {"a100:2", "a100-80g", 8, 1, 8},
        {"h100:2", "h100-sxm", 4, 2, 16},
        {"a100:4", "a100-80g", 1, 1, 64},
    };
    uint32_t multi = 0;
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        weft_gpu g;
        weft_topo *t;
        weft_work_ctx *c = weft__test_work_ctx(cfgs[i].fabric, cfgs[i].gpu, &g, &t);
        if (!c)
            continue;
        weft_model m;
        memset(&m, 0, sizeof m);
        strcpy(m.name, "small");
        m.layers = 8;
        m.hidden = 1024;
        m.heads = 16;
        m.seq = 1024;
        m.vocab = 32000;
        weft_model_complete(&m);
        weft_parallel p;
        weft_parallel_init(&p);
        p.tp = cfgs[i].tp;
        p.pp = cfgs[i].pp;
        p.global_batch = cfgs[i].gb;
        weft_step_result r;
        weft_diag d;
        weft_diag_clear(&d);
        CHECK_ERR(weft_work_step(c, &m, &p, false, NULL, &r, &d), WEFT_OK);
        weft_idle_profile ip;
        CHECK_ERR(weft_work_idle(c, &p, &r, &ip, &d), WEFT_OK);
        static const double scale[] = {1, 30, 300, 1000, 3000};
        for (size_t k = 0; k < sizeof scale / sizeof *scale; k++) {
            weft_ckpt_result o;
            weft_ckpt_sim s;
            agree(&ip, ip.step_ns * 1e-9, (uint64_t)(r.counts.mem_optim * scale[k]), cfgs[i].gpu,
                  &o, &s);
            CHECK(s.groups >= 1 && s.flows > 0);
            multi += o.iters > 1;
        }
        weft_idle_profile_fini(&ip);
        weft_work_ctx_free(c);
        weft_topo_free(t);
    }
    CHECK(multi >= 4); /* the scaled states need several steps */
}

int main(void)
{
    test_hand();
    test_background();
    test_steps();
    return weft_test_done();
}
