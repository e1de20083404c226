/* Starting a communicator under an MPI launcher, for commands that run
 * ranks (weft perf). The build compiles exactly one of with_mpi.c (MPI was
 * found; weft links libweft_mpi and MPI) and without_mpi.c. */
#ifndef WEFT_CLI_MPI_H
#define WEFT_CLI_MPI_H

#include <stdbool.h>

#include "weft/comm.h"

/* True when this build has MPI and the environment says an MPI launcher
 * started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK). */
bool cli_mpi_launched(void);
/* Initialises MPI and builds c over MPI_COMM_WORLD (cfg as for
 * weft_comm_init_mpi). */
weft_err cli_mpi_comm_init(const weft_comm_config *cfg, weft_comm **out, weft_diag *d);
/* Frees c and finalises MPI (if cli_mpi_comm_init initialised it). */
void cli_mpi_comm_free(weft_comm *c);

#endif
