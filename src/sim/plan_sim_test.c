/* Plans on the simulator: hand-built ring plans against the closed forms and
 * against weft_sim_ring, explicit routes with shares, ECMP, pipelining, the
 * trace, determinism and errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "topo/testing_topo.h"
#include "weft/exec_model.h"
#include "weft/sim.h"

/* The ring algorithm as a plan: C = N chunks. Reduce-scatter step k: rank
 * r reduces chunk (r - k) mod N into rank r+1, after step k-1 of rank r-1.
 * Allgather step k: rank r copies chunk (r + 1 - k) mod N to rank r+1. The
 * allgather and reduce-scatter plans use the same pattern with their own
 * chunk layout (C = 1). */
static weft_plan *ring_plan(weft_coll coll, uint32_t n)
{
    weft_plan_info info = {coll, n, {0}, coll == WEFT_COLL_ALLREDUCE ? n : 1, 0, true};
    weft_plan *p = NULL;
    if (weft_plan_new(&info, &p))
        return NULL;
    uint32_t *prev = calloc(n, sizeof *prev), *cur = calloc(n, sizeof *cur);
    bool have_prev = false;
    int phases = coll == WEFT_COLL_ALLREDUCE ? 2 : 1;
    for (int ph = 0; ph < phases; ph++) {
        bool reduce = coll == WEFT_COLL_REDUCESCATTER || (coll == WEFT_COLL_ALLREDUCE && ph == 0);
        for (uint32_t k = 0; k + 1 < n; k++) {
            for (uint32_t r = 0; r < n; r++) {
                uint32_t c;
                if (coll == WEFT_COLL_ALLREDUCE)
                    c = reduce ? (r + n - k) % n : (r + 1 + n - k) % n;
                else if (coll == WEFT_COLL_REDUCESCATTER)
                    c = (r + 2 * n - k - 1) % n; /* rank q ends with chunk q */
                else
                    c = (r + n - k) % n; /* rank r starts with chunk r */
                weft_op op = {reduce ? WEFT_OP_REDUCE : WEFT_OP_COPY,
                              {r},
                              {(r + 1) % n},
                              coll == WEFT_COLL_ALLGATHER ? WEFT_BUF_OUT : WEFT_BUF_IN,
                              coll == WEFT_COLL_ALLGATHER ? WEFT_BUF_OUT : WEFT_BUF_IN,
                              c,
                              c,
                              1,
                              0};
                uint32_t dep = prev[(r + n - 1) % n];
                if (weft_plan_add_op(p, &op, &dep, have_prev ? 1 : 0, &cur[r])) {
                    weft_plan_free(p);
                    p = NULL;
                    goto done;
                }
            }
            uint32_t *tmp = prev;
            prev = cur;
            cur = tmp;
            have_prev = true;
        }
    }
done:
    free(prev);
    free(cur);
    return p;
}

static void test_ring_plans(void)
{
    const weft_coll colls[] = {WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER};
    const char *specs[] = {"ring:5,bw=25,lat=1us", "switch:6,bw=40,lat=500ns", "h100:2"};
    for (size_t i = 0; i < 3; i++) {
        weft_topo *t = weft__test_topo_spec(specs[i]);
        if (!t)
            continue;
        uint32_t n = weft_topo_num_ranks(t);
        for (size_t c = 0; c < 3; c++) {
            weft_plan *p = ring_plan(colls[c], n);
            CHECK(p != NULL);
            if (!p)
                continue;
            weft_diag d;
            weft_diag_clear(&d);
            CHECK_ERR(weft_plan_verify(p, NULL, &d), WEFT_OK);
            if (d.err)
                fprintf(stderr, "  verify: %s\n", d.msg);
            for (uint32_t slices = 1; slices <= 4; slices *= 4) {
                weft_sim_opts o;
                weft_sim_opts_init(&o);
                o.alpha_s = 1e-6;
                o.slices = slices;
                weft_sim_result rp, rr;
                uint64_t size = 3u << 20;
                CHECK_ERR(weft_sim_plan(t, p, size, &o, &rp, &d), WEFT_OK);
                CHECK_ERR(weft_sim_ring(t, colls[c], size, &o, &rr, NULL), WEFT_OK);
                /* The same schedule through both paths. */
                CHECK_REL(rp.time_s, rr.time_s, 1e-9);
                CHECK(rp.conservation_err < 1e-9);
                uint64_t steps = colls[c] == WEFT_COLL_ALLREDUCE ? 2 * (n - 1) : n - 1;
                CHECK_INT(rp.transfers, steps * n * slices);
                if (i == 0 && slices == 1) {
                    double want = steps * (1e-6 + 1e-6 + (double)size / n / 25e9);
                    CHECK_REL(rp.time_s, want, 1e-9);
                }
                if (i == 1 && slices == 4) {
                    double want =
                        steps * (double)size / n / 40e9 + (double)(steps + 3) * (1e-6 + 1e-6);
                    CHECK_REL(rp.time_s, want, 1e-9);
                }
            }
            weft_plan_free(p);
        }
        weft_topo_free(t);
    }
}

