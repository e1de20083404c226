/* weft_alltoallv's internals that its test reaches (coll_alltoallv.c). */
#ifndef WEFT_RUN_COLL_ALLTOALLV_H
#define WEFT_RUN_COLL_ALLTOALLV_H

#include <stdint.h>

/* Up to this many ranks the counts are agreed with one allgather of every
 * rank's counts; beyond, with an alltoall and an allgather (128; the test
 * sets 0 to run the second way on a few ranks). */
extern uint32_t weft__alltoallv_all_max;

#endif
