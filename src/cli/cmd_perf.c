/* Over 900 lines on purpose: one command's flags, timing loop and printing;
 * the registry work of issue 29 moves its selection out, after which it splits. */
/* weft perf COLL [-b MIN -e MAX -f FACTOR -n ITERS -w WARMUP -c CHECK
 *                 -d TYPE -o OP -r ROOT]: the nccl-tests table, measured on
 * the real runtime (weft/comm.h). Run it under `weft launch -n N --` (or
 * alone, as one rank). Rank 0 prints; every rank checks its own results.
 * `weft perf alltoall --traffic FILE` measures the skewed all-to-all of a
 * traffic matrix (weft/traffic.h) with weft_alltoallv, or with an
 * alltoallv plan of that matrix (--plan, WEFT_PLAN). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/flagvals.h"
#include "cli/json.h"
#include "cli/mpi/cli_mpi.h"
#include "cli/perf_sparse.h"
#include "cli/sizes.h"
#include "cli/svg_plot.h"
#include "weft/comm.h"
#include "weft/log.h"
#include "weft/synth.h"
#include "weft/topo.h"
#include "weft/traffic.h"

static const cli_opt perf_opts[] = {
    {"minbytes", 'b', "SIZE",
     "smallest size: 4096, 64K, 1.5G, 1GiB (as weft sim --size; default 8)"},
    {"maxbytes", 'e', "SIZE", "largest size (default 32M)"},
    {"stepfactor", 'f', "F", "multiply the size by F each step, F >= 2 (default 2)"},
    {"iters", 'n', "N", "timed iterations per size (default 20)"},
    {"warmup_iters", 'w', "N", "untimed iterations before them (default 5)"},
    {"check", 'c', "0|1", "1: check every element of every result exactly (default 1)"},
    {"datatype", 'd', "TYPE", "int8 .. uint64, half, bfloat16, float, double (default float)"},
    {"op", 'o', "OP", "sum, prod, min or max (default sum)"},
    {"root", 'r', "RANK", "root of broadcast and reduce (default 0)"},
    {"average", 'a', "0..3", "time over ranks: 0 rank 0's, 1 mean, 2 least, 3 largest (default 3)"},
    {"blocking", 'z', "0..3",
     "1: barrier after each call, timed; 3: not timed; 0, 2: none (default 0)"},
    {"run_cycles", 'N', "N",
     "run the whole sweep N times, printing each (0: until killed; default 1)"},
    {"ngpus", 'g', "1", "GPUs per thread: only 1 (one rank per process)"},
    {"nthreads", 't', "1", "threads per process: only 1 (one rank per process)"},
    {"cudagraph", 'G', "0", "CUDA graph launches: only 0 (the runtime runs on CPUs)"},
    {"plan", 0, "FILE", "run this plan (.plan) instead of the schedule chosen per call"},
    {"json", 0, NULL, "rank 0 prints one JSON object instead of the table"},
    {"plot", 0, "FILE", "rank 0 also writes busbw against size as an SVG plot"},
    {"traffic", 0, "FILE", "alltoall only: per-pair bytes of a traffic matrix (weft_alltoallv)"},
    CLI_PERF_SPARSE_OPTS,
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup perf_group = {"options (the names of nccl-tests)", perf_opts, false};

static const cli_syntax perf_syntax = {
    .path = "weft perf",
    .args = "COLL [-b MIN] [-e MAX] [-f F] [-n ITERS] [-w WARMUP] [-c 0|1] [-d TYPE] [-o OP]\n"
            "        [-r ROOT] [-a 0..3] [-z 0..3] [-N CYCLES] [--plan FILE] [--json]\n"
            "        [--plot FILE.svg] [--traffic FILE] [--density D [--skew zipf:S]]\n"
            "        [--compress int8[:B]|topk:D]",
    .about = "Measures a collective on the real runtime and prints the nccl-tests table:\n"
             "size (B), count (elements), type, redop, root, then for out-of-place and\n"
             "in-place the time per call (us, averaged over ITERS, then combined over\n"
             "ranks as -a says: by default the slowest rank's, where nccl-tests takes\n"
             "the mean), algbw = size / time, busbw = algbw * factor (GB/s = 1e9 B/s)\n"
             "and #wrong, the number of result elements that differ from the exact\n"
             "expected value, summed over ranks (N/A with -c 0). COLL is allreduce,\n"
             "allgather, reducescatter, broadcast, reduce or alltoall. For allgather the\n"
             "size is the total output, for reducescatter the total input, for alltoall\n"
             "one rank's input; sizes are rounded down to whole elements per rank and to\n"
             "whole chunks of a forced plan or algorithm (--plan, WEFT_PLAN, WEFT_ALGO),\n"
             "which must divide the data; the header names what is forced.\n"
             "Factors: 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter\n"
             "and alltoall, 1 for broadcast and reduce. With one rank an in-place call\n"
             "moves nothing: its algbw and busbw are N/A (its time is still shown).\n"
             "-g, -t and -G are nccl-tests' GPUs per thread, threads per process and CUDA\n"
             "graph launches: weft runs one rank per process on CPUs, so only their\n"
             "neutral values (1, 1, 0) are accepted. Calls return when their data is in\n"
             "place, so -z 0 and -z 2 time the same.\n"
             "With --json rank 0 prints one object: coll, ranks, transport, iters, warmup,\n"
             "check, schedule, average, blocking, cycles, rows (cycle, size, count, type,\n"
             "redop, root, out_of_place and in_place: time_s, algbw, busbw, wrong; null\n"
             "for N/A), wrong_total, avg_busbw, ok and error. With WEFT_LOG, each log\n"
             "line of a rank of several names it: 'weft INFO run: rank R: ...'. The\n"
             "transport is how rank 0 reaches its peers: self, shm, tcp, or shm+tcp when\n"
             "host-mates share memory and other hosts are over TCP (WEFT_HOST).\n"
             "\n"
             "Run it as N ranks with 'weft launch -n N -- weft perf ...' (each rank reads\n"
             "WEFT_RANK, WEFT_SIZE, WEFT_ADDR, WEFT_SECRET; see docs/run.md) or, when\n"
             "weft was built with MPI, with 'mpirun -np N weft perf ...' (MPI only\n"
             "bootstraps; data goes through weft's transports). Otherwise it runs as a\n"
             "single rank. Exit 1 when a result is wrong or a rank fails.\n"
             "--plot FILE.svg: rank 0 draws the out-of-place and in-place busbw against\n"
             "size (log scale) once every size has run; FILE must end in .svg.\n"
             "--traffic FILE (alltoall only): every rank sends every rank the bytes the\n"
             "traffic matrix FILE gives (docs/traffic-format.md; N ranks, N x N entries,\n"
             "each a whole number of -d elements) with weft_alltoallv, one row: size S is\n"
             "the matrix's total / N (the mean bytes a rank sends, shown rounded; weft sim\n"
             "--traffic and weft plan --traffic use the same S), algbw = S / time, busbw =\n"
             "algbw * (n-1)/n; in place only when the matrix is symmetric (else N/A). -b,\n"
             "-e and -f do not apply. With --plan P (an alltoallv plan: weft plan --traffic) or\n"
             "WEFT_PLAN=P, the plan runs (weft_comm_plan_run_v, weft_alltoallv), and its\n"
             "matrix must be FILE's (docs/run.md, \"Alltoallv plans\"). --plan P of an\n"
             "alltoallv plan without --traffic runs the plan's own matrix.\n"
             "--density D [--skew zipf:S] (allreduce): each size also runs the sparse all-reduce\n"
             "(weft_allreduce_sparse) of a tensor with D of its elements non-zero on each rank,\n"
             "beside the dense weft_allreduce of the same tensor; --compress int8[:B] the int8\n"
             "two-shot all-reduce (weft_allreduce_int8), --compress topk:D top-k with error\n"
             "feedback then the sparse all-reduce. Their own table: time and algbw of both and\n"
             "the speedup; sizes 1M .. 16M unless -b, -e (docs/compression.md).\n",
    .groups = {&perf_group},
    .pos_names = {"COLL"},
    .min_pos = 1,
    .max_pos = 1,
};

typedef enum {
    C_ALLREDUCE,
    C_ALLGATHER,
    C_REDUCESCATTER,
    C_BROADCAST,
    C_REDUCE,
    C_ALLTOALL
} coll_kind;

typedef struct perf {
    weft_comm *c;
    coll_kind coll;
    weft_dtype dtype;
    weft_redop op;
    uint32_t root, n, rank;
    long iters, warmup;
    long average;  /* -a: AVG_RANK0 .. AVG_MAX */
    long blocking; /* -z: 0 .. 3 */
    long cycles;   /* -N: sweeps, 0 = until killed */
    bool check, json;
    unsigned char *send, *recv;
    weft_comm_plan *plan;              /* NULL: the built-in collectives */
    uint32_t chunks;                   /* the forced plan's or algorithm's, else 1 */
    char schedule[WEFT_DIAG_MSG_SIZE]; /* what the header says runs (whole paths) */
    /* --traffic: this rank's counts and displacements in elements (size_t
     * [4][n]: send counts, send displs, recv counts, recv displs), the
     * row's size S = the matrix's total / N exactly (the definition of
     * weft_plan_traffic_size, so algbw = S / time is weft sim's; docs/run.md)
     * and S / element size rounded (the count column), and whether it is
     * symmetric. */
    size_t *tv;
    double tsize, tcount;
    bool tsym;
} perf;