/* The ring plans cut through. Every position behaves alike: step j of
 * each position starts at alpha + j D (D = L + alpha, L the hop's route
 * latency), shares its hop's link with the steps still running there, and
 * drains no earlier than step j-1 of the previous position is done; the
 * link never idles while a step has bytes left. Two regimes have a closed
 * form (M steps, chunk c = size / N, bandwidth B):
 *   L = alpha = 0: every step starts at 0 having caught up with its dep,
 *     all M steps on a link share it equally: M c / B (as store and
 *     forward: the ring is bandwidth bound);
 *   c / B <= D: each step drains before the next one on its link starts,
 *     a chain of M hops: M D + c / B (store and forward: M (D + c / B)).
 * Between the two the time lies between max(alpha + M c / B + L,
 * M D + c / B) and the store-and-forward time. */
static void test_ring_cut_through(void)
{
    const weft_coll colls[] = {WEFT_COLL_ALLREDUCE, WEFT_COLL_ALLGATHER, WEFT_COLL_REDUCESCATTER};
    const struct {
        const char *spec;
        double bw, lat, alpha;
        uint64_t size;
    } cases[] = {
        {"ring:5,bw=25", 25e9, 0, 0, 3u << 20},
        {"switch:6,bw=40", 40e9, 0, 0, 3u << 20},
        {"ring:5,bw=25,lat=1us", 25e9, 1e-6, 1e-6, 200000},
        {"switch:6,bw=40,lat=500ns", 40e9, 1e-6, 0.5e-6, 240000},
        {"ring:8,bw=25,lat=1us", 25e9, 1e-6, 1e-6, 8u << 20},
        {"h100:2", 0, 0, 1e-6, 8u << 20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_topo *t = weft__test_topo_spec(cases[i].spec);
        if (!t)
            continue;
        uint32_t n = weft_topo_num_ranks(t);
        for (size_t c = 0; c < 3; c++) {
            weft_plan *p = ring_plan(colls[c], n);
            CHECK(p != NULL);
            if (!p)
                continue;
            weft_sim_opts o;
            weft_sim_opts_init(&o);
            o.alpha_s = cases[i].alpha;
            weft_sim_result sf, ct, ct4;
            weft_diag d;
            uint64_t size = cases[i].size;
            CHECK_ERR(weft_sim_plan(t, p, size, &o, &sf, &d), WEFT_OK);
            o.cut_through = true;
            CHECK_ERR(weft_sim_plan(t, p, size, &o, &ct, &d), WEFT_OK);
            o.slices = 4;
            CHECK_ERR(weft_sim_plan(t, p, size, &o, &ct4, &d), WEFT_OK);
            CHECK(ct.conservation_err < 1e-9 && ct4.conservation_err < 1e-9);
            CHECK(ct.time_s <= sf.time_s * (1 + 1e-12));
            double m = colls[c] == WEFT_COLL_ALLREDUCE ? 2.0 * (n - 1) : n - 1;
            double chunk = (double)size / n, B = cases[i].bw, D = cases[i].lat + cases[i].alpha;
            if (i < 2)
                CHECK_REL(ct.time_s, m * chunk / B, 1e-12);
            else if (i < 4)
                CHECK_REL(ct.time_s, m * D + chunk / B, 1e-12);
            else if (B > 0) {
                double lo = fmax(cases[i].alpha + m * chunk / B + cases[i].lat, m * D + chunk / B);
                CHECK(ct.time_s >= lo * (1 - 1e-12) && ct.time_s < sf.time_s);
            }
            weft_plan_free(p);
        }
        weft_topo_free(t);
    }
    /* The ring simulator does not cut through; it says so. */
    weft_topo *t = weft__test_topo_spec("ring:4");
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.cut_through = true;
    weft_sim_result r;
    weft_diag d;
    CHECK_ERR(weft_sim_ring(t, WEFT_COLL_ALLREDUCE, 1024, &o, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: cut-through is simulated for plans only (weft_sim_plan of the "
                     "ring plan)");
    weft_topo_free(t);
}

static const char diamond[] = "node r0 compute\n"
                              "node r1 compute\n"
                              "node s0 switch\n"
                              "node s1 switch\n"
                              "link r0 s0 10GB/s\n"
                              "link r0 s1 10GB/s\n"
                              "link s0 r1 10GB/s\n"
                              "link s1 r1 10GB/s 2us\n"
                              "link r1 r0 1000GB/s\n";

/* One op of 1 GB from r0 to r1 (allgather with 2 ranks: chunk 0 -> r1). */
static weft_plan *one_op(void)
{
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 2, {0}, 1, 0, true};
    weft_plan *p = NULL;
    if (weft_plan_new(&info, &p))
        return NULL;
    weft_op a = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
    weft_op b = {WEFT_OP_COPY, {1}, {0}, WEFT_BUF_OUT, WEFT_BUF_OUT, 1, 1, 1, 0};
    if (weft_plan_add_op(p, &a, NULL, 0, NULL) || weft_plan_add_op(p, &b, NULL, 0, NULL)) {
        weft_plan_free(p);
        return NULL;
    }
    return p;
}

static void test_routes(void)
{
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_parse(diamond, sizeof diamond - 1, "diamond.topo", &t, NULL), WEFT_OK);
    weft_plan *p = one_op();
    if (!t || !p)
        return;
    weft_sim_result r;
    /* ECMP: shortest by hops (both), then latency: only via s0. */
    CHECK_ERR(weft_sim_plan(t, p, 2000000000, NULL, &r, NULL), WEFT_OK);
    CHECK_REL(r.time_s, 0.1, 1e-12);
    /* Explicit: half over each switch, so 20 GB/s; the slow path's latency
     * is paid. */
    const char *via0[] = {"r0", "s0", "r1"}, *via1[] = {"r0", "s1", "r1"};
    weft_rat half = {1, 2};
    CHECK_ERR(weft_plan_add_path(p, 0, half, via0, 3), WEFT_OK);
    CHECK_ERR(weft_plan_add_path(p, 0, half, via1, 3), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 2000000000, NULL, &r, NULL), WEFT_OK);
    CHECK_REL(r.time_s, 0.05 + 2e-6, 1e-12);
    CHECK(r.n_busiest >= 1);
    CHECK_REL(r.busiest[0].bytes, 5e8, 1e-12);
    CHECK_INT(r.busiest[0].link.v, 0);

    /* The trace: ranks, links and the slices on them. */
    FILE *f = tmpfile();
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    o.trace = f;
    o.slices = 2;
    CHECK_ERR(weft_sim_plan(t, p, 2000000000, &o, &r, NULL), WEFT_OK);
    long len = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)len + 1);
    CHECK(fread(text, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    /* One process per rank, then "links", a track per rank and per busy
     * link (trace.h); names and args say what moves where. */
    CHECK_CONTAINS(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                         "\"args\":{\"name\":\"rank 0\"}}");
    CHECK_CONTAINS(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,"
                         "\"args\":{\"name\":\"links\"}}");
    CHECK_CONTAINS(text, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":3,\"tid\":0,"
                         "\"args\":{\"name\":\"r0 -> s0\"}}");
    CHECK_CONTAINS(text, "{\"name\":\"copy 0\xe2\x86\x92"
                         "1 chunk 0\",\"cat\":\"copy\","
                         "\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":25002.000000,"
                         "\"dur\":25002.000000,\"args\":{\"op\":0,\"kind\":\"copy\","
                         "\"src\":0,\"dst\":1,\"chunk\":0,\"count\":1,\"slice\":1,"
                         "\"slices\":2,\"bytes\":500000000,\"src_buf\":\"out\","
                         "\"src_slot\":0,\"dst_buf\":\"out\",\"dst_slot\":0}}");
    CHECK_CONTAINS(text, "{\"name\":\"copy 1\xe2\x86\x92"
                         "0 chunk 1\",\"cat\":\"copy\","
                         "\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":0.000000,"
                         "\"dur\":500.000000,");
    free(text);

    /* Two runs in one document: the second on its own pids (base N + 1),
     * named after its label, and the document is complete. */
    f = tmpfile();
    o.trace = f; /* the earlier file is closed */
    CHECK_ERR(weft_sim_trace_begin(f), WEFT_OK);
    o.trace_run = 1;
    o.trace_label = "2G";
    CHECK_ERR(weft_sim_plan(t, p, 2000000000, &o, &r, NULL), WEFT_OK);
    o.trace_run = 2;
    o.trace_label = "1K";
    CHECK_ERR(weft_sim_plan(t, p, 1024, &o, &r, NULL), WEFT_OK);
    CHECK_ERR(weft_sim_trace_end(f), WEFT_OK);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    CHECK(fread(text, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    CHECK(strncmp(text, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{\"name\"", 47) == 0);
    CHECK_CONTAINS(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                         "\"args\":{\"name\":\"2G: rank 0\"}}");
    CHECK_CONTAINS(text, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":6,"
                         "\"args\":{\"name\":\"1K: links\"}}");
    CHECK(strstr(text, "}},\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4,") != NULL);
    CHECK(len > 5 && strcmp(text + len - 5, "}\n]}\n") == 0);
    free(text);

    /* Routes that are not in the fabric. */
    weft_diag d;
    weft_plan_clear_route(p, 0);
    const char *bad[] = {"r0", "r1"};
    CHECK_ERR(weft_plan_add_path(p, 0, weft_rat_int(1), bad, 2), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 1024, NULL, &r, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "sim: op 0 path 0: no link r0 -> r1");
    weft_plan_clear_route(p, 0);
    const char *ghost[] = {"r0", "s9", "r1"};
    CHECK_ERR(weft_plan_add_path(p, 0, weft_rat_int(1), ghost, 3), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 1024, NULL, &r, &d), WEFT_ETOPO);
    CHECK_STR(d.msg, "sim: op 0 path 0: unknown node 's9'");
    weft_plan_clear_route(p, 0);
    /* A cycle. */
    uint32_t dep1 = 1, dep0 = 0;
    CHECK_ERR(weft_plan_set_deps(p, 0, &dep1, 1), WEFT_OK);
    CHECK_ERR(weft_plan_set_deps(p, 1, &dep0, 1), WEFT_OK);
    weft_sim_opts_init(&o);
    o.slices = 3;
    CHECK_ERR(weft_sim_plan(t, p, 1024, &o, &r, &d), WEFT_EVERIFY);
    CHECK_STR(d.msg, "sim: op 0 (slice 0) never becomes ready (a dependency cycle)");
    uint32_t dep7 = 7;
    CHECK_ERR(weft_plan_set_deps(p, 1, &dep7, 1), WEFT_OK);
    CHECK_ERR(weft_sim_plan(t, p, 1024, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: op 1 depends on op 7, which does not exist (2 ops)");
    weft_plan_free(p);
    weft_topo_free(t);

    /* Rank counts must agree. */
    t = weft__test_topo_spec("ring:3");
    p = one_op();
    CHECK_ERR(weft_sim_plan(t, p, 1024, NULL, &r, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "sim: the plan has 2 ranks, the fabric 3");
    weft_plan_free(p);
    weft_topo_free(t);
}

/* The runtime model's streams: r0 sends two 1 GB chunks to r1 (ops 0 and
 * 1, no deps between them) and r1 sends chunk 0 on to r0 once it arrived
 * (op 2). On one TCP stream (same lane) the executor's messages go FIFO:
 * op 0 is done at 1 s + alpha, op 1 follows it (2 s + 2 alpha) while op 2
 * runs on the other direction (1 + 2 alpha .. 2 + 2 alpha). The fluid
 * engine alone would share r0 -> r1 between ops 0 and 1 (both done at
 * 2 s + alpha) and op 2 would end at 3 s + 2 alpha: what the runtime model
 * gives when op 1 is on the other lane (channel 1 of WEFT_EXEC_TCP_LANES:
 * another connection), and
 * the fluid model at any lane. Ranks of one host have one lane (shared
 * memory), so channel 1 is FIFO there. */
static void test_runtime_streams(void)
{
    static const char two_hosts[] = "node r0 compute host=0\n"
                                    "node r1 compute host=1\n"
                                    "link r0 r1 1GB/s\n"
                                    "link r1 r0 1GB/s\n";
    static const char one_host[] = "node r0 compute host=0\n"
                                   "node r1 compute host=0\n"
                                   "link r0 r1 1GB/s\n"
                                   "link r1 r0 1GB/s\n";
    const double a = WEFT_EXEC_OP_OVERHEAD_S;
    for (int v = 0; v < 5; v++) {
        bool same_host = v == 3, fluid = v == 4;
        uint32_t ch1 = v == 1 || v == 3 ? 1 : 0;
        weft_topo *t = NULL;
        const char *spec = same_host ? one_host : two_hosts;
        CHECK_ERR(weft_topo_parse(spec, strlen(spec), "streams.topo", &t, NULL), WEFT_OK);
        weft_plan_info info = {WEFT_COLL_ALLGATHER, 2, {0}, 2, 0, true};
        weft_plan *p = NULL;
        CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
        if (!t || !p)
            return;
        weft_op o0 = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
        weft_op o1 = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_OUT, WEFT_BUF_OUT, 1, 1, 1, ch1};
        weft_op o2 = {WEFT_OP_COPY, {1}, {0}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
        uint32_t dep = 0;
        CHECK_ERR(weft_plan_add_op(p, &o0, NULL, 0, NULL), WEFT_OK);
        CHECK_ERR(weft_plan_add_op(p, &o1, NULL, 0, NULL), WEFT_OK);
        CHECK_ERR(weft_plan_add_op(p, &o2, &dep, 1, NULL), WEFT_OK);
        weft_sim_opts o;
        weft_sim_opts_init(&o);
        o.model = fluid ? WEFT_SIM_FLUID : WEFT_SIM_RUNTIME;
        if (fluid)
            o.alpha_s = a;
        o.slice_bytes = 1000000000; /* one slice per chunk */
        weft_sim_result r;
        CHECK_ERR(weft_sim_plan(t, p, 1000000000ull * weft_plan_size_chunks(p), &o, &r, NULL),
                  WEFT_OK);
        bool fifo = !fluid && (ch1 == 0 || same_host);
        CHECK_REL(r.time_s, fifo ? 2 + 2 * a : 3 + 2 * a, 1e-12);
        weft_plan_free(p);
        weft_topo_free(t);
    }
}

/* weft_sim_plans: two plans of one 1e9-byte copy over one 1 GB/s link.
 * The second starting at 0.5 s: the first runs alone to 0.5 s (5e8 B
 * sent), both at 0.5 GB/s until the first is done at 1.5 s, the second's
 * last 5e8 B alone to 2 s. Starting at 2 s, each takes its 1 s alone. */
static void test_plans(void)
{
    static const char two[] = "node r0 compute\nnode r1 compute\nlink r0 r1 1GB/s\n"
                              "link r1 r0 1GB/s\n";
    weft_topo *t = NULL;
    CHECK_ERR(weft_topo_parse(two, sizeof two - 1, "two.topo", &t, NULL), WEFT_OK);
    weft_plan_info info = {WEFT_COLL_ALLGATHER, 2, {0}, 1, 0, true};
    weft_plan *p = NULL;
    CHECK_ERR(weft_plan_new(&info, &p), WEFT_OK);
    if (!t || !p)
        return;
    weft_op a = {WEFT_OP_COPY, {0}, {1}, WEFT_BUF_OUT, WEFT_BUF_OUT, 0, 0, 1, 0};
    CHECK_ERR(weft_plan_add_op(p, &a, NULL, 0, NULL), WEFT_OK);
    /* Size 2e9: one chunk of the 2 is 1e9 bytes. */
    weft_sim_job jobs[2] = {{p, 2000000000u, 0, 0, 0}, {p, 2000000000u, 0.5, 0, 0}};
    double done[2] = {0, 0};
    weft_diag d;
    CHECK_ERR(weft_sim_plans(t, jobs, 2, NULL, done, &d), WEFT_OK);
    CHECK(fabs(done[0] - 1.5) <= 1e-12);
    CHECK(fabs(done[1] - 2.0) <= 1e-12);
    jobs[1].start_s = 2;
    CHECK_ERR(weft_sim_plans(t, jobs, 2, NULL, done, &d), WEFT_OK);
    CHECK(fabs(done[0] - 1.0) <= 1e-12);
    CHECK(fabs(done[1] - 3.0) <= 1e-12);
    /* A negative start is refused. */
    jobs[1].start_s = -1;
    CHECK_ERR(weft_sim_plans(t, jobs, 2, NULL, done, &d), WEFT_EINVAL);
    CHECK_CONTAINS(d.msg, "job 1: size and slices must be > 0, alpha and start >= 0");
    weft_plan_free(p);
    weft_topo_free(t);
}

int main(void)
{
    test_ring_plans();
    test_ring_cut_through();
    test_routes();
    test_runtime_streams();
    test_plans();
    return weft_test_done();
}
