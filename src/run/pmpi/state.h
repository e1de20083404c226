/* The interposition library's process-wide state, shared by state.c (the
 * accessors in pmpi.h), init.c (MPI_Init*, MPI_Finalize) and comm.c (the
 * communicator constructors). */
#ifndef WEFT_RUN_PMPI_STATE_H
#define WEFT_RUN_PMPI_STATE_H

#include <stdint.h>

#include "run/pmpi/pmpi.h"

/* An MPI communicator that has a weft communicator. */
typedef struct weft__pmpi_entry {
    MPI_Comm mpi;
    weft_comm *comm;
    weft__pmpi_kind kind;
} weft__pmpi_entry;

/* How many calls of one collective went to MPI for one reason. */
typedef struct weft__pmpi_reason {
    weft__pmpi_coll coll;
    uint64_t calls;
    char why[256]; /* truncated past 255 bytes */
} weft__pmpi_reason;

/* The distinct (collective, reason) pairs counted; calls for more go to
 * passed_more. */
#define WEFT__PMPI_REASONS 64

typedef struct weft__pmpi_state {
    bool on;    /* weft serves calls (MPI_COMM_WORLD's communicator was built) */
    int rank;   /* in MPI_COMM_WORLD; -1 before MPI_Init */
    int depth;  /* weft calls running (weft's bootstrap calls MPI) */
    weft_comm_config cfg;     /* what every communicator is built with */
    weft__pmpi_entry *comms;  /* [0] is MPI_COMM_WORLD's while on */
    uint32_t ncomms, cap, max_comms;
    uint64_t served[WEFT__PMPI_KIND_COUNT][WEFT__PMPI_COLL_COUNT];
    uint64_t passed[WEFT__PMPI_KIND_COUNT][WEFT__PMPI_COLL_COUNT];
    weft__pmpi_reason reasons[WEFT__PMPI_REASONS];
    uint32_t nreasons;
    uint64_t passed_more[WEFT__PMPI_COLL_COUNT];
} weft__pmpi_state;

extern weft__pmpi_state weft__pmpi;

/* Adds (mpi, comm, kind) to the table; false when out of memory. */
bool weft__pmpi_add(MPI_Comm mpi, weft_comm *comm, weft__pmpi_kind kind);
/* Removes mpi's entry and returns its weft communicator (NULL if none). */
weft_comm *weft__pmpi_remove(MPI_Comm mpi);

/* Logs the counters at info level: every collective's over all
 * communicators, then one line per kind of communicator that had calls,
 * then one line per collective and reason for the calls passed to MPI. */
void weft__pmpi_report(void);

#endif
