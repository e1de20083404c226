/* Small messages that go to MPI (see pmpi.h, "Small messages"): the sizes
 * below which each collective is passed, their agreement at MPI_Init, the
 * decision on the calling thread before any look-up, and its counters.
 *
 * Why: before the ring of slots (run/coll_tiny.h, tiny.c), every call weft
 * served started with its argument agreement (a round trip:
 * src/run/call_agree.h), and Open MPI's root of a small MPI_Bcast or
 * MPI_Reduce returns as soon as its eager send is out, so back-to-back
 * small calls cost weft a round trip each where they cost Open MPI a send
 * (bench/lat.sh, 2 ranks, 8 B: bcast 0.43 us against 0.13, reduce 0.53
 * against 0.14); calls below limits of up to 8 KiB went to MPI. The ring
 * serves them without that round trip (below), so by default only calls
 * of no data go to MPI, and those on MPI_COMM_WORLD whose arguments Open
 * MPI would accept are served at once instead (the end of this file).
 * Passing costs a size comparison: 153 instructions
 * a call over Open MPI's own 311 (8-byte calls at 1 rank, callgrind, the
 * difference of 3000 and 1000 calls of bench/lat_mpi.c's 7 collectives). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"
#include "run/pmpi/zero.h"
#include "weft/log.h"

/* The default sizes, in bytes (a call whose size is below is passed; 1:
 * only calls of no data; 0: none), for 1-2 ranks and for 3 or more, per
 * collective family: 1 for every one. Calls of no data go to MPI (but
 * those zero.h serves at once where the limit is 1 or more), which
 * returns from them at once (IMB 0.03-0.07 us, a served call 0.45;
 * osu_reduce_scatter_block at 4 ranks and 4-8 B, whose blocks are empty:
 * 207x). Every other size is served: through the ring of slots when it
 * fits one (4608 bytes, tiny.c), where OSU 7.4 and IMB-MPI1 on this
 * project's 2-core development VM measured weft at or below Open MPI
 * 4.1.4 within the machine's noise (bench/osu.sh and bench/lat.sh, 2 and
 * 4 ranks on shared memory, before and after in one session;
 * docs/interop.md, "Small messages through the ring", has the tables),
 * and above it on the ordinary path, which was at or below Open MPI from
 * 4-8 KiB already (the limits before the ring were 512 B to 8 KiB for
 * that reason). WEFT_PMPI_SMALL overrides them (below). */
static const struct {
    const char *name;
    uint64_t below[2]; /* [0]: 1-2 ranks; [1]: 3 or more */
} defaults[WEFT__PMPI_SMALL_COUNT] = {
    [WEFT__PMPI_SMALL_ALLREDUCE] = {"allreduce", {1, 1}},
    [WEFT__PMPI_SMALL_REDUCE] = {"reduce", {1, 1}},
    [WEFT__PMPI_SMALL_BCAST] = {"bcast", {1, 1}},
    [WEFT__PMPI_SMALL_ALLGATHER] = {"allgather", {1, 1}},
    [WEFT__PMPI_SMALL_ALLTOALL] = {"alltoall", {1, 1}},
    [WEFT__PMPI_SMALL_ALLTOALLV] = {"alltoallv", {1, 1}},
    [WEFT__PMPI_SMALL_REDUCE_SCATTER_BLOCK] = {"reduce_scatter_block", {1, 1}},
    [WEFT__PMPI_SMALL_REDUCE_SCATTER] = {"reduce_scatter", {1, 1}},
};

/* The sizes in force (agreed at MPI_Init; read without a lock after), and
 * MPI_COMM_WORLD's size (never freed: no query on its calls). */
static uint64_t below[WEFT__PMPI_SMALL_COUNT][2];
uint64_t weft__pmpi_small_most = UINT64_MAX; /* the largest of below, once agreed */
static uint32_t world_size;

