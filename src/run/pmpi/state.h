/* The interposition library's process-wide state, shared by state.c (the
 * accessors in pmpi.h) and init.c (MPI_Init*, MPI_Finalize). */
#ifndef WEFT_RUN_PMPI_STATE_H
#define WEFT_RUN_PMPI_STATE_H

#include <stdint.h>

#include "run/pmpi/pmpi.h"

typedef struct weft__pmpi_state {
    weft_comm *comm; /* NULL while weft serves nothing */
    int rank;        /* in MPI_COMM_WORLD; -1 before MPI_Init */
    int depth;       /* weft calls running (weft's bootstrap calls MPI) */
    uint64_t served[WEFT__PMPI_COLL_COUNT];
    uint64_t passed[WEFT__PMPI_COLL_COUNT];
} weft__pmpi_state;

extern weft__pmpi_state weft__pmpi;

/* Logs the counters of every collective at info level. */
void weft__pmpi_report(void);

#endif
