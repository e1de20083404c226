/* Checkpoint interference (weft/ckpt.h; docs/run.md, "Checkpoints in
 * peers' memory"): 8 ranks on shared memory run an allreduce in a loop
 * while each replicates a checkpoint of BYTES (default 64 MiB) into its
 * ring neighbour's memory, and the allreduce's slowdown is printed beside
 * what the idle-time model predicts (docs/step.md, "Checkpoints": the
 * background class moves bytes only in the network's idle time, so with I
 * bytes of idle time per iteration a checkpoint of S bytes takes
 * ceil(S / I) iterations at no added time).
 *
 * Per loop (GAP = 0 us, a tight loop that leaves no idle time, and GAP =
 * 2000 us of "compute" between allreduces, a sleep, as a GPU's compute
 * leaves the host's CPUs and the network idle), 3 pairs of:
 *   base   the loop without checkpoint traffic (ITERS iterations): the
 *          median time of one allreduce, and the idle fraction of the
 *          loop, GAP / time per iteration;
 *   with   the loop while a checkpoint replicates (until every rank's
 *          helper is done): the median allreduce, and the iterations the
 *          checkpoint took;
 * and the slowdown, with / base - 1 of the medians, per pair (so the
 * drift of a shared machine's load cancels), the median pair printed.
 *   alone  the replication with the job idle (save + wait, no loop): its
 *          bandwidth B per rank;
 *   model  iterations predicted: ceil(S / (B x GAP)) at no added time
 *          when GAP > 0; without idle time strict priority never sends,
 *          and the runtime's max_defer_us lets a chunk through after 20
 *          ms of back-to-back collectives.
 * Then the restore: rank 3 drops its state (a fresh weft_ckpt, as a
 * restarted process has) and every rank joins again: rank 3's time to
 * form the job, to get its 64 MiB back from its holder, and to give its
 * own replica holder back its copy.
 *
 * 8 ranks on 2 CPUs are oversubscribed: the figures are for this machine
 * and print as measured; nothing fails on time.
 * Usage: bench_ckpt_interference [BYTES] [ALLREDUCE_BYTES] [ITERS] [idle|normal]
 * [CHUNK] (defaults 64M, 256K, 200, idle, 256K; `normal`: the helper thread
 * at normal CPU priority instead of SCHED_IDLE; CHUNK: chunk_bytes). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "parse_bytes.h"
#include "run/testing_ranks.h"
#include "weft/ckpt.h"
#include "weft/comm.h"

enum { RANKS = 8, VICTIM = 3, REPS = 3 };

typedef struct params {
    uint64_t bytes, ar_bytes;
    uint32_t iters;
    bool normal_priority;
    uint64_t chunk;
} params;

static void gap_sleep(uint32_t us)
{
    if (!us)
        return;
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { MAX_SAMPLES = 1 << 16 };

/* The loop: iters allreduces (or, when `until` is set, until the
 * checkpoint is done everywhere, at least iters), each after GAP us.
 * Writes the wall time per iteration and the median time of one allreduce
 * (each the slowest rank's) and the iterations run. */
static int loop(weft_comm *c, weft_ckpt *k, float *buf, size_t count, uint32_t gap, uint32_t iters,
                bool until, double *per_iter, double *median, uint32_t *done)
{
    weft_diag d;
    weft_diag_clear(&d);
    static double samples[MAX_SAMPLES];
    double t0 = bench_now();
    uint32_t i = 0;
    for (;; i++) {
        /* Every rank must agree whether to go on: the flag rides on the
         * allreduce's last element. */
        gap_sleep(gap);
        buf[count - 1] = until && k && weft_ckpt_busy(k) ? 1.0f : 0.0f;
        double a = bench_now();
        if (weft_allreduce(c, buf, buf, count, WEFT_FLOAT, WEFT_MAX, &d)) {
            printf("rank %u: %s\n", weft_comm_rank(c), d.msg);
            return 1;
        }
        if (i < MAX_SAMPLES)
            samples[i] = bench_now() - a;
        if (i + 1 >= iters && !(until && buf[count - 1] > 0))
            break;
    }
    uint32_t n = i + 1 < MAX_SAMPLES ? i + 1 : MAX_SAMPLES;
    qsort(samples, n, sizeof *samples, cmp_double);
    double m[2] = {(bench_now() - t0) / (i + 1), samples[n / 2]};
    weft_allreduce(c, m, m, 2, WEFT_DOUBLE, WEFT_MAX, &d);
    *per_iter = m[0];
    *median = m[1];
    *done = i + 1;
    return 0;
}

