/* MPI_Alltoallv (and MPI_Ialltoallv), MPI_Alltoallw and MPI_Ibarrier
 * interposed (see pmpi.h).
 *
 * MPI_Alltoallv is served by weft_alltoallv on bytes (WEFT_UINT8: each
 * count times its datatype's size, each displacement times its extent), so
 * ranks whose datatypes differ but whose type signatures match move the
 * same bytes; a rank whose datatype is not contiguous packs its blocks into
 * a private copy (and unpacks what it received), as in coll_move.c. Counts
 * that differ between a sender and its receiver are weft_alltoallv's error
 * on every rank, never a hang.
 *
 * MPI_Alltoallw is served only when every send and receive type of every
 * rank is one and the same predefined contiguous type; whether that holds
 * is agreed among the ranks first (PMPI_Allreduce, MIN), since one rank's
 * types say nothing of another's. Otherwise it goes to MPI, counted as
 * passed.
 *
 * MPI_Ibarrier is MPI's (below). */
#include <stdlib.h>
#include <string.h>

#include "run/pmpi/pmpi.h"
#include "run/pmpi/state.h"

#define PMPI_EXPORT __attribute__((visibility("default")))

/* The byte counts and displacements of one side of an alltoallv: counts[j]
 * elements of layout l at displs[j] extents, packed when l is not
 * contiguous (at packed offsets, in rank order). */
typedef struct side {
    size_t *counts, *displs; /* bytes */
    size_t total;            /* bytes, when packed */
    MPI_Aint shift;          /* bytes from the buffer to displacement 0 */
} side;

/* Whether a side has a negative count: an erroneous call, which MPI
 * reports. */
static bool negative_count(const int *counts, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++)
        if (counts[j] < 0)
            return true;
    return false;
}

/* Fills s (counts checked non-negative; displacements in units of unit
 * bytes: the extent for MPI_Alltoallv, 1 for MPI_Alltoallw). MPI allows negative displacements
 * (the buffer may point into an array) and ignores the displacement of a
 * block of no data; weft's are unsigned, so a contiguous side's
 * displacements count from its lowest block with data (s->shift, <= 0,
 * bytes from the buffer) and an empty block's are 0. Nothing here depends
 * on what another rank passes, nor decides whether the call is served. */
static void side_of(const int *counts, const int *displs, const weft__pmpi_layout *l, MPI_Aint unit,
                    uint32_t n, size_t *room, side *s)
{
    s->counts = room;
    s->displs = room + n;
    s->total = 0;
    s->shift = 0;
    for (uint32_t j = 0; j < n; j++)
        if (l->contig && counts[j] > 0 && (MPI_Aint)displs[j] * unit < s->shift)
            s->shift = (MPI_Aint)displs[j] * unit;
    for (uint32_t j = 0; j < n; j++) {
        s->counts[j] = (size_t)counts[j] * l->size;
        if (l->contig)
            s->displs[j] = counts[j] > 0 ? (size_t)((MPI_Aint)displs[j] * unit - s->shift) : 0;
        else
            s->displs[j] = s->total;
        s->total += s->counts[j];
    }
}

/* Packs (or unpacks) the blocks of a side whose layout is not contiguous. */
static weft_err pack_side(const void *buf, const int *counts, const int *displs, MPI_Datatype t,
                          const weft__pmpi_layout *l, const side *s, uint32_t n,
                          unsigned char *packed, bool unpack, weft_diag *d)
{
    weft_err e = WEFT_OK;
    for (uint32_t j = 0; !e && j < n; j++)
        if (counts[j] > 0)
            e = weft__pmpi_pack((const unsigned char *)buf + (MPI_Aint)displs[j] * l->extent,
                                (size_t)counts[j], t, l, packed + s->displs[j], unpack, d);
    return e;
}

/* The served all-to-all of bytes of sides ss and rs (rs alone in place):
 * the job that runs it, owning room (the sides' arrays). */
static weft__pmpi_job bytes_job(const weft__pmpi_target *t, const void *sendbuf, void *recvbuf,
                                const side *ss, const side *rs, bool in_place, size_t *room)
{
    unsigned char *out = (unsigned char *)recvbuf + rs->shift;
    return (weft__pmpi_job){.what = WEFT__PMPI_JOB_ALLTOALLV,
                            .comm = t->comm,
                            .in = in_place ? out : (const unsigned char *)sendbuf + ss->shift,
                            .out = out,
                            .dt = WEFT_UINT8,
                            .scounts = in_place ? NULL : ss->counts,
                            .sdispls = in_place ? NULL : ss->displs,
                            .rcounts = rs->counts,
                            .rdispls = rs->displs,
                            .owned = {room}};
}

/* The size a call of 1 or 2 ranks is judged small by (pmpi.h): the larger
 * of the blocks this rank sends to and receives from the other (the self
 * block on 1 rank), in bytes; both ranks compute the same, since rank 0's
 * block to rank 1 is the one rank 1 receives from it, and back. -1 when a
 * count or type is erroneous. */
