/* Chakra trace benchmark (weft_chakra_run, weft step --chakra): the time to
 * read and run ASTRA-sim's 4-GPU microbenchmarks (tests/fixtures/chakra, on
 * switch:4), and to run a generated 64-rank trace on a100:8: 32 layers,
 * every layer a forward (compute, then a TP allreduce of 8 MiB in the
 * rank's box) and a backward (compute, TP allreduce, then a DP allreduce
 * of 32 MiB across the boxes, overlapped with the next layer's backward),
 * then an optimizer step. Prints wall and CPU seconds, the nodes, the
 * simulated total and the simulations run. Never fails on time.
 * Usage: bench_chakra [FIXTURE_DIR] (default tests/fixtures/chakra). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "weft/topo.h"
#include "weft/work.h"

typedef struct enc {
    uint8_t *b;
    size_t n, cap;
} enc;

/* Appends n bytes, doubling the buffer from 64 bytes as needed. (Growing to
 * exactly twice the need made gcc -O3 follow one inlined path to a 6-byte
 * buffer and warn of a write past it, -Wstringop-overflow, although the
 * check above the copy grows it first.) */
static void put(enc *e, const void *p, size_t n)
{
    if (e->n + n > e->cap) {
        size_t cap = e->cap ? e->cap : 64;
        while (cap < e->n + n)
            cap *= 2;
        uint8_t *b = realloc(e->b, cap);
        if (!b)
            abort();
        e->b = b;
        e->cap = cap;
    }
    memcpy(e->b + e->n, p, n);
    e->n += n;
}

static void vput(enc *e, uint64_t v)
{
    uint8_t tmp[10];
    size_t k = 0;
    do {
        tmp[k] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        v >>= 7;
        k++;
    } while (v);
    put(e, tmp, k);
}

static void field_len(enc *e, uint32_t num, const void *p, size_t n)
{
    vput(e, (uint64_t)num << 3 | 2);
    vput(e, n);
    put(e, p, n);
}

static void field_var(enc *e, uint32_t num, uint64_t v)
{
    vput(e, (uint64_t)num << 3);
    vput(e, v);
}

static void attr(enc *node, const char *name, uint64_t v, const char *str)
{
    enc a = {0};
    field_len(&a, 1, name, strlen(name));
    if (str)
        field_len(&a, 29, str, strlen(str));
    else
        field_var(&a, 13, v);
    field_len(node, 10, a.b, a.n);
    free(a.b);
}

/* Appends message m as a length-delimited record of the trace, and frees
 * it. */
static void put_record(enc *t, enc *m)
{
    vput(t, m->n);
    put(t, m->b, m->n);
    free(m->b);
}

/* Node id (1-based), type, deps (data deps), and either a duration or a
 * collective of size bytes in group pg. */
static void node(enc *t, uint64_t id, uint64_t type, const uint64_t *deps, int nd, uint64_t dur,
                 uint64_t size, const char *pg)
{
    enc n = {0};
    field_var(&n, 1, id);
    field_var(&n, 3, type);
    for (int i = 0; i < nd; i++)
        if (deps[i])
            field_var(&n, 5, deps[i]);
    if (dur)
        field_var(&n, 7, dur);
    if (pg) {
        attr(&n, "comm_type", 0, NULL);
        attr(&n, "comm_size", size, NULL);
        attr(&n, "pg_name", 0, pg);
    }
    put_record(t, &n);
}

/* A trace's first record: its metadata (schema 0.0.4). */
static void header(enc *t)
{
    enc meta = {0};
    field_len(&meta, 1, "0.0.4", 5);
    put_record(t, &meta);
}

static void gen_rank(enc *t, uint32_t r, uint32_t layers)
{
    header(t);
    char tp[16], dpg[16];
    snprintf(tp, sizeof tp, "tp%u", r / 8);
    snprintf(dpg, sizeof dpg, "dp%u", r % 8);
    uint64_t id = 1, last = 0, lastdp = 0;
    for (uint32_t l = 0; l < layers; l++) { /* forward */
        uint64_t d[1] = {last};
        node(t, id, 4, d, 1, 100, 0, NULL);
        uint64_t c = id++;
        node(t, id, 7, &c, 1, 0, 8u << 20, tp);
        last = id++;
    }
    for (uint32_t l = 0; l < layers; l++) { /* backward */
        uint64_t d[1] = {last};
        node(t, id, 4, d, 1, 200, 0, NULL);
        uint64_t c = id++;
        node(t, id, 7, &c, 1, 0, 8u << 20, tp);
        last = id++;
        node(t, id, 7, &c, 1, 0, 32u << 20, dpg);
        lastdp = id++;
    }
    uint64_t d[2] = {last, lastdp};
    node(t, id, 4, d, 2, 500, 0, NULL);
}

