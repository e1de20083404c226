/* Small calls of the MPI library through a ring of slots per rank
 * (coll_tiny.c): no argument agreement round before the data and no
 * second barrier, so a broadcast's root and a reduce's non-roots return as
 * soon as their data is out.
 *
 * Each rank has WEFT__TINY_SLOTS slots in its control page
 * (weft__region_tiny); ring call s uses slot s mod WEFT__TINY_SLOTS of
 * every rank. A slot carries the call's number, its arguments (the kind
 * word and count of call_agree.h) and up to WEFT__TINY_BYTES of data.
 * Every rank writes its slot in every call (data or not), stored with
 * release order after the data; a rank reads a peer's slot once the
 * number it holds is the call's (acquire), and compares the arguments
 * with its own. A rank publishes "consumed up to s" when it finished call
 * s; a rank writes slot s only once every peer consumed s -
 * WEFT__TINY_SLOTS (the wait a writer may have: none while peers are at
 * most WEFT__TINY_SLOTS - 1 calls behind).
 *
 * Disagreeing calls. A rank compares every peer's slot it reads (waits
 * for), and the arguments compared include the root. A broadcast's root
 * and an MPI_Reduce_scatter rank without a block (which read no slot)
 * publish their own with a full barrier and then compare every peer's that
 * is published already, so that of any two such ranks that disagree the
 * one that publishes later finds it in the call. A broadcast's or a
 * reduce's non-root publishes with a full barrier and compares the slot of
 * the root it names when that holds the call by then (one line read, not
 * every peer's), else every peer's published slot as a broadcast's root
 * does (weft__tiny_publish_for); a broadcast's non-root then reads the
 * root's slot. Every disagreement is still found: a rank that reads every
 * slot finds any; else take the ranks that compared published slots (a
 * broadcast's root, a rank without a block, a non-root whose root had not
 * published): any two of them that disagree are found as above; and a
 * non-root that found its root's slot alike has the arguments of a rank
 * that names itself: a broadcast's root, one of those, or a reduce's root,
 * which reads every slot. So where none found it, every rank agrees with
 * one of a set of ranks that agree. (Comparing only the root's slot was
 * not enough: rank 0 reducing to rank 1 while ranks 1 and 2 broadcast from
 * rank 2, with rank 2 then rank 0 then rank 1 publishing, found nothing;
 * tests/mpi/pmpi_tiny.c, reduce_to_bcaster.) A rank that finds arguments
 * that differ from its call's waits for every rank's slot of that call and
 * compares them all (weft__call_check_recs: the message of call_agree.h,
 * the same wherever computed), publishes the call's number as its fault
 * and fails the communicator with that message. A rank that returned from the call
 * without finding it learns it from the fault at its next ring call on the
 * communicator (each checks the peers' faults first, also while it
 * waits), and fails alike: the same message on every rank, on such a rank
 * one call later (unless it makes no further ring call on the
 * communicator). The MPI standard makes such a program erroneous; this
 * keeps it from returning wrong data silently.
 *
 * Only the MPI library calls these (src/run/pmpi/tiny.c), from the thread
 * that holds the communicator; weft's own API keeps its agreed paths
 * (call_agree.h), whose communicator stays usable after a disagreement. */
#ifndef WEFT_RUN_COLL_TINY_H
#define WEFT_RUN_COLL_TINY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/comm_internal.h"
#include "run/reduce.h"
#include "weft/plan.h"

/* Slots per rank and the data a slot holds (region.h reserves
 * WEFT__REGION_TINY_BYTES for them: a line of counters and one of faults,
 * then each slot's 32-byte head and data, 64 bytes more than
 * WEFT__TINY_BYTES). 4 KiB and a table: an all-to-all of 1 KiB blocks on
 * 4 ranks, and MPI_Alltoallv's with its table of 12 bytes per rank (up to
 * 42 ranks). 16 slots let a broadcast's root run 15 calls ahead
 * of its slowest reader, which with more ranks than CPUs covers the
 * readers that wait for a CPU (a scheduler time slice is milliseconds,
 * a call a fraction of a microsecond, so no ring bounds that lag; the
 * ring only has to keep the writer from waiting on every call). */
#define WEFT__TINY_SLOTS 16u
#define WEFT__TINY_BYTES 4608u

/* A ring call in progress. */
typedef struct weft__tiny {
    weft_comm *c;
    uint64_t seq;
    size_t off;          /* where the call's slot lies in each rank's ring */
    unsigned char *data; /* this rank's slot's data: WEFT__TINY_BYTES */
    uint64_t aux;        /* published with the slot (weft__tiny_read gives a peer's) */
} weft__tiny;

/* True when c can run ring calls: control pages, every peer on shared
 * memory, 2 or more ranks (the same answer on every rank). */
bool weft__tiny_ready(const weft_comm *c);