static long long pair_bytes(const void *sendbuf, const int sendcounts[], MPI_Datatype sendtype,
                            const int recvcounts[], MPI_Datatype recvtype, MPI_Comm comm,
                            uint32_t n)
{
    /* MPI_COMM_WORLD's rank without a query (this check runs on every
     * call at 1-2 ranks). */
    int me = weft__pmpi.rank;
    if (!recvcounts || (comm != MPI_COMM_WORLD && PMPI_Comm_rank(comm, &me) != MPI_SUCCESS))
        return -1;
    int other = n == 2 ? 1 - me : 0;
    long long in = weft__pmpi_small_bytes(recvtype, recvcounts[other]), out = 0;
    if (sendbuf != MPI_IN_PLACE)
        out = sendcounts ? weft__pmpi_small_bytes(sendtype, sendcounts[other]) : -1;
    return in < 0 || out < 0 ? -1 : in > out ? in : out;
}

/* The largest block this rank sends or receives, in bytes (counts checked
 * non-negative). */
static uint64_t largest_block(const int *scounts, const weft__pmpi_layout *sl, const int *rcounts,
                              const weft__pmpi_layout *rl, uint32_t n)
{
    uint64_t most = 0;
    for (uint32_t j = 0; j < n; j++) {
        uint64_t r = (uint64_t)rcounts[j] * rl->size,
                 s = scounts ? (uint64_t)scounts[j] * sl->size : 0;
        most = r > most ? r : most;
        most = s > most ? s : most;
    }
    return most;
}

static int alltoallv(weft__pmpi_coll k, const void *sendbuf, const int sendcounts[],
                     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *req)
{
    uint32_t size = weft__pmpi_small_size(comm);
    if (size && size <= 2 &&
        weft__pmpi_small_n(
            k, WEFT__PMPI_SMALL_ALLTOALLV, size,
            pair_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm, size)))
        return req ? PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, req)
                   : PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm);
    int rc;
    if (!req && weft__pmpi_tiny_alltoallv(k, size, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, &rc))
        return rc;
    weft__pmpi_target t;
    weft__pmpi_layout sl, rl;
    const char *why = weft__pmpi_target_of(comm, &t);
    bool in_place = sendbuf == MPI_IN_PLACE;
    uint32_t n = why ? 0 : weft_comm_size(t.comm);
    /* Set below on every path that reads them; cleared so that gcc -O3 can
     * see it (-Wmaybe-uninitialized). */
    memset(&sl, 0, sizeof sl);
    memset(&rl, 0, sizeof rl);
    /* Only erroneous arguments (which MPI reports on the rank that has
     * them, as it would without weft) pass here on one rank alone:
     * whatever legal counts, displacements and datatypes a rank passes,
     * every rank serves the call. */
    if (!why && !weft__pmpi_layout_of(recvtype, 1, &rl))
        why = "bad receive datatype (erroneous)";
    if (!why && !in_place && !weft__pmpi_layout_of(sendtype, 1, &sl))
        why = "bad send datatype (erroneous)";
    if (!why && (negative_count(recvcounts, n) || (!in_place && negative_count(sendcounts, n))))
        why = "negative count (erroneous)";
    if (!why && n >= 3 && !req) {
        /* Small on 3 or more ranks: the communicator's mode, agreed. */
        weft_diag d;
        weft_diag_clear(&d);
        uint64_t most = largest_block(in_place ? NULL : sendcounts, &sl, recvcounts, &rl, n);
        if (weft__pmpi_small_mode(&t, comm, most, &why, &d))
            return weft__pmpi_fail(&t, k, comm, &d);
    }
    if (why) {
        weft__pmpi_passed(&t, k, why);
        return req ? PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                     rdispls, recvtype, comm, req)
                   : PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm);
    }
    weft__pmpi_served(&t, k);
    weft_diag d;
    weft_diag_clear(&d);
    side ss, rs;
    memset(&ss, 0, sizeof ss);
    size_t *room = malloc((size_t)n * 4 * sizeof *room);
    if (!room) {
        weft_diag_set(&d, WEFT_ENOMEM, "out of memory for the counts of %u ranks", n);
        return weft__pmpi_fail(&t, k, comm, &d);
    }
    side_of(recvcounts, rdispls, &rl, (MPI_Aint)rl.size, n, room + 2 * n, &rs);
    if (!in_place)
        side_of(sendcounts, sdispls, &sl, (MPI_Aint)sl.size, n, room, &ss);
    if (rl.contig && (in_place || sl.contig)) {
        weft__pmpi_job j = bytes_job(&t, sendbuf, recvbuf, &ss, &rs, in_place, room);
        return weft__pmpi_start(&t, k, comm, &j, req);
    }
    /* Packed by MPI: runs here, after the calls queued before it. */
    weft__pmpi_drain(&t);
    weft_err e = WEFT_OK;
    unsigned char *out = (unsigned char *)recvbuf + rs.shift, *packed_out = NULL, *packed_in = NULL;
    const unsigned char *in = in_place ? out : (const unsigned char *)sendbuf + ss.shift;
    if (!rl.contig && !(e = weft__pmpi_scratch(rs.total, &packed_out, &d))) {
        out = packed_out;
        if (in_place) {
            in = out;
            e = pack_side(recvbuf, recvcounts, rdispls, recvtype, &rl, &rs, n, packed_out, false,
                          &d);
        }
    }
    if (!e && !in_place && !sl.contig && !(e = weft__pmpi_scratch(ss.total, &packed_in, &d))) {
        in = packed_in;
        e = pack_side(sendbuf, sendcounts, sdispls, sendtype, &sl, &ss, n, packed_in, false, &d);
    }
    weft__pmpi_enter();
    if (!e)
        e = weft_alltoallv(t.comm, in, in_place ? NULL : ss.counts, in_place ? NULL : ss.displs,
                           out, rs.counts, rs.displs, WEFT_UINT8, &d);
    weft__pmpi_leave();
    if (!e && !rl.contig)
        e = pack_side(recvbuf, recvcounts, rdispls, recvtype, &rl, &rs, n, packed_out, true, &d);
    free(packed_in);
    free(packed_out);
    free(room);
    return e ? weft__pmpi_fail(&t, k, comm, &d) : weft__pmpi_done(&t, req);
}

