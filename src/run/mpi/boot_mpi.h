/* The MPI bootstrap backend (built only when MPI is found). */
#ifndef WEFT_RUN_BOOT_MPI_H
#define WEFT_RUN_BOOT_MPI_H

#include "run/bootstrap/boot.h"

/* Bootstrap over a duplicate of the MPI_Comm that params->mpi_comm points
 * to: rank 0 draws the secret (unless configured) and broadcasts it;
 * allgather is MPI_Allgather. No deadlines: MPI calls block until they
 * complete. */
extern const weft__boot_ops weft__boot_mpi;

#endif
