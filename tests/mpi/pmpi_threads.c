/* Threads calling collectives at once under MPI_THREAD_MULTIPLE, for
 * libweft_mpi.so (tests/mpi/pmpi_case.sh, CTest pmpi_threads_test).
 *
 * mpi4py asks for MPI_THREAD_MULTIPLE, and the first versions of the
 * library then switched themselves off: no call served. Now a weft
 * communicator runs one call at a time and different communicators run at
 * once (see src/run/pmpi/pmpi.h). This program checks both:
 *
 *  - OWN threads, each with its own duplicate of MPI_COMM_WORLD, loop
 *    MPI_Allreduce, MPI_Bcast (root turning) and MPI_Allgather of ints of
 *    varying counts, every element checked. Each thread's first call is
 *    delayed by DELAY_MS times ((thread - rank) mod OWN), so the ranks start
 *    the threads' calls in different orders: a library that ran one call
 *    per process at a time (one lock for all) would have rank 0 wait inside
 *    thread 0's call for rank 1's thread 0, whose call rank 1 makes last,
 *    while rank 1 waits inside thread 1's for rank 0's: a hang, which
 *    pmpi_case.sh's time limit turns into a failure. A library that marked
 *    "inside weft" per process instead of per thread would pass some calls
 *    to MPI, and the counts would differ.
 *  - Two SHARED threads on one more duplicate, taking turns as the program
 *    orders them (collectives of threads on one communicator match in the
 *    order each process issues them, and "it is up to the user to make sure
 *    the calls are correctly ordered, using interthread synchronization",
 *    MPI 3.1 section 12.4.2), MPI_Allreduce each turn.
 *
 * Every call is served; the counts are printed for pmpi_case.sh to compare
 * with the library's finalize report (all on "dup" communicators).
 * Usage: pmpi_threads */
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pmpi_tally.h"

#define OWN 3         /* threads with a communicator of their own */
#define ROUNDS 60     /* of each OWN thread: an allreduce, a bcast, an allgather */
#define TURNS 40      /* of each SHARED thread: an allreduce */
#define DELAY_MS 150  /* between the first calls of the OWN threads */
#define MAX_COUNT 700 /* elements of the largest call */

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;

static void expect(bool ok, const char *who, int round, const char *what, long got, long want)
{
    pthread_mutex_lock(&tally_lock);
    checks++;
    if (!ok && ++failures <= 10)
        fprintf(stderr, "pmpi_threads: rank %d: %s round %d: %s: %ld, want %ld\n", me, who, round,
                what, got, want);
    pthread_mutex_unlock(&tally_lock);
}

/* The count of round r of thread t: 1 .. MAX_COUNT, different per thread. */
static int count_of(int t, int r)
{
    return 1 + (r * 97 + t * 131) % MAX_COUNT;
}

/* The value rank q contributes at element i of round r of thread t. */
static int value(int t, int r, int q, int i)
{
    return (t + 1) * 100000 + r * 1000 + q * 10 + i % 7;
}

typedef struct own_arg {
    int t;
    MPI_Comm comm;
} own_arg;