/* -b and -e: the size grammar of every command (cli/sizes.h), at most
 * 2^40 bytes. */
#define PERF_SIZE_WANT CLI_SIZE_GRAMMAR "; at most 2^40 bytes"

static bool parse_size(const char *s, size_t *out)
{
    uint64_t v;
    const char *why;
    if (!cli_parse_size(s, strlen(s), &v, &why) || v > (1ULL << 40))
        return false;
    *out = (size_t)v;
    return true;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return false;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Rank r's input element i: small integers, so every reduction is exact in
 * every type and in any order (products stay powers of two). */
static double input(const perf *p, uint32_t r, size_t i)
{
    if (p->op == WEFT_PROD)
        return (r + i) % 3 == 0 ? 2 : 1;
    return (double)((r * 7 + i) % 11) - 5;
}

static void fill(const perf *p, void *buf, uint32_t r, size_t first, size_t count)
{
    for (size_t i = 0; i < count; i++)
        weft_dtype_store(p->dtype, buf, i, input(p, r, first + i));
}

/* Wrong elements among out[0..count), which should hold element first.. of
 * the reduction over ranks (reduce) or of rank src's input. */
static size_t count_wrong(const perf *p, const unsigned char *out, size_t first, size_t count,
                          bool reduce, uint32_t src)
{
    enum { CHUNK = 4096 };
    unsigned char want[CHUNK * 8], tmp[CHUNK * 8];
    size_t es = weft_dtype_size(p->dtype), wrong = 0;
    for (size_t at = 0; at < count; at += CHUNK) {
        size_t k = count - at < CHUNK ? count - at : CHUNK;
        fill(p, want, reduce ? 0 : src, first + at, k);
        for (uint32_t r = 1; reduce && r < p->n; r++) {
            fill(p, tmp, r, first + at, k);
            weft_reduce_local(want, tmp, k, p->dtype, p->op);
        }
        for (size_t i = 0; i < k; i++)
            wrong += memcmp(out + (at + i) * es, want + i * es, es) != 0;
    }
    return wrong;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One call of the collective on count elements per rank (the unit each
 * collective's API takes). */
static weft_err run_once(perf *p, size_t count, bool in_place, weft_diag *d)
{
    size_t es = weft_dtype_size(p->dtype);
    unsigned char *s = p->send, *r = p->recv;
    if (p->tv) {
        size_t n = p->n, *tv = p->tv;
        if (p->plan)
            return weft_comm_plan_run_v(p->plan, in_place ? r : s, tv, tv + n, r, tv + 2 * n,
                                        tv + 3 * n, p->dtype, d);
        return weft_alltoallv(p->c, in_place ? r : s, tv, tv + n, r, tv + 2 * n, tv + 3 * n,
                              p->dtype, d);
    }
    if (p->plan) {
        const void *in = in_place ? r : s;
        void *out = r;
        if (p->coll == C_ALLGATHER && in_place)
            in = r + p->rank * count * es;
        if (p->coll == C_REDUCESCATTER) {
            in = s;
            out = in_place ? s + p->rank * count * es : r;
        }
        return weft_comm_plan_run(p->plan, in, out, count, p->dtype, p->op, d);
    }
    switch (p->coll) {
    case C_ALLREDUCE:
        return weft_allreduce(p->c, in_place ? r : s, r, count, p->dtype, p->op, d);
    case C_ALLGATHER:
        return weft_allgather(p->c, in_place ? r + p->rank * count * es : s, r, count, p->dtype, d);
    case C_REDUCESCATTER:
        return weft_reduce_scatter(p->c, s, in_place ? s + p->rank * count * es : r, count,
                                   p->dtype, p->op, d);
    case C_BROADCAST:
        return weft_broadcast(p->c, in_place ? r : s, r, count, p->dtype, p->root, d);
    case C_REDUCE:
        return weft_reduce(p->c, in_place ? r : s, r, count, p->dtype, p->op, p->root, d);
    case C_ALLTOALL:
        return weft_alltoall(p->c, in_place ? r : s, r, count, p->dtype, d);
    }
    return WEFT_EINVAL;
}

/* Fills the inputs, runs once, and counts wrong elements of this rank. */
static weft_err checked_run(perf *p, size_t count, bool in_place, size_t *wrong, weft_diag *d)
{
    size_t es = weft_dtype_size(p->dtype);
    uint32_t n = p->n, me = p->rank;
    if (p->tv) {
        /* Block for rank j holds rank me's input from element j * TRAFFIC_STEP. */
        enum { TRAFFIC_STEP = 7919 };
        const size_t *tv = p->tv;
        for (uint32_t j = 0; j < n; j++) {
            if (in_place)
                fill(p, p->recv + tv[3 * n + j] * es, me, (size_t)j * TRAFFIC_STEP, tv[2 * n + j]);
            else
                fill(p, p->send + tv[n + j] * es, me, (size_t)j * TRAFFIC_STEP, tv[j]);
        }
        weft_err e = run_once(p, count, in_place, d);
        *wrong = 0;
        for (uint32_t j = 0; !e && j < n; j++)
            *wrong += count_wrong(p, p->recv + tv[3 * n + j] * es, (size_t)me * TRAFFIC_STEP,
                                  tv[2 * n + j], false, j);
        return e;
    }
    switch (p->coll) {
    case C_ALLREDUCE:
    case C_REDUCE:
        fill(p, in_place ? p->recv : p->send, me, 0, count);
        break;
    case C_ALLTOALL:
        fill(p, in_place ? p->recv : p->send, me, 0, count * n);
        break;
    case C_ALLGATHER:
        fill(p, in_place ? p->recv + me * count * es : p->send, me, me * count, count);
        break;
    case C_REDUCESCATTER:
    case C_BROADCAST:
        fill(p, p->coll == C_BROADCAST && in_place ? p->recv : p->send, me, 0,
             p->coll == C_BROADCAST ? count : count * n);
        break;
    }
    weft_err e = run_once(p, count, in_place, d);
    if (e)
        return e;
    switch (p->coll) {
    case C_ALLREDUCE:
        *wrong = count_wrong(p, p->recv, 0, count, true, 0);
        break;
    case C_ALLGATHER:
        *wrong = 0;
        for (uint32_t r = 0; r < n; r++)
            *wrong += count_wrong(p, p->recv + r * count * es, r * count, count, false, r);
        break;
    case C_REDUCESCATTER:
        *wrong = count_wrong(p, in_place ? p->send + me * count * es : p->recv, me * count, count,
                             true, 0);
        break;
    case C_BROADCAST:
        *wrong = count_wrong(p, p->recv, 0, count, false, p->root);
        break;
    case C_REDUCE:
        *wrong = me == p->root ? count_wrong(p, p->recv, 0, count, true, 0) : 0;
        break;
    case C_ALLTOALL: /* block r came from rank r: its input block me */
        *wrong = 0;
        for (uint32_t r = 0; r < n; r++)
            *wrong += count_wrong(p, p->recv + r * count * es, me * count, count, false, r);
        break;
    }
    return WEFT_OK;
}

/* How combine() merges one value over the ranks: the -a modes of
 * nccl-tests (0 rank 0's, 1 the mean, 2 the least, 3 the largest), and a
 * plain sum for the counts of wrong elements. */
enum { AVG_RANK0 = 0, AVG_MEAN = 1, AVG_MIN = 2, AVG_MAX = 3, AVG_SUM = 4 };

static const char *const average_text[] = {"rank 0's", "mean over ranks", "least over ranks",
                                           "max over ranks"};

/* Combines one value over the ranks (how: an AVG_ mode) at rank 0 and hands
 * the result back, by point to point: perf's own bookkeeping must not go
 * through the schedule selection, where a forced WEFT_ALGO or WEFT_PLAN
 * does not fit a single element. */
static weft_err combine(perf *p, double *v, int how, weft_diag *d)
{
    weft_err e = WEFT_OK;
    if (p->rank != 0) {
        e = weft_send(p->c, 0, v, sizeof *v, d);
        return e ? e : weft_recv(p->c, 0, v, sizeof *v, d);
    }
    for (uint32_t r = 1; r < p->n && !e; r++) {
        double x = 0;
        e = weft_recv(p->c, r, &x, sizeof x, d);
        if (how == AVG_MAX)
            *v = x > *v ? x : *v;
        else if (how == AVG_MIN)
            *v = x < *v ? x : *v;
        else if (how == AVG_MEAN || how == AVG_SUM)
            *v += x;
    }
    if (how == AVG_MEAN)
        *v /= p->n;
    for (uint32_t r = 1; r < p->n && !e; r++)
        e = weft_send(p->c, r, v, sizeof *v, d);
    return e;
}

/* Seconds per call, combined over the ranks as -a says. -z as nccl-tests:
 * a weft call returns only when its data is in place, so 0 (no wait) and 2
 * (wait, no barrier) time the same; 1 adds a barrier after each call,
 * inside the time; 3 a barrier after each call, outside the time. */
static weft_err timed(perf *p, size_t count, bool in_place, double *secs, weft_diag *d)
{
    weft_err e = WEFT_OK;
    for (long i = 0; i < p->warmup && !e; i++) {
        e = run_once(p, count, in_place, d);
        if (!e && p->blocking == 1)
            e = weft_comm_barrier(p->c, d);
    }
    if (!e)
        e = weft_comm_barrier(p->c, d);
    double t0 = now_s(), busy = 0;
    for (long i = 0; i < p->iters && !e; i++) {
        double s = now_s();
        e = run_once(p, count, in_place, d);
        if (!e && p->blocking == 1)
            e = weft_comm_barrier(p->c, d);
        if (!e && p->blocking == 3) {
            busy += now_s() - s;
            e = weft_comm_barrier(p->c, d);
        }
    }
    double t = ((p->blocking == 3 ? busy : now_s() - t0)) / (double)(p->iters ? p->iters : 1);
    if (!e)
        e = combine(p, &t, p->average, d);
    *secs = t;
    return e;
}

/* One half of a row (out of place or in place). */
typedef struct half {
    double secs;
    double algbw, busbw; /* GB/s; meaningless when !moved */
    bool moved;          /* false: one rank in place, no byte moves */
    bool skip;           /* not run (--traffic in place, matrix not symmetric) */
    uint64_t wrong;
} half;

static void time_text(char *buf, size_t size, double secs)
{
    double us = secs * 1e6;
    /* Seven characters, as nccl-tests: fewer decimals for long times. */
    snprintf(buf, size, us < 1e4 ? "%7.2f" : us < 1e5 ? "%7.1f" : "%7.0f", us);
}

static void json_half(cli_json *j, const char *key, const half *h, bool check)
{
    cli_json_key(j, key);
    if (h->skip) {
        cli_json_null(j);
        return;
    }
    cli_json_begin_object(j);
    cli_json_kv_double(j, "time_s", h->secs);
    if (h->moved) {
        cli_json_kv_double(j, "algbw", h->algbw);
        cli_json_kv_double(j, "busbw", h->busbw);
    } else {
        cli_json_key(j, "algbw");
        cli_json_null(j);
        cli_json_key(j, "busbw");
        cli_json_null(j);
    }
    if (check)
        cli_json_kv_uint(j, "wrong", h->wrong);
    else {
        cli_json_key(j, "wrong");
        cli_json_null(j);
    }
    cli_json_end_object(j);
}

/* A log sink that names the rank after the level and subsystem, as the
 * MPI interposition library does ("weft INFO run: rank 1: allreduce ..."),
 * so that lines stay greppable by level and subsystem, and writes each
 * line whole (one fprintf of one buffer): the lines of several ranks do not
 * mix. */
static void rank_log(weft_log_level level, const char *line, void *arg)
{
    (void)level;
    const char *colon = strstr(line, ": ");
    int head = colon ? (int)(colon - line) + 2 : 0;
    fprintf(stderr, "%.*srank %u: %s\n", head, line, *(const uint32_t *)arg, line + head);
}

/* How rank 0 reaches its peers: "self" alone, "shm" or "tcp" when every
 * peer is reached one way, "shm+tcp" when host-mates share memory and other
 * hosts are over TCP (WEFT_HOST, docs/netns.md). */
static const char *perf_transport(const perf *p)
{
    if (p->n < 2)
        return "self";
    const char *first = weft_comm_transport(p->c, 1);
    for (uint32_t r = 2; r < p->n; r++)
        if (strcmp(weft_comm_transport(p->c, r), first) != 0)
            return "shm+tcp";
    return first;
}

/* The measured busbw of every size, out of place and in place, as an SVG
 * plot (rank 0, after the table). */
static int plot_perf(const char *path, const perf *p, const char *coll, const uint64_t *sizes,
                     const double *bus, size_t n)
{
    char title[320];
    snprintf(title, sizeof title, "weft perf %s: %u ranks, transport %s, measured", coll, p->n,
             perf_transport(p));
    cli_plot_series s[2] = {{"out-of-place", sizes, bus, n, false},
                            {"in-place", sizes, bus + n, n, false}};
    cli_plot plot = {title, "size (bytes; K, M, G = 2^10, 2^20, 2^30)", "busbw (GB/s)", s, 2};
    return cli_plot_write(path, &plot);
}

static int run_perf(perf *p, size_t minb, size_t maxb, long factor, const char *plot)
{
    size_t es = weft_dtype_size(p->dtype);
    bool per_rank = p->coll == C_ALLGATHER || p->coll == C_REDUCESCATTER || p->coll == C_ALLTOALL;
    size_t unit = p->tv ? 1 : es * (per_rank ? p->n : 1) * p->chunks;
    size_t sbytes = maxb + unit, rbytes = maxb + unit;
    if (p->tv) { /* this rank's row and column, in place the column */
        sbytes = rbytes = es;
        for (uint32_t j = 0; j < p->n; j++) {
            sbytes += p->tv[j] * es;
            rbytes += p->tv[2 * p->n + j] * es;
        }
    }
    p->send = malloc(sbytes);
    p->recv = malloc(rbytes);
    if (!p->send || !p->recv) {
        cli_error("perf: cannot allocate two buffers of %zu bytes", maxb);
        free(p->send);
        free(p->recv);
        return CLI_EXIT_INPUT;
    }
    static const char *const names[] = {"allreduce", "allgather", "reducescatter",
                                        "broadcast", "reduce",    "alltoall"};
    static const char *const blocking_text[] = {
        "no barrier between calls", "a barrier after each call, timed", "no barrier between calls",
        "a barrier after each call, not timed"};
    bool rooted = p->coll == C_BROADCAST || p->coll == C_REDUCE;
    double factor_bus = p->coll == C_ALLREDUCE ? 2.0 * (p->n - 1) / p->n
                        : rooted               ? 1.0
                                               : (double)(p->n - 1) / p->n;
    bool reduces = p->coll == C_ALLREDUCE || p->coll == C_REDUCESCATTER || p->coll == C_REDUCE;
    const char *transport = perf_transport(p);
    bool print = p->rank == 0;
    cli_json j;
    if (print && p->json) {
        cli_json_init(&j, stdout);
        cli_json_begin_object(&j);
        cli_json_kv_string(&j, "coll", names[p->coll]);
        cli_json_kv_uint(&j, "ranks", p->n);
        cli_json_kv_string(&j, "transport", transport);
        cli_json_kv_int(&j, "iters", p->iters);
        cli_json_kv_int(&j, "warmup", p->warmup);
        cli_json_kv_bool(&j, "check", p->check);
        cli_json_kv_string(&j, "schedule", p->schedule);
        cli_json_kv_int(&j, "average", p->average);
        cli_json_kv_int(&j, "blocking", p->blocking);
        cli_json_kv_int(&j, "cycles", p->cycles);
        cli_json_key(&j, "rows");
        cli_json_begin_array(&j);
    } else if (print) {
        printf("# weft perf %s: %u ranks, transport %s, %ld iterations, %ld warmup, check %d, "
               "%s\n",
               names[p->coll], p->n, transport, p->iters, p->warmup, p->check ? 1 : 0, p->schedule);
        if (p->tv)
            printf("# size: the matrix's total / N (the mean bytes a rank sends, as weft sim); "
                   "in place: %s\n",
                   p->tsym ? "the symmetric matrix, weft_alltoallv in place"
                           : "N/A (the matrix is not symmetric)");
        printf("# time: %s (-a %ld), %s (-z %ld)\n", average_text[p->average], p->average,
               blocking_text[p->blocking], p->blocking);
        printf("#\n");
        printf("# %10s  %12s  %8s  %6s  %6s  %34s  %34s\n", "", "", "", "", "", "out-of-place",
               "in-place");
        printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
               "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
               "algbw", "busbw", "#wrong");
        printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
               "");
    }
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    unsigned long long total_wrong = 0;
    double bus_sum = 0;
    int rows = 0;
    /* With --plot: every size's bytes and busbw (out of place, then in
     * place) of the first cycle; NaN (left out of the plot) where nothing
     * moves. */
    size_t nsizes = 0, cap = 0;
    uint64_t *xs = NULL;
    double *bus = NULL;
    if (plot && print) {
        for (size_t size = minb; size <= maxb; size *= (size_t)factor) {
            cap++;
            if (size == 0 || size > maxb / (size_t)factor)
                break;
        }
        xs = calloc(cap, sizeof *xs);
        bus = calloc(2 * cap, sizeof *bus);
        if (!xs || !bus)
            e = weft_diag_code(&d, WEFT_ENOMEM);
    }
    for (long cycle = 0; (p->cycles == 0 || cycle < p->cycles) && !e; cycle++) {
        for (size_t size = minb; size <= maxb && !e; size *= (size_t)factor) {
            size_t bytes = size / unit * unit;
            size_t count = bytes / (es * (per_rank ? p->n : 1)); /* per the collective's API */
            half h[2];
            for (int ip = 0; ip < 2 && !e; ip++) {
                h[ip].wrong = 0;
                h[ip].skip = ip == 1 && p->tv && !p->tsym;
                h[ip].secs = 0;
                h[ip].moved = false;
                if (h[ip].skip) {
                    if (bus && cycle == 0 && nsizes < cap)
                        bus[(size_t)ip * cap + nsizes] = NAN;
                    continue;
                }
                if (p->check) {
                    size_t w = 0;
                    e = checked_run(p, count, ip == 1, &w, &d);
                    double sum = (double)w; /* exact below 2^53 elements */
                    if (!e)
                        e = combine(p, &sum, AVG_SUM, &d);
                    h[ip].wrong = (uint64_t)sum;
                }
                h[ip].secs = 0;
                if (!e)
                    e = timed(p, count, ip == 1, &h[ip].secs, &d);
                /* One rank in place: the collective leaves its buffer as it
                 * is, so no byte moves and a rate would only measure the
                 * call's overhead (45,491 GB/s once); out of place it copies
                 * between the two buffers, which is a rate. */
                h[ip].moved = !(ip == 1 && p->n == 1);
                double moved = p->tv ? p->tsize : (double)bytes; /* exact S */
                h[ip].algbw = h[ip].secs > 0 ? moved / h[ip].secs / 1e9 : 0;
                h[ip].busbw = h[ip].algbw * factor_bus;
                total_wrong += h[ip].wrong;
                if (h[ip].moved) {
                    bus_sum += h[ip].busbw;
                    rows++;
                }
                if (bus && cycle == 0 && nsizes < cap)
                    bus[(size_t)ip * cap + nsizes] = h[ip].moved ? h[ip].busbw : NAN;
            }
            if (xs && cycle == 0 && nsizes < cap)
                xs[nsizes++] = bytes;
            if (!e && print && p->json) {
                cli_json_begin_object(&j);
                cli_json_kv_int(&j, "cycle", cycle);
                cli_json_kv_uint(&j, "size", bytes);
                cli_json_kv_uint(&j, "count", p->tv ? (uint64_t)llround(p->tcount) : bytes / es);
                cli_json_kv_string(&j, "type", weft_dtype_name(p->dtype));
                cli_json_kv_string(&j, "redop", reduces ? weft_redop_name(p->op) : NULL);
                cli_json_kv_int(&j, "root", rooted ? (int)p->root : -1);
                json_half(&j, "out_of_place", &h[0], p->check);
                json_half(&j, "in_place", &h[1], p->check);
                cli_json_end_object(&j);
            } else if (!e && print) {
                char line[256], t[2][32], bw[4][16], w[2][32];
                for (int ip = 0; ip < 2; ip++) {
                    time_text(t[ip], sizeof t[ip], h[ip].secs);
                    if (h[ip].skip)
                        snprintf(t[ip], sizeof t[ip], "%7s", "N/A");
                    if (h[ip].moved) {
                        snprintf(bw[2 * ip], sizeof bw[0], "%6.2f", h[ip].algbw);
                        snprintf(bw[2 * ip + 1], sizeof bw[0], "%6.2f", h[ip].busbw);
                    } else {
                        snprintf(bw[2 * ip], sizeof bw[0], "%6s", "N/A");
                        snprintf(bw[2 * ip + 1], sizeof bw[0], "%6s", "N/A");
                    }
                    snprintf(w[ip], sizeof w[ip], "%llu", (unsigned long long)h[ip].wrong);
                }
                snprintf(line, sizeof line,
                         "%12zu  %12zu  %8s  %6s  %6d  %7s  %s  %s  %6s  %7s  %s  %s  %6s", bytes,
                         p->tv ? (size_t)llround(p->tcount) : bytes / es, weft_dtype_name(p->dtype),
                         reduces ? weft_redop_name(p->op) : "none", rooted ? (int)p->root : -1,
                         t[0], bw[0], bw[1], p->check ? w[0] : "N/A", t[1], bw[2], bw[3],
                         p->check && !h[1].skip ? w[1] : "N/A");
                printf("%s\n", line);
            }
            fflush(stdout);
            if (size == 0)
                break;
        }
    }
    free(p->send);
    free(p->recv);
    double avg_bus = rows ? bus_sum / rows : 0.0;
    if (print && p->json) {
        cli_json_end_array(&j);
        cli_json_kv_uint(&j, "wrong_total", total_wrong);
        cli_json_kv_double(&j, "avg_busbw", avg_bus);
        cli_json_kv_bool(&j, "ok", !e && total_wrong == 0);
        cli_json_kv_string(&j, "error", e ? (d.msg[0] ? d.msg : weft_strerror(e)) : NULL);
        cli_json_end_object(&j);
        cli_json_done(&j);
    }
    if (e) {
        free(xs);
        free(bus);
        cli_error("perf: rank %u: %s", p->rank, d.msg[0] ? d.msg : weft_strerror(e));
        return CLI_EXIT_INPUT;
    }
    int rc = CLI_EXIT_OK;
    if (print && !p->json) {
        printf("# Out of bounds values : %llu %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %g\n", avg_bus);
        fflush(stdout);
    }
    if (print && xs) {
        /* In-place figures follow the out-of-place ones directly. */
        memmove(bus + nsizes, bus + cap, nsizes * sizeof *bus);
        rc = plot_perf(plot, p, names[p->coll], xs, bus, nsizes);
    }
    free(xs);
    free(bus);
    if (rc != CLI_EXIT_OK)
        return rc;
    return total_wrong ? CLI_EXIT_INPUT : CLI_EXIT_OK;
}

/* The chunks of the plan or algorithm the environment forces for every
 * call (WEFT_PLAN, WEFT_ALGO; docs/run.md), so that perf can round its
 * sizes to them as it does for --plan, and the header's description. Every
 * rank computes the same (init checked that the settings agree). When the
 * plan or algorithm does not build this collective, 1: the first call
 * then fails with the runtime's own message. */
static uint32_t forced_chunks(const weft_comm_config *cfg, const char *coll, uint32_t n,
                              uint32_t root, char *what, size_t what_size)
{
    weft_coll wc;
    uint32_t chunks = 1;
    weft_plan *plan = NULL;
    weft_topo *topo = NULL;
    snprintf(what, what_size, "schedule chosen per call");
    if (!weft_coll_parse(coll, strlen(coll), &wc))
        return 1;
    if (cfg->plan_file && *cfg->plan_file) {
        snprintf(what, what_size, "WEFT_PLAN=%s", cfg->plan_file);
        if (weft_plan_load_file(cfg->plan_file, &plan, NULL) == WEFT_OK &&
            weft_plan_get_info(plan)->coll == wc)
            chunks = weft_plan_get_info(plan)->chunks;
    } else if (cfg->algo && *cfg->algo) {
        char spec[32];
        snprintf(spec, sizeof spec, "switch:%u", n);
        bool fabric = cfg->fabric && *cfg->fabric;
        snprintf(what, what_size, "WEFT_ALGO=%s on %s", cfg->algo, fabric ? cfg->fabric : spec);
        weft_err e = fabric ? weft_topo_from_spec(cfg->fabric, NULL, &topo, NULL)
                            : weft_topo_preset(spec, &topo, NULL);
        if (!e &&
            weft_synth_classic(topo, cfg->algo, wc, (weft_rank){root}, &plan, NULL) == WEFT_OK)
            chunks = weft_plan_get_info(plan)->chunks;
    }
    weft_plan_free(plan);
    weft_topo_free(topo);
    if (chunks > 1) {
        size_t used = strlen(what);
        snprintf(what + used, what_size - used, ", %u chunks", chunks);
    }
    return chunks;
}

/* --traffic: loads FILE (or takes `given`, the matrix of the alltoallv
 * plan FILE when --plan comes without --traffic) and sets p->tv (this
 * rank's counts and displacements in elements), p->tsize, p->tcount and
 * p->tsym; *size the bytes of the one row perf prints (S rounded); the header names `forced`
 * (WEFT_PLAN, NULL for none) when it is an alltoallv plan, which
 * weft_alltoallv then runs. Exit code as cli_fail's, or CLI_EXIT_OK. */
static int load_traffic(perf *p, const char *path, const weft_traffic *given, const char *forced,
                        size_t *size)
{
    weft_traffic own = {0, NULL};
    const weft_traffic *tp = given;
    if (!given) {
        weft_diag d;
        weft_diag_clear(&d);
        weft_err e = weft_traffic_load_file(path, &own, &d);
        if (e)
            return cli_fail(e, &d);
        tp = &own;
    }
    const weft_traffic t = *tp;
    uint32_t n = p->n, me = p->rank;
    size_t es = weft_dtype_size(p->dtype);
    int rc = CLI_EXIT_OK;
    if (t.ranks != n) {
        cli_error("perf: %s: the matrix has %u ranks, the job %u", path, t.ranks, n);
        rc = CLI_EXIT_INPUT;
    }
    p->tsym = true;
    uint64_t row_max = 0, total = 0;
    for (uint32_t i = 0; rc == CLI_EXIT_OK && i < n; i++) {
        uint64_t row = 0;
        for (uint32_t j = 0; rc == CLI_EXIT_OK && j < n; j++) {
            uint64_t b = t.bytes[(size_t)i * n + j];
            if (b % es || b / es > SIZE_MAX / es) {
                cli_error("perf: %s: rank %u sends rank %u %llu bytes, not a whole number of %s "
                          "elements (%zu bytes each)",
                          path, i, j, (unsigned long long)b, weft_dtype_name(p->dtype), es);
                rc = CLI_EXIT_INPUT;
            }
            row += b;
            p->tsym = p->tsym && b == t.bytes[(size_t)j * n + i];
        }
        row_max = row > row_max ? row : row_max;
        total += row;
    }
    if (rc == CLI_EXIT_OK && row_max > ((size_t)1 << 40)) {
        cli_error("perf: %s: a rank sends %llu bytes, more than 2^40", path,
                  (unsigned long long)row_max);
        rc = CLI_EXIT_INPUT;
    }
    if (rc == CLI_EXIT_OK && !(p->tv = calloc(4 * (size_t)n, sizeof *p->tv))) {
        cli_error("perf: out of memory");
        rc = CLI_EXIT_INPUT;
    }
    if (rc == CLI_EXIT_OK) {
        size_t so = 0, ro = 0;
        for (uint32_t j = 0; j < n; j++) {
            /* In place (a symmetric matrix) the send side is the receive
             * side's. */
            p->tv[j] = (size_t)(t.bytes[(size_t)me * n + j] / es);
            p->tv[2 * n + j] = (size_t)(t.bytes[(size_t)j * n + me] / es);
            p->tv[n + j] = so;
            p->tv[3 * n + j] = ro;
            so += p->tv[j];
            ro += p->tv[2 * n + j];
        }
        p->tsize = (double)total / n;
        p->tcount = p->tsize / (double)es;
        *size = (size_t)llround(p->tsize);
        weft_plan *plan = NULL;
        if (forced && weft_plan_load_file(forced, &plan, NULL) == WEFT_OK &&
            weft_plan_traffic(plan))
            snprintf(p->schedule, sizeof p->schedule, "traffic %s, weft_alltoallv, WEFT_PLAN=%s",
                     path, forced);
        else
            snprintf(p->schedule, sizeof p->schedule, "traffic %s, weft_alltoallv", path);
        weft_plan_free(plan);
    }
    weft_traffic_free(&own);
    return rc;
}

int cli_cmd_perf(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&perf_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    perf p = {.dtype = WEFT_FLOAT,
              .op = WEFT_SUM,
              .iters = 20,
              .warmup = 5,
              .average = AVG_MAX,
              .cycles = 1,
              .check = true};
    long one = 1;
    size_t minb = 8, maxb = 32u << 20;
    long factor = 2, check = 1, root = 0;
    const char *v, *coll = a.pos[0];
    if (strcmp(coll, "allreduce") == 0)
        p.coll = C_ALLREDUCE;
    else if (strcmp(coll, "allgather") == 0)
        p.coll = C_ALLGATHER;
    else if (strcmp(coll, "reducescatter") == 0)
        p.coll = C_REDUCESCATTER;
    else if (strcmp(coll, "broadcast") == 0)
        p.coll = C_BROADCAST;
    else if (strcmp(coll, "reduce") == 0)
        p.coll = C_REDUCE;
    else if (strcmp(coll, "alltoall") == 0)
        p.coll = C_ALLTOALL;
    else {
        rc = cli_usage_error(&perf_syntax,
                             "bad COLL '%s': allreduce, allgather, reducescatter, broadcast, "
                             "reduce or alltoall",
                             coll);
        goto free_args;
    }
    const char *bad = NULL, *want = NULL;
    if ((v = cli_args_get(&a, "minbytes")) && !parse_size(v, &minb))
        bad = "-b", want = PERF_SIZE_WANT;
    else if ((v = cli_args_get(&a, "maxbytes")) && !parse_size(v, &maxb))
        bad = "-e", want = PERF_SIZE_WANT;
    else if ((v = cli_args_get(&a, "stepfactor")) && !parse_long(v, 2, 1 << 20, &factor))
        bad = "-f", want = "an integer 2 .. 1048576";
    else if ((v = cli_args_get(&a, "iters")) && !parse_long(v, 1, 1 << 30, &p.iters))
        bad = "-n", want = "an integer 1 .. 1073741824";
    else if ((v = cli_args_get(&a, "warmup_iters")) && !parse_long(v, 0, 1 << 30, &p.warmup))
        bad = "-w", want = "an integer 0 .. 1073741824";
    else if ((v = cli_args_get(&a, "check")) && !parse_long(v, 0, 1, &check))
        bad = "-c", want = "0 or 1";
    else if ((v = cli_args_get(&a, "datatype")) && !weft_dtype_parse(v, &p.dtype))
        bad = "-d", want = "int8, uint8, int16, uint16, int32, uint32, int64, uint64, half, "
                           "bfloat16, float or double";
    else if ((v = cli_args_get(&a, "op")) && !weft_redop_parse(v, &p.op))
        bad = "-o", want = "sum, prod, min or max";
    else if ((v = cli_args_get(&a, "root")) && !parse_long(v, 0, WEFT_MAX_RANKS - 1, &root))
        bad = "-r", want = "a rank 0 .. 4095";
    else if ((v = cli_args_get(&a, "average")) && !parse_long(v, 0, 3, &p.average))
        bad = "-a", want = "0 (rank 0), 1 (mean), 2 (least) or 3 (largest)";
    else if ((v = cli_args_get(&a, "blocking")) && !parse_long(v, 0, 3, &p.blocking))
        bad = "-z", want = "0, 1, 2 or 3";
    else if ((v = cli_args_get(&a, "run_cycles")) && !parse_long(v, 0, 1 << 30, &p.cycles))
        bad = "-N", want = "an integer 0 .. 1073741824 (0: until killed)";
    else if ((v = cli_args_get(&a, "ngpus")) && !parse_long(v, 1, 1, &one))
        bad = "-g", want = "1: weft perf drives one rank per process and no GPU; start N ranks "
                           "with 'weft launch -n N --'";
    else if ((v = cli_args_get(&a, "nthreads")) && !parse_long(v, 1, 1, &one))
        bad = "-t", want = "1: each weft perf process is one rank, not one per thread; start N "
                           "ranks with 'weft launch -n N --'";
    else if ((v = cli_args_get(&a, "cudagraph")) && !parse_long(v, 0, 0, &one))
        bad = "-G", want = "0: the runtime runs on CPUs and has no CUDA graph to capture";
    if (bad) {
        rc = cli_usage_error(&perf_syntax, "bad %s '%s': expected %s", bad, v, want);
        goto free_args;
    }
    if (minb > maxb) {
        rc = cli_usage_error(&perf_syntax, "-b %zu is larger than -e %zu", minb, maxb);
        goto free_args;
    }
    const char *traffic = cli_args_get(&a, "traffic");
    if (traffic && p.coll != C_ALLTOALL) {
        rc = cli_usage_error(&perf_syntax, "--traffic is for alltoall only, not %s", coll);
        goto free_args;
    }
    if (traffic && (cli_args_get(&a, "minbytes") || cli_args_get(&a, "maxbytes") ||
                    cli_args_get(&a, "stepfactor"))) {
        rc = cli_usage_error(&perf_syntax, "--traffic gives the sizes: -b, -e and -f do not apply");
        goto free_args;
    }
    if ((v = cli_args_get(&a, "plot")) && (rc = cli_flag_svg(&perf_syntax, "--plot", v)))
        goto free_args;
    cli_perf_sparse sp;
    if ((rc = cli_perf_sparse_flags(&perf_syntax, &a, coll, &minb, &maxb, &sp)) != CLI_CONTINUE)
        goto free_args;
    p.check = check != 0;
    p.root = (uint32_t)root;
    p.json = cli_args_has(&a, "json");
    if (p.json && p.cycles == 0) {
        rc = cli_usage_error(&perf_syntax, "-N 0 runs until killed, so --json would never "
                                           "complete its object; give a number of cycles");
        goto free_args;
    }

    weft_comm_config cfg;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    bool mpi = false;
    if (getenv("WEFT_SIZE")) {
        e = weft_comm_config_from_env(&cfg, &d);
    } else {
        weft_comm_config_init(&cfg);
        cfg.addr = "127.0.0.1:0";
        mpi = cli_mpi_launched();
        e = weft_comm_config_from_env_options(&cfg, &d);
    }
    if (!e)
        e = mpi ? cli_mpi_comm_init(&cfg, &p.c, &d) : weft_comm_init(&cfg, &p.c, &d);
    /* The rendezvous socket weft launch handed to rank 0 is needed only to
     * join: left open, strangers' connections would sit unanswered in its
     * backlog for the whole run. Closed, they are refused. */
    if (cfg.listen_fd >= 0)
        close(cfg.listen_fd);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    p.n = weft_comm_size(p.c);
    p.rank = weft_comm_rank(p.c);
    /* Every rank logs the same lines: say whose each one is. */
    static uint32_t log_rank;
    log_rank = p.rank;
    if (p.n > 1)
        weft_log_set_sink(rank_log, &log_rank);
    p.chunks = 1;
    weft_plan *plan = NULL;
    if (sp.on) {
        rc = cli_perf_sparse_run(p.c, &sp, minb, maxb, factor, p.iters, p.warmup, p.check);
        goto free_comm;
    }
    const char *plan_file = cli_args_get(&a, "plan");
    const weft_plan_info *info = NULL;
    if (plan_file) {
        e = weft_plan_load_file(plan_file, &plan, &d);
        info = e ? NULL : weft_plan_get_info(plan);
        if (!e && strcmp(weft_coll_name(info->coll), coll) != 0)
            e = weft_diag_set(&d, WEFT_EINVAL, "%s: the plan is for %s, not %s", plan_file,
                              weft_coll_name(info->coll), coll);
        if (e) {
            rc = cli_fail(e, &d);
            goto free_comm;
        }
    }
    /* An alltoallv plan fixes the sizes: without --traffic it runs its
     * own matrix, with it the matrix must be the plan's (checked by the
     * run's count exchange); a plan of equal chunks runs -b .. -e. */
    const weft_traffic *own = plan && !traffic ? weft_plan_traffic(plan) : NULL;
    if (own && (cli_args_get(&a, "minbytes") || cli_args_get(&a, "maxbytes") ||
                cli_args_get(&a, "stepfactor"))) {
        rc = cli_usage_error(&perf_syntax,
                             "the alltoallv plan %s gives the sizes: -b, -e and -f do not apply",
                             plan_file);
        goto free_comm;
    }
    if (traffic || own) {
        rc = load_traffic(&p, traffic ? traffic : plan_file, own,
                          cfg.plan_file && *cfg.plan_file ? cfg.plan_file : NULL, &maxb);
        minb = maxb;
        if (rc != CLI_EXIT_OK)
            goto free_comm;
    } else if (!plan_file) {
        p.chunks = forced_chunks(&cfg, coll, p.n, p.root, p.schedule, sizeof p.schedule);
    }
    if (plan_file) {
        if (!e && traffic && !weft_plan_traffic(plan))
            e = weft_diag_set(&d, WEFT_EINVAL,
                              "%s: a plan of equal chunks; with --traffic give an alltoallv plan "
                              "(weft plan --traffic FILE)",
                              plan_file);
        if (!e && own) {
            snprintf(p.schedule, sizeof p.schedule, "traffic of the plan, plan %s", plan_file);
            e = weft_comm_plan_new(p.c, plan, &p.plan, &d);
        } else if (!e && traffic) {
            snprintf(p.schedule, sizeof p.schedule, "traffic %s, plan %s", traffic, plan_file);
            e = weft_comm_plan_new(p.c, plan, &p.plan, &d);
        } else if (!e) {
            p.chunks = info->chunks;
            snprintf(p.schedule, sizeof p.schedule, "plan %s, %u chunks", plan_file, info->chunks);
            p.root = info->root.v;
            e = weft_comm_plan_new(p.c, plan, &p.plan, &d);
        }
        if (e) {
            rc = cli_fail(e, &d);
            goto free_comm;
        }
    }
    if (p.root >= p.n) {
        cli_error("perf: root %u is not a rank (0 .. %u)", p.root, p.n - 1);
        rc = CLI_EXIT_INPUT;
    } else {
        rc = run_perf(&p, minb, maxb, factor, cli_args_get(&a, "plot"));
    }
free_comm:
    free(p.tv);
    weft_comm_plan_free(p.plan);
    weft_plan_free(plan);
    weft_log_set_sink(NULL, NULL);
    if (mpi)
        cli_mpi_comm_free(p.c);
    else
        weft_comm_free(p.c);
free_args:
    cli_args_fini(&a);
    return rc;
}