/* The skewed trace: no TP; every layer's backward compute takes 200 + 50 x
 * (r mod 8) us on rank r, then its DP allreduce of 32 MiB (one at a time
 * per rank, after the one before): the 8 DP groups issue theirs at
 * different instants and run overlapping in time, so they are simulated
 * together (weft_sim_plans) whenever one starts while others run. */
static void gen_skewed(enc *t, uint32_t r, uint32_t layers)
{
    header(t);
    char dpg[16];
    snprintf(dpg, sizeof dpg, "dp%u", r % 8);
    uint64_t id = 1, last = 0, lastdp = 0;
    for (uint32_t l = 0; l < layers; l++) {
        uint64_t d[1] = {last};
        node(t, id, 4, d, 1, 200 + 50 * (r % 8), 0, NULL);
        uint64_t c = id++;
        last = c;
        uint64_t dd[2] = {c, lastdp};
        node(t, id, 7, dd, 2, 0, 32u << 20, dpg);
        lastdp = id++;
    }
    uint64_t d[2] = {last, lastdp};
    node(t, id, 4, d, 2, 500, 0, NULL);
}

static void run(const char *label, const char *spec, weft_chakra *w)
{
    weft_topo *t = NULL;
    weft_diag d;
    if (weft_topo_from_spec(spec, NULL, &t, &d)) {
        printf("%s: %s\n", spec, d.msg);
        return;
    }
    double w0 = bench_now(), c0 = bench_cpu();
    weft_work_ctx *c = NULL;
    weft_chakra_result r;
    if (weft_work_ctx_new(t, NULL, NULL, &c) || weft_chakra_run(c, w, NULL, &r, &d)) {
        printf("%s: failed: %s\n", label, d.msg);
    } else {
        printf("%-28s %-9s\n%-28s %6llu nodes  total %.6f s  %4u batches  %3u simulations  "
               "%3u joint (%llu batches, %u dropped)  %.4f s wall  %.4f s cpu\n",
               label, spec, "", (unsigned long long)weft_chakra_nodes(w), r.total_s, r.batches,
               r.sims, r.joint_sims, (unsigned long long)r.joint_jobs, r.joint_dropped,
               bench_now() - w0, bench_cpu() - c0);
        weft_chakra_result_fini(&r);
    }
    weft_work_ctx_free(c);
    weft_topo_free(t);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/fixtures/chakra";
    static const char *const micro[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
    double w0 = bench_now(), c0 = bench_cpu();
    for (size_t i = 0; i < 4; i++) {
        char prefix[1024];
        snprintf(prefix, sizeof prefix, "%s/%s", dir, micro[i]);
        weft_chakra *w = NULL;
        weft_diag d;
        if (weft_chakra_load(prefix, 4, &w, &d)) {
            printf("%s: %s\n", micro[i], d.msg);
            continue;
        }
        run(micro[i], "switch:4", w);
        weft_chakra_free(w);
    }
    printf("the 4 microbenchmarks, read and run: %.4f s wall, %.4f s cpu\n", bench_now() - w0,
           bench_cpu() - c0);

    enum { RANKS = 64, LAYERS = 32 };
    enc bufs[RANKS];
    const uint8_t *b[RANKS];
    size_t lens[RANKS];
    char names[RANKS][24];
    const char *np[RANKS];
    w0 = bench_now();
    c0 = bench_cpu();
    for (uint32_t r = 0; r < RANKS; r++) {
        memset(&bufs[r], 0, sizeof bufs[r]);
        gen_rank(&bufs[r], r, LAYERS);
        b[r] = bufs[r].b;
        lens[r] = bufs[r].n;
        snprintf(names[r], sizeof names[r], "gen.%u.et", r);
        np[r] = names[r];
    }
    weft_chakra *w = NULL;
    weft_diag d;
    if (weft_chakra_parse(b, lens, np, RANKS, &w, &d)) {
        printf("generated: %s\n", d.msg);
        return 0;
    }
    printf("generated 64-rank trace, encoded and parsed: %.4f s wall, %.4f s cpu\n",
           bench_now() - w0, bench_cpu() - c0);
    run("generated 64 ranks, 32 layers", "a100:8", w);
    weft_chakra_free(w);
    for (uint32_t r = 0; r < RANKS; r++) {
        free(bufs[r].b);
        memset(&bufs[r], 0, sizeof bufs[r]);
        gen_skewed(&bufs[r], r, LAYERS);
        b[r] = bufs[r].b;
        lens[r] = bufs[r].n;
    }
    w = NULL;
    if (weft_chakra_parse(b, lens, np, RANKS, &w, &d)) {
        printf("skewed: %s\n", d.msg);
        return 0;
    }
    run("skewed DP, 64 ranks", "a100:8", w);
    run("skewed DP, 64 ranks", "clos:hosts=8,rail=0,leafports=16,oversub=4", w);
    weft_chakra_free(w);
    for (uint32_t r = 0; r < RANKS; r++)
        free(bufs[r].b);
    return 0;
}
