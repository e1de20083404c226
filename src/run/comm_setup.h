/* Setting a communicator up on an opened bootstrap (comm.c), for the
 * bootstraps other than the environment's (mpi/comm_mpi.c). */
#ifndef WEFT_RUN_COMM_SETUP_H
#define WEFT_RUN_COMM_SETUP_H

#include "run/bootstrap/boot.h"
#include "run/comm_internal.h"

/* Builds a communicator on an opened bootstrap backend (comm.c). */
weft_err weft__comm_setup(const weft_comm_config *cfg, const weft__boot_ops *bops,
                          const weft__boot_params *bp, weft_comm **out, weft_diag *d);

#endif
