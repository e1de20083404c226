/* cli_mpi.h when the build has no MPI: never launched by MPI. */
#include "cli/mpi/cli_mpi.h"

bool cli_mpi_launched(void)
{
    return false;
}

weft_err cli_mpi_comm_init(const weft_comm_config *cfg, weft_comm **out, weft_diag *d)
{
    (void)cfg;
    (void)out;
    return weft_diag_set(d, WEFT_EUNSUPPORTED, "this weft was built without MPI");
}

void cli_mpi_comm_free(weft_comm *c)
{
    weft_comm_free(c);
}