static int body(const weft_comm_config *cfg, void *arg)
{
    const params *p = arg;
    weft_diag d;
    weft_diag_clear(&d);
    weft_ckpt_config cc;
    weft_ckpt_config_init(&cc);
    cc.normal_priority = p->normal_priority;
    cc.chunk_bytes = p->chunk;
    weft_ckpt *k;
    unsigned char *state = malloc(p->bytes);
    size_t count = p->ar_bytes / sizeof(float);
    float *buf = calloc(count, sizeof *buf);
    if (!state || !buf || weft_ckpt_new(&cc, &k, &d) ||
        weft_ckpt_register(k, state, p->bytes, &d)) {
        printf("rank %u: setup: %s\n", cfg->rank, d.msg);
        return 1;
    }
    for (size_t i = 0; i < p->bytes; i++)
        state[i] = (unsigned char)(i * 131 + cfg->rank);
    uint64_t v;
    if (weft_ckpt_join(k, cfg, &v, &d)) {
        printf("rank %u: join: %s\n", cfg->rank, d.msg);
        return 1;
    }
    weft_comm *c = weft_ckpt_comm(k);
    bool r0 = cfg->rank == 0;
    /* alone: the replication with nothing else running, once both
     * snapshot and both replica slots were written (the first two saves
     * fault their pages in). */
    double a0 = 0;
    for (uint64_t s = 1; s <= 3; s++) {
        if (s == 3)
            a0 = bench_now();
        if (weft_ckpt_save(k, s, &d) || weft_ckpt_wait(k, &d)) {
            printf("rank %u: save: %s\n", cfg->rank, d.msg);
            return 1;
        }
    }
    double alone = bench_now() - a0;
    weft_allreduce(c, &alone, &alone, 1, WEFT_DOUBLE, WEFT_MAX, &d);
    double bw = (double)p->bytes / alone;
    if (r0)
        printf("helper priority: %s, chunks of %.0f KiB\n",
               p->normal_priority ? "normal" : "SCHED_IDLE",
               (double)(p->chunk ? p->chunk : WEFT_CKPT_DEFAULT_CHUNK) / 1024);
    if (r0)
        printf("replication alone: %.1f MiB per rank to its ring neighbour in %.1f ms, %.2f GB/s "
               "per rank\n",
               (double)p->bytes / 1048576, alone * 1e3, bw / 1e9);
    static const uint32_t gaps[] = {0, 2000};
    uint64_t version = 3;
    for (size_t g = 0; g < sizeof gaps / sizeof *gaps; g++) {
        /* REPS pairs of a loop without and a loop with checkpoint
         * traffic, each pair's slowdown its own ratio, so that the drift
         * of a shared machine's load between pairs cancels. */
        double slow[REPS], base = 0, took = 0;
        uint32_t n_with[REPS];
        for (int rep = 0; rep < REPS; rep++) {
            double b_iter, b_med, w_iter, w_med;
            uint32_t n_base;
            if (loop(c, NULL, buf, count, gaps[g], p->iters, false, &b_iter, &b_med, &n_base))
                return 1;
            if (weft_ckpt_save(k, ++version, &d)) {
                printf("rank %u: save: %s\n", cfg->rank, d.msg);
                return 1;
            }
            if (loop(c, k, buf, count, gaps[g], 1, true, &w_iter, &w_med, &n_with[rep]) ||
                weft_ckpt_wait(k, &d))
                return 1;
            slow[rep] = w_med / b_med - 1;
            base += b_iter / REPS;
            took += w_iter * n_with[rep] / REPS;
            if (r0)
                printf("  pair %d: allreduce median %.3f ms alone, %.3f ms while the checkpoint "
                       "moves (%u iterations, %.1f ms): %+.1f%%\n",
                       rep + 1, b_med * 1e3, w_med * 1e3, n_with[rep], w_iter * n_with[rep] * 1e3,
                       slow[rep] * 100);
        }
        if (!r0)
            continue;
        qsort(slow, REPS, sizeof *slow, cmp_double);
        double idle = gaps[g] * 1e-6 / base;
        printf("loop: allreduce %.0f KiB, %u us compute between: %.3f ms an iteration, idle "
               "%.1f%%: allreduce slowdown %+.1f%% (median of %d pairs; %+.1f .. %+.1f%%)\n",
               (double)p->ar_bytes / 1024, gaps[g], base * 1e3, idle * 100, slow[REPS / 2] * 100,
               REPS, slow[0] * 100, slow[REPS - 1] * 100);
        if (gaps[g]) {
            double per = bw * gaps[g] * 1e-6;
            printf("  model: I = %.2f MiB of idle time an iteration at %.2f GB/s, S = %.1f MiB: "
                   "%u iterations at no added time (0%% slowdown)\n",
                   per / 1048576, bw / 1e9, (double)p->bytes / 1048576,
                   (unsigned)ceil((double)p->bytes / per));
        } else {
            printf("  model: no idle time: strict priority would never send; the runtime sends "
                   "a chunk after %u us of back-to-back collectives: the checkpoint takes "
                   "%.1f ms here (alone %.1f ms)\n",
                   WEFT_CKPT_DEFAULT_MAX_DEFER_US, took * 1e3, alone * 1e3);
        }
    }
    /* The restore: rank VICTIM loses its memory. */
    weft_ckpt *fresh = k;
    if (cfg->rank == VICTIM) {
        weft_ckpt_free(k);
        memset(state, 0, p->bytes);
        if (weft_ckpt_new(&cc, &fresh, &d) || weft_ckpt_register(fresh, state, p->bytes, &d))
            return 1;
    }
    double j0 = bench_now();
    if (weft_ckpt_join(fresh, cfg, &v, &d)) {
        printf("rank %u: rejoin: %s\n", cfg->rank, d.msg);
        return 1;
    }
    double joined = bench_now() - j0;
    if (cfg->rank == VICTIM) {
        size_t bad = 0;
        for (size_t i = 0; i < p->bytes; i++)
            bad += state[i] != (unsigned char)(i * 131 + cfg->rank);
        weft_ckpt_join_info ji;
        weft_ckpt_join_info_get(fresh, &ji);
        printf("restore: rank %u got version %" PRIu64 " (%.1f MiB) from rank %u%s: join %.1f ms = "
               "form %.1f + restore %.1f (%.2f GB/s) + re-protect %.1f ms\n",
               cfg->rank, v, (double)ji.bytes / 1048576, ji.source,
               bad ? " WRONG BYTES" : ", byte-exact", joined * 1e3, ji.form_s * 1e3,
               ji.restore_s * 1e3, ji.restore_s > 0 ? (double)ji.bytes / ji.restore_s / 1e9 : 0,
               ji.reprotect_s * 1e3);
    }
    weft_ckpt_free(fresh);
    free(state);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    params p = {.bytes = 64u << 20, .ar_bytes = 256u << 10, .iters = 200};
    if (argc > 1 && !(p.bytes = bench_parse_bytes(argv[1])))
        return 2;
    if (argc > 2 && !(p.ar_bytes = bench_parse_bytes(argv[2])))
        return 2;
    if (argc > 3)
        p.iters = (uint32_t)strtoul(argv[3], NULL, 10);
    p.normal_priority = argc > 4 && strcmp(argv[4], "normal") == 0;
    if (argc > 5)
        p.chunk = bench_parse_bytes(argv[5]);
    if (p.ar_bytes < sizeof(float) || !p.iters)
        return 2;
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    int codes[RANKS];
    fflush(stdout);
    if (weft__test_ranks(RANKS, &cfg, body, NULL, &p, 600000, codes, NULL))
        return 1;
    int status = 0;
    for (uint32_t r = 0; r < RANKS; r++) {
        if (codes[r]) {
            printf("rank %u exited %d\n", r, codes[r]);
            status = 1;
        }
    }
    return status;
}