/* Calls passed as small, per thread (no atomic operation on the path):
 * each thread's block is linked into a list at its first small call and
 * summed at MPI_Finalize, when every thread's calls are done (MPI 3.1
 * section 12.4.2). [k][0]: on 1-2 ranks, [k][1]: 3 or more. */
typedef struct small_counts {
    uint64_t calls[WEFT__PMPI_COLL_COUNT][2];
    uint64_t zero[WEFT__PMPI_COLL_COUNT]; /* calls of no data served at once */
    struct small_counts *next;
} small_counts;
static _Thread_local small_counts *mine WEFT__PMPI_TLS;
/* This thread's counts of calls of no data served at once (mine->zero),
 * for zero.h's inline count; NULL until its first such call. */
_Thread_local uint64_t *weft__pmpi_zero_mine WEFT__PMPI_TLS;
static small_counts *all_threads;                 /* under weft__pmpi.lock */
static uint64_t lost[WEFT__PMPI_COLL_COUNT][2];   /* atomic: a thread's block not allocated */
static uint64_t zero_lost[WEFT__PMPI_COLL_COUNT]; /* atomic: likewise, calls of no data */
static bool logged[WEFT__PMPI_COLL_COUNT];        /* atomic: "passed as small" logged */
/* The reasons logged, per family and [1-2 ranks, 3 or more]; and the
 * alltoallv mode's (written at MPI_Init, read after). */
static char why_text[WEFT__PMPI_SMALL_COUNT][2][96];
static char mode_text[160];
static uint64_t agreements; /* atomic: alltoallv mode refreshes */

/* Parses one size: decimal bytes, at most 2^40. */
static bool parse_bytes(const char *s, size_t len, uint64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end || buf[0] == '-' || v > (1ull << 40))
        return false;
    *out = v;
    return true;
}

bool weft__pmpi_small_parse(const char *text, weft_diag *d)
{
    for (int k = 0; k < WEFT__PMPI_SMALL_COUNT; k++)
        for (int r = 0; r < 2; r++)
            below[k][r] = defaults[k].below[r];
    weft__pmpi_small_most = UINT64_MAX; /* until agreed */
    if (!text || !*text)
        return true;
    for (const char *p = text; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        uint64_t v;
        int first = 0, last = WEFT__PMPI_SMALL_COUNT - 1;
        if (eq) {
            size_t nl = (size_t)(eq - p);
            first = -1;
            for (int k = 0; k < WEFT__PMPI_SMALL_COUNT; k++)
                if (strlen(defaults[k].name) == nl && memcmp(defaults[k].name, p, nl) == 0)
                    first = last = k;
            if (first < 0) {
                weft_diag_set(d, WEFT_EINVAL,
                              "WEFT_PMPI_SMALL: unknown collective '%.*s' (allreduce, reduce, "
                              "bcast, allgather, alltoall, alltoallv, reduce_scatter_block, "
                              "reduce_scatter)",
                              (int)nl, p);
                return false;
            }
        }
        const char *num = eq ? eq + 1 : p;
        if (!parse_bytes(num, len - (size_t)(num - p), &v)) {
            weft_diag_set(d, WEFT_EINVAL,
                          "WEFT_PMPI_SMALL: '%.*s' is not BYTES or NAME=BYTES (0 .. 2^40)",
                          (int)len, p);
            return false;
        }
        for (int k = first; k <= last; k++)
            below[k][0] = below[k][1] = v;
        p += len + (comma != NULL);
    }
    return true;
}

