/* weft_alltoallv's internals that its test reaches (coll_alltoallv.c). */
#ifndef WEFT_RUN_COLL_ALLTOALLV_H
#define WEFT_RUN_COLL_ALLTOALLV_H

#include <stdint.h>

#include "weft/comm.h"

/* Up to this many ranks the counts are agreed with one allgather of every
 * rank's counts; beyond, with an alltoall and an allgather (128; the test
 * sets 0 to run the second way on a few ranks). */
extern uint32_t weft__alltoallv_all_max;

/* WEFT_EINVAL with the message for counts that differ: "comm: ranks
 * disagree on the counts of alltoallv: rank SENDER sends SENT elements
 * (DTYPE) to rank RECEIVER, which expects EXPECTED" (also the MPI
 * library's ring path, run/pmpi/tiny.c, names the first pair so). */
weft_err weft__alltoallv_differ(weft_diag *d, uint64_t sender, uint64_t sent, weft_dtype dtype,
                                uint32_t receiver, uint64_t expected);

#endif
