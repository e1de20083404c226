/* The NBX pattern (non-blocking consensus: MPI_Issend, MPI_Ibarrier and an
 * MPI_Test loop; Hoefler, Siebert and Lumsdaine, "Scalable communication
 * protocols for dynamic sparse data exchange", PPoPP 2010), for
 * libweft_mpi.so (tests/mpi/pmpi_case.sh, CTest pmpi_nbx_test).
 *
 * Each rank synchronously sends to a few others it alone knows; once its
 * sends are matched it enters MPI_Ibarrier and keeps receiving until the
 * barrier completes. The first version of the library served MPI_Ibarrier
 * with weft's blocking barrier inside the call: a rank whose sends were
 * matched stopped receiving, the message still on its way to it was never
 * matched, its sender never reached the barrier, and the job hung. (Here
 * the last rank sends 300 ms late in the first round, receiving meanwhile,
 * which makes that order certain.)
 *
 * 20 rounds, each with an MPI_Allreduce (served) of the messages received,
 * which must be every message sent; every message is checked.
 * Usage: pmpi_nbx */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pmpi_tally.h"

#define ROUNDS 20

static void expect(bool ok, const char *what, int round, long got, long want)
{
    checks++;
    if (ok)
        return;
    failures++;
    if (failures <= 10)
        fprintf(stderr, "pmpi_nbx: rank %d: round %d: %s: %ld, want %ld\n", me, round, what, got,
                want);
}

/* The ranks src sends to in a round (at most 2, never itself): the next
 * rank, and one further by the round. */
static int dests(int src, int round, int *out)
{
    int k = 0, a = (src + 1) % n, b = (src + 2 + round) % n;
    if (a != src)
        out[k++] = a;
    if (b != src && b != a)
        out[k++] = b;
    return k;
}

static int message(int src, int dst, int round)
{
    return src * 1000000 + dst * 1000 + round;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int round = 0; round < ROUNDS; round++) {
        int to[2], out[2], got_from[64] = {0};
        MPI_Request sreq[2], breq;
        int ns = dests(me, round, to);
        /* The last rank sends 300 ms late in the first round, receiving
         * meanwhile: its peers' sends are matched and they enter the
         * barrier before its message reaches them. */
        double post_at = MPI_Wtime() + (round == 0 && me == n - 1 ? 0.3 : 0.0);
        bool posted = false, in_barrier = false;
        int done = 0, received = 0;
        while (!done) {
            if (!posted && MPI_Wtime() >= post_at) {
                for (int k = 0; k < ns; k++) {
                    out[k] = message(me, to[k], round);
                    MPI_Issend(&out[k], 1, MPI_INT, to[k], round, MPI_COMM_WORLD, &sreq[k]);
                }
                posted = true;
            }
            int flag;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &flag, &st);
            if (flag) {
                int v;
                MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                expect(v == message(st.MPI_SOURCE, me, round), "message", round, v,
                       message(st.MPI_SOURCE, me, round));
                if (st.MPI_SOURCE < 64)
                    got_from[st.MPI_SOURCE]++;
                received++;
            }
            if (posted && !in_barrier) {
                int all;
                MPI_Testall(ns, sreq, &all, MPI_STATUSES_IGNORE);
                if (all) {
                    MPI_Ibarrier(MPI_COMM_WORLD, &breq);
                    passed[IBARRIER]++;
                    in_barrier = true;
                }
            } else if (in_barrier) {
                MPI_Test(&breq, &done, MPI_STATUS_IGNORE);
            }
        }
        /* Exactly the messages addressed to this rank arrived. */
        for (int src = 0; src < n && src < 64; src++) {
            int d[2], k = dests(src, round, d), want = 0;
            for (int i = 0; i < k; i++)
                want += d[i] == me;
            expect(got_from[src] == want, "messages from one rank", round, got_from[src], want);
        }
        long mine[2] = {received, ns}, sums[2];
        MPI_Allreduce(mine, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        served[ALLREDUCE]++;
        expect(sums[0] == sums[1], "messages received in all", round, sums[0], sums[1]);
    }
    printf("pmpi_nbx: rank %d expects log: MPI_Ibarrier passed to MPI %d times (non-blocking: "
           "weft's barrier would block the caller)\n",
           me, ROUNDS);
    (void)count_call;    /* every call here is on MPI_COMM_WORLD */
    served[ALLREDUCE]++; /* the tally below */
    return tally_finish("pmpi_nbx", false);
}