bool weft__pmpi_small_agree(void)
{
    /* Every rank must pass the same calls, so every rank must use the same
     * sizes: the largest and (as UINT64_MAX less it) the smallest of every
     * rank's are reduced; where they differ, the smallest is used. */
    enum { N = WEFT__PMPI_SMALL_COUNT * 2 };
    uint64_t in[2 * N], out[2 * N];
    for (int i = 0; i < N; i++) {
        in[i] = below[i / 2][i % 2];
        in[N + i] = UINT64_MAX - in[i];
    }
    int world = 0;
    if (PMPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS || world < 1 ||
        PMPI_Allreduce(in, out, 2 * N, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return false;
    world_size = (uint32_t)world;
    bool same = true;
    weft__pmpi_small_most = 0;
    for (int i = 0; i < N; i++) {
        uint64_t least = UINT64_MAX - out[N + i];
        same = same && least == out[i];
        below[i / 2][i % 2] = least;
        weft__pmpi_small_most = least > weft__pmpi_small_most ? least : weft__pmpi_small_most;
    }
    for (int f = 0; f < WEFT__PMPI_SMALL_COUNT; f++)
        for (int r = 0; r < 2; r++) {
            const char *at = r ? "3 or more ranks" : "1-2 ranks";
            if (below[f][r] == 1)
                snprintf(why_text[f][r], sizeof why_text[f][r], "no data, at %s", at);
            else
                snprintf(why_text[f][r], sizeof why_text[f][r],
                         "small message: below %llu bytes at %s", (unsigned long long)below[f][r],
                         at);
        }
    snprintf(mode_text, sizeof mode_text,
             "small-message mode: every block below %llu bytes at the last size agreement",
             (unsigned long long)below[WEFT__PMPI_SMALL_ALLTOALLV][1]);
    if (!same)
        weft_log(WEFT_LOG_WARN, "pmpi",
                 "rank %d: WEFT_PMPI_SMALL differs between ranks: each collective uses the "
                 "smallest size any rank has",
                 weft__pmpi.rank);
    return true;
}

uint64_t weft__pmpi_small_below(weft__pmpi_small_kind f, uint32_t n)
{
    return below[f][n >= 3];
}

/* The block of the calling thread, linked in at its first use; NULL when it
 * cannot be allocated. */
static small_counts *my_counts(void)
{
    if (mine)
        return mine;
    small_counts *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_lock(&weft__pmpi.lock);
    c->next = all_threads;
    all_threads = c;
    pthread_mutex_unlock(&weft__pmpi.lock);
    return mine = c;
}

uint32_t weft__pmpi_small_size(MPI_Comm comm)
{
    int n = 0;
    if (!__atomic_load_n(&weft__pmpi.on, __ATOMIC_RELAXED))
        return 0;
    if (comm == MPI_COMM_WORLD)
        return world_size;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS || n < 1)
        return 0;
    return (uint32_t)n;
}

long long weft__pmpi_small_bytes_of(MPI_Datatype t, long long count)
{
    int size;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 0)
        return -1;
    return count < 0 ? -1 : count * size;
}

/* weft__pmpi_small_n, inlined into weft__pmpi_small_below_limit (the path of every
 * small call: 200 instructions a call at first, 100 after the cuts here
 * and WEFT__PMPI_TLS, callgrind at 1 rank). */
static inline bool small_n(weft__pmpi_coll k, weft__pmpi_small_kind f, uint32_t n, long long bytes)
{
    /* Off (n 0), or weft's own call (its bootstrap): the ordinary path
     * decides and counts. A negative size is an erroneous call, which that
     * path passes with its reason. */
    if (n == 0 || bytes < 0 || weft__pmpi_inside())
        return false;
    int big = n >= 3;
    if ((uint64_t)bytes >= below[f][big])
        return false;
    small_counts *c = my_counts();
    uint64_t mine_before = 0;
    if (c)
        mine_before = c->calls[k][big]++;
    else
        __atomic_add_fetch(&lost[k][big], 1, __ATOMIC_RELAXED);
    /* The first such call of a thread looks whether it is the process's. */
    if (mine_before == 0 && !__atomic_exchange_n(&logged[k], true, __ATOMIC_RELAXED))
        weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s passed to MPI (%s)", weft__pmpi.rank,
                 weft__pmpi_coll_name(k), weft__pmpi_small_why(f, big));
    return true;
}

