/* Building a weft communicator when the job was launched by MPI.
 *
 * MPI is used only to bootstrap: rank and size, handing out the job secret,
 * and the small address exchanges and agreement checks (weft_comm_agree,
 * weft_comm_barrier). Bulk data always goes through weft's own transports.
 * This header and libweft_mpi exist only when the build found an MPI;
 * link with weft_mpi (and MPI) to use it.
 *
 * The MPI backend cannot put a deadline on MPI calls: a rank that never
 * arrives at a bootstrap exchange blocks the others in MPI. The weft_comm
 * must be freed before MPI_Finalize.
 */
#ifndef WEFT_COMM_MPI_H
#define WEFT_COMM_MPI_H

#include <mpi.h>

#include "weft/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over mc: builds a communicator whose ranks are mc's. cfg gives
 * the other settings (timeout, transport, interfaces, connections, and the
 * secret if the caller has one; its rank, size, addr and listen_fd are
 * ignored); NULL means the defaults. mc is duplicated, so weft's messages
 * never mix with the caller's. */
WEFT_API weft_err weft_comm_init_mpi(MPI_Comm mc, const weft_comm_config *cfg, weft_comm **out,
                                     weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