/* Starts ring call on c of the arguments given (as weft__call_begin):
 * fails at once when c failed earlier or a peer published a fault (the
 * disagreement it found), and waits until this rank's slot of the call is
 * free. Then the caller writes its data to t->data (and t->aux), calls
 * weft__tiny_publish (reads_all: the caller reads every rank's slot with
 * weft__tiny_read; else publish compares the peers' slots published by
 * then, see the top), reads peers' slots with weft__tiny_read and ends
 * with weft__tiny_end, also after an error of publish or read. */
weft_err weft__tiny_begin(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype, uint32_t op,
                          uint32_t root, weft__tiny *t, weft_diag *d);
weft_err weft__tiny_publish(weft__tiny *t, bool reads_all, weft_diag *d);
/* Publishes as weft__tiny_publish for a rank that names rank q its root
 * (a broadcast's non-root, which then reads q's slot; a reduce's
 * non-root, which reads none): with a full barrier, then compares q's
 * slot if it holds the call already, else every peer's published slot as
 * weft__tiny_publish (see the top). */
weft_err weft__tiny_publish_for(weft__tiny *t, uint32_t q, weft_diag *d);
/* Waits until rank q (q may be this rank) published the call, compares its
 * arguments with this rank's (see the top), and sets *data to its slot's
 * data (valid until weft__tiny_end) and *aux to its aux. */
weft_err weft__tiny_read(weft__tiny *t, uint32_t q, const unsigned char **data, uint64_t *aux,
                         weft_diag *d);
/* Publishes that this rank finished reading the call, unless the call
 * failed the communicator (a rank that found a disagreement keeps the
 * slots of the call for the others to compare). */
void weft__tiny_end(weft__tiny *t, weft_err e);

/* The reductions, whole, on count elements of dtype (count x size <=
 * WEFT__TINY_BYTES, count > 0): every rank's input is copied into its
 * slot, and each result is combined from the slots in rank order,
 * ((in_0 op in_1) op in_2) ..., as weft's other allreduce paths combine,
 * so every rank's result is bit-identical. in may equal out. A reduce's
 * non-roots return once their input is published; out is then not
 * touched. Reduce-scatter: count elements per rank's block, n blocks of
 * input. The caller resolves the reduction once (fn, es), so that the call
 * passes one pointer instead of a dozen arguments (each wrapper level of
 * those cost about 20 instructions a call, callgrind). */
typedef struct weft__tiny_red {
    weft_coll coll; /* WEFT_COLL_ALLREDUCE, _REDUCE or _REDUCESCATTER */
    const void *in;
    void *out;
    size_t count;
    weft_dtype dtype;
    weft_redop op;
    uint32_t root;      /* a reduce's; else 0 */
    weft__reduce_fn fn; /* weft__reduce_get(dtype, op); NULL: the call fails */
    size_t es;          /* weft_dtype_size(dtype) */
} weft__tiny_red;
weft_err weft__tiny_reduction(weft_comm *c, const weft__tiny_red *r, weft_diag *d);

/* MPI_Reduce_scatter's slots start with its recvcounts (n int32), which
 * a rank with no block of its own publishes and does not read (it returns
 * once published, as a reduce's non-root); so the ranks that read compare
 * them: weft__tiny_counts, on every rank's slot of call t (src, from
 * weft__tiny_read_all), finds the first rank and index that differ from
 * rank 0's: an error of the call alone where every rank has a block by
 * its own recvcounts (every rank read and found it; the communicator
 * stays usable), else it publishes the call as its fault and fails the
 * communicator with that message, which a rank that returned earlier
 * learns at its next ring call (its verdict compares the recvcounts of
 * every slot whose aux is WEFT__TINY_AUX_COUNTS: the same message). Where
 * every rank's own count is 0 by its own recvcounts, no rank reads and
 * none compares; none returns data either. */
#define WEFT__TINY_AUX_COUNTS 0x73746e756f63ull /* "counts" */
weft_err weft__tiny_counts(weft__tiny *t, const unsigned char *const *src, weft_diag *d);

/* Reads every rank's slot of call t into src (size pointers: those of
 * weft__tiny_ptrs), in rank order; the first error of weft__tiny_read. */
weft_err weft__tiny_read_all(weft__tiny *t, const unsigned char **src, weft_diag *d);

/* dst = ((src[0] op src[1]) op src[2]) ... over the count elements of es
 * bytes at byte `offset` of each of the n slots: the rank-order fold every
 * reducing call of the ring makes, bit-identical on every rank. */
void weft__tiny_fold(weft__reduce_fn fn, void *dst, const unsigned char *const *src, uint32_t n,
                     size_t offset, size_t count, size_t es);

/* Room for size pointers of the caller's (per communicator). */
const unsigned char **weft__tiny_ptrs(const weft_comm *c);

/* Ring calls run on c so far (for tests and the library's report). */
uint64_t weft__tiny_calls(const weft_comm *c);

#endif
