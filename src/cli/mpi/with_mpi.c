/* cli_mpi.h when MPI was found at build time. */
#include <mpi.h>
#include <stdlib.h>

#include "cli/mpi/cli_mpi.h"
#include "weft/comm_mpi.h"

static bool we_initialised;

bool cli_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

weft_err cli_mpi_comm_init(const weft_comm_config *cfg, weft_comm **out, weft_diag *d)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return weft_diag_set(d, WEFT_EIO, "perf: MPI_Init failed");
        we_initialised = true;
    }
    return weft_comm_init_mpi(MPI_COMM_WORLD, cfg, out, d);
}

void cli_mpi_comm_free(weft_comm *c)
{
    weft_comm_free(c);
    if (we_initialised) {
        MPI_Finalize();
        we_initialised = false;
    }
}