bool weft__pmpi_small_n(weft__pmpi_coll k, weft__pmpi_small_kind f, uint32_t n, long long bytes)
{
    /* As weft__pmpi_small. */
    if (bytes >= 0 && (uint64_t)bytes >= weft__pmpi_small_most)
        return false;
    return small_n(k, f, n, bytes);
}

bool weft__pmpi_small_below_limit(weft__pmpi_coll k, weft__pmpi_small_kind f, MPI_Comm comm,
                                  long long bytes)
{
    return bytes >= 0 && small_n(k, f, weft__pmpi_small_size(comm), bytes);
}

const char *weft__pmpi_small_why(weft__pmpi_small_kind f, int big)
{
    return why_text[f][big];
}

void weft__pmpi_zero_totals(uint64_t calls[WEFT__PMPI_COLL_COUNT])
{
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
        calls[k] = __atomic_load_n(&zero_lost[k], __ATOMIC_RELAXED);
    for (const small_counts *c = all_threads; c; c = c->next)
        for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
            calls[k] += c->zero[k];
}

void weft__pmpi_small_totals(uint64_t calls[WEFT__PMPI_COLL_COUNT][2])
{
    memset(calls, 0, sizeof(uint64_t) * WEFT__PMPI_COLL_COUNT * 2);
    for (const small_counts *c = all_threads; c; c = c->next)
        for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
            for (int r = 0; r < 2; r++)
                calls[k][r] += c->calls[k][r];
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
        for (int r = 0; r < 2; r++)
            calls[k][r] += __atomic_load_n(&lost[k][r], __ATOMIC_RELAXED);
}

weft__pmpi_small_kind weft__pmpi_small_kind_of(weft__pmpi_coll k)
{
    switch (k) {
    case WEFT__PMPI_ALLREDUCE:
    case WEFT__PMPI_IALLREDUCE:
        return WEFT__PMPI_SMALL_ALLREDUCE;
    case WEFT__PMPI_REDUCE:
    case WEFT__PMPI_IREDUCE:
        return WEFT__PMPI_SMALL_REDUCE;
    case WEFT__PMPI_BCAST:
    case WEFT__PMPI_IBCAST:
        return WEFT__PMPI_SMALL_BCAST;
    case WEFT__PMPI_ALLGATHER:
    case WEFT__PMPI_IALLGATHER:
        return WEFT__PMPI_SMALL_ALLGATHER;
    case WEFT__PMPI_ALLTOALL:
    case WEFT__PMPI_IALLTOALL:
        return WEFT__PMPI_SMALL_ALLTOALL;
    case WEFT__PMPI_ALLTOALLV:
    case WEFT__PMPI_IALLTOALLV:
        return WEFT__PMPI_SMALL_ALLTOALLV;
    case WEFT__PMPI_REDUCE_SCATTER_BLOCK:
    case WEFT__PMPI_IREDUCE_SCATTER_BLOCK:
        return WEFT__PMPI_SMALL_REDUCE_SCATTER_BLOCK;
    default:
        return WEFT__PMPI_SMALL_REDUCE_SCATTER;
    }
}

/* Refreshes at most every MODE_GAP_MAX-th call: a communicator whose sizes
 * stay on one side of the limit agrees at calls 0, 1, 3, 7, ..., then every
 * 64th (one 8-byte weft allreduce per 64 calls: under 1 % of an 8-byte
 * alltoallv's time at 4 ranks, bench/lat.sh); one whose sizes change runs
 * at most 63 calls on the other side's path (exact either way, only
 * slower) before it notices. */
#define MODE_GAP_MAX 64u