PMPI_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoallv(WEFT__PMPI_ALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm, NULL);
}

PMPI_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
    return alltoallv(WEFT__PMPI_IALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm, request);
}

/* The one predefined contiguous type of every entry of types (n of them),
 * or MPI_DATATYPE_NULL. */
static MPI_Datatype one_type(const MPI_Datatype types[], uint32_t n, MPI_Datatype t)
{
    for (uint32_t j = 0; j < n; j++) {
        if (types[j] == MPI_DATATYPE_NULL)
            return MPI_DATATYPE_NULL;
        if (t == MPI_DATATYPE_NULL)
            t = types[j];
        if (types[j] != t)
            return MPI_DATATYPE_NULL;
    }
    int ni, na, nd, combiner;
    weft__pmpi_layout l;
    if (t == MPI_DATATYPE_NULL ||
        PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || !weft__pmpi_layout_of(t, 1, &l) || !l.contig ||
        l.size == 0)
        return MPI_DATATYPE_NULL;
    return t;
}

PMPI_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    const weft__pmpi_coll k = WEFT__PMPI_ALLTOALLW;
    weft__pmpi_target t;
    const char *why = weft__pmpi_target_of(comm, &t);
    bool in_place = sendbuf == MPI_IN_PLACE;
    uint32_t n = why ? 0 : weft_comm_size(t.comm);
    size_t *room = NULL;
    int size = 0;
    if (!why) {
        /* Whether every rank has one predefined contiguous type, agreed. */
        MPI_Datatype ty = one_type(recvtypes, n, MPI_DATATYPE_NULL);
        if (!in_place && ty != MPI_DATATYPE_NULL)
            ty = one_type(sendtypes, n, ty);
        bool ok = ty != MPI_DATATYPE_NULL && !negative_count(recvcounts, n) &&
                  (in_place || !negative_count(sendcounts, n));
        ok = ok && PMPI_Type_size(ty, &size) == MPI_SUCCESS && size > 0;
        ok = ok && (room = malloc((size_t)n * 4 * sizeof *room));
        int in = ok, all = 0;
        weft__pmpi_enter(); /* the agreement is weft's call, not the program's */
        int rc = PMPI_Allreduce(&in, &all, 1, MPI_INT, MPI_MIN, comm);
        weft__pmpi_leave();
        if (rc != MPI_SUCCESS || !all)
            why = "not one predefined contiguous type everywhere";
    }
    if (why) {
        free(room);
        weft__pmpi_passed(&t, k, why);
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm);
    }
    weft__pmpi_served(&t, k);
    /* Byte displacements (unit 1), negative ones and empty blocks as for
     * MPI_Alltoallv. */
    weft__pmpi_layout l = {.size = (size_t)size, .contig = true, .extent = size};
    side ss, rs;
    memset(&ss, 0, sizeof ss);
    side_of(recvcounts, rdispls, &l, 1, n, room + 2 * n, &rs);
    if (!in_place)
        side_of(sendcounts, sdispls, &l, 1, n, room, &ss);
    weft__pmpi_job j = bytes_job(&t, sendbuf, recvbuf, &ss, &rs, in_place, room);
    return weft__pmpi_start(&t, k, comm, &j, NULL);
}

/* MPI_Ibarrier always goes to MPI, on every rank alike (nothing of the
 * call is looked at): weft's barrier completes only inside the call, and
 * programs rely on one that completes while they poll. The NBX pattern
 * (MPI_Issend, then MPI_Ibarrier once the sends are matched, receiving
 * until it completes) hung with it served: a rank inside weft's barrier
 * stopped receiving, so a message on its way to it was never matched and
 * its sender never came to the barrier. */
PMPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    weft__pmpi_target t;
    weft__pmpi_target_of(comm, &t);
    weft__pmpi_passed(&t, WEFT__PMPI_IBARRIER,
                      "non-blocking: weft's barrier would block the caller");
    return PMPI_Ibarrier(comm, request);
}