static void *own_thread(void *p)
{
    const own_arg *a = p;
    int t = a->t;
    char who[32];
    snprintf(who, sizeof who, "thread %d", t);
    int *in = malloc(MAX_COUNT * sizeof *in), *out = malloc((size_t)n * MAX_COUNT * sizeof *out);
    if (!in || !out) {
        expect(false, who, 0, "out of memory", 0, 0);
        free(in);
        free(out);
        return NULL;
    }
    long ms = (long)DELAY_MS * (((t - me) % OWN + OWN) % OWN);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    for (int r = 0; r < ROUNDS; r++) {
        int c = count_of(t, r);
        /* Allreduce: the sum over the ranks, element by element. */
        for (int i = 0; i < c; i++)
            in[i] = value(t, r, me, i);
        MPI_Allreduce(in, out, c, MPI_INT, MPI_SUM, a->comm);
        bool ok = true;
        int bad = 0, got = 0, want = 0;
        for (int i = 0; i < c && ok; i++) {
            want = 0;
            for (int q = 0; q < n; q++)
                want += value(t, r, q, i);
            ok = out[i] == want;
            bad = i, got = out[i];
        }
        expect(ok, who, r, ok ? "allreduce" : "allreduce element", ok ? 0 : bad, ok ? 0 : want);
        if (!ok)
            fprintf(stderr, "pmpi_threads: rank %d: got %d\n", me, got);
        /* Bcast from a turning root. */
        int root = (r + t) % n;
        for (int i = 0; i < c; i++)
            in[i] = me == root ? value(t, r, root, i) : -1;
        MPI_Bcast(in, c, MPI_INT, root, a->comm);
        ok = true;
        for (int i = 0; i < c && ok; i++)
            ok = in[i] == value(t, r, root, i);
        expect(ok, who, r, "bcast", ok, 1);
        /* Allgather: every rank's block in rank order. */
        for (int i = 0; i < c; i++)
            in[i] = value(t, r, me, i);
        MPI_Allgather(in, c, MPI_INT, out, c, MPI_INT, a->comm);
        ok = true;
        for (int q = 0; q < n && ok; q++)
            for (int i = 0; i < c && ok; i++)
                ok = out[(size_t)q * c + i] == value(t, r, q, i);
        expect(ok, who, r, "allgather", ok, 1);
    }
    free(in);
    free(out);
    return NULL;
}

/* The SHARED threads' turns: thread s calls when turn % 2 == s. */
static MPI_Comm shared_comm;
static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;

static void *shared_thread(void *p)
{
    int s = (int)(intptr_t)p;
    char who[32];
    snprintf(who, sizeof who, "shared thread %d", s);
    for (int k = 0; k < TURNS; k++) {
        pthread_mutex_lock(&turn_lock);
        while (turn % 2 != s)
            pthread_cond_wait(&turn_changed, &turn_lock);
        int my_turn = turn;
        pthread_mutex_unlock(&turn_lock);
        long mine[3] = {me + 1, (long)my_turn * (me + 1), s}, all[3] = {0, 0, 0};
        MPI_Allreduce(mine, all, 3, MPI_LONG, MPI_SUM, shared_comm);
        long ranks = (long)n * (n + 1) / 2;
        expect(all[0] == ranks, who, k, "sum of ranks", all[0], ranks);
        expect(all[1] == my_turn * ranks, who, k, "sum of turns", all[1], my_turn * ranks);
        /* Every rank's call of this turn is made by the same thread. */
        expect(all[2] == (long)s * n, who, k, "sum of threads", all[2], (long)s * n);
        pthread_mutex_lock(&turn_lock);
        turn++;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&turn_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    expect(provided == MPI_THREAD_MULTIPLE, "main", 0, "thread level provided", provided,
           MPI_THREAD_MULTIPLE);
    if (provided != MPI_THREAD_MULTIPLE)
        return tally_finish("pmpi_threads", true);
    own_arg own[OWN];
    pthread_t th[OWN + 2];
    for (int t = 0; t < OWN; t++) {
        own[t].t = t;
        MPI_Comm_dup(MPI_COMM_WORLD, &own[t].comm);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &shared_comm);
    for (int t = 0; t < OWN; t++)
        pthread_create(&th[t], NULL, own_thread, &own[t]);
    for (int s = 0; s < 2; s++)
        pthread_create(&th[OWN + s], NULL, shared_thread, (void *)(intptr_t)s);
    for (int t = 0; t < OWN + 2; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < OWN; t++)
        MPI_Comm_free(&own[t].comm);
    MPI_Comm_free(&shared_comm);
    for (long k = 0; k < (long)OWN * ROUNDS; k++) {
        count_call(DUP, ALLREDUCE, true);
        count_call(DUP, BCAST, true);
        count_call(DUP, ALLGATHER, true);
    }
    for (long k = 0; k < 2L * TURNS; k++)
        count_call(DUP, ALLREDUCE, true);
    return tally_finish("pmpi_threads", true);
}