weft_err weft__pmpi_small_mode(weft__pmpi_target *t, MPI_Comm comm, uint64_t largest,
                               const char **why, weft_diag *d)
{
    *why = NULL;
    uint64_t lim = below[WEFT__PMPI_SMALL_ALLTOALLV][1];
    weft__pmpi_entry *e = t->entry;
    if (lim == 0)
        return WEFT_OK;
    if (e->a2av_calls++ == e->a2av_next) {
        /* The largest block of every rank, agreed: weft's allreduce (the
         * calls queued on the communicator first), or MPI's where a forced
         * plan cannot run it. */
        uint64_t most = largest;
        weft__pmpi_drain(t);
        weft__pmpi_enter();
        weft_err err = WEFT_OK;
        if (!weft__pmpi_unfit(t->comm, WEFT_COLL_ALLREDUCE, 1, WEFT_UINT64, 0))
            err = weft_allreduce(t->comm, &largest, &most, 1, WEFT_UINT64, WEFT_MAX, d);
        else if (PMPI_Allreduce(&largest, &most, 1, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
            err = weft_diag_set(d, WEFT_EIO, "MPI_Allreduce of the alltoallv sizes failed");
        weft__pmpi_leave();
        if (err)
            return err;
        __atomic_add_fetch(&agreements, 1, __ATOMIC_RELAXED);
        bool small = most < lim;
        uint32_t gap = e->a2av_gap && small == e->a2av_small ? 2 * e->a2av_gap : 1;
        e->a2av_gap = gap < MODE_GAP_MAX ? gap : MODE_GAP_MAX;
        e->a2av_small = small;
        e->a2av_next = e->a2av_calls - 1 + e->a2av_gap;
    }
    if (e->a2av_small)
        *why = mode_text;
    return WEFT_OK;
}

void weft__pmpi_small_report(void)
{
    uint64_t calls[WEFT__PMPI_COLL_COUNT][2];
    weft__pmpi_small_totals(calls);
    for (int k = 0; k < WEFT__PMPI_COLL_COUNT; k++)
        for (int r = 0; r < 2; r++)
            if (calls[k][r])
                weft_log(WEFT_LOG_INFO, "pmpi", "rank %d: %s passed to MPI %llu time%s (%s)",
                         weft__pmpi.rank, weft__pmpi_coll_name(k), (unsigned long long)calls[k][r],
                         calls[k][r] == 1 ? "" : "s", why_text[weft__pmpi_small_kind_of(k)][r]);
    uint64_t a = __atomic_load_n(&agreements, __ATOMIC_RELAXED);
    if (a)
        weft_log(WEFT_LOG_INFO, "pmpi",
                 "rank %d: MPI_Alltoallv sizes agreed %llu time%s (small-message mode, 3 or more "
                 "ranks)",
                 weft__pmpi.rank, (unsigned long long)a, a == 1 ? "" : "s");
}

void weft__pmpi_small_fini(void)
{
    pthread_mutex_lock(&weft__pmpi.lock);
    while (all_threads) {
        small_counts *c = all_threads;
        all_threads = c->next;
        free(c);
    }
    pthread_mutex_unlock(&weft__pmpi.lock);
    mine = NULL;
    weft__pmpi_zero_mine = NULL;
}

/* Calls of no data, served at once (zero.h). */
weft__pmpi_zero_state weft__pmpi_zero;

void weft__pmpi_zero_arm(bool on)
{
    for (int f = 0; f < WEFT__PMPI_SMALL_COUNT; f++) {
        weft__pmpi_zero.ready[f] = on && below[f][world_size >= 3] >= 1;
        weft__pmpi_zero.ready_any[f] = on && below[f][0] >= 1 && below[f][1] >= 1;
    }
    weft__pmpi_zero.world = world_size;
    weft__pmpi_zero.rank = weft__pmpi.rank;
}

/* Counted per thread, as the calls passed as small are (no atomic
 * operation on the path of a call Open MPI returns from in 0.03-0.04 us),
 * and logged once per collective. */
void weft__pmpi_zero_count(weft__pmpi_coll k)
{
    small_counts *c = my_counts();
    if (!c) {
        __atomic_add_fetch(&zero_lost[k], 1, __ATOMIC_RELAXED);
        return;
    }
    weft__pmpi_zero_mine = c->zero;
    if (c->zero[k]++ == 0)
        weft__pmpi_served_note(k);
}
