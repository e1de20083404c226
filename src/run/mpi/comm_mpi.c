/* weft_comm_init_mpi (see weft/comm_mpi.h). */
#include "weft/comm_mpi.h"
#include "run/comm_setup.h"

#include "run/comm_internal.h"
#include "run/mpi/boot_mpi.h"

weft_err weft_comm_init_mpi(MPI_Comm mc, const weft_comm_config *cfg, weft_comm **out, weft_diag *d)
{
    weft_comm_config c;
    if (cfg)
        c = *cfg;
    else
        weft_comm_config_init(&c);
    int rank, size;
    if (MPI_Comm_rank(mc, &rank) != MPI_SUCCESS || MPI_Comm_size(mc, &size) != MPI_SUCCESS)
        return weft_diag_set(d, WEFT_EINVAL, "comm: not a valid MPI communicator");
    c.rank = (uint32_t)rank;
    c.size = (uint32_t)size;
    c.addr = NULL;
    c.listen_fd = -1;
    weft__boot_params p = {.cfg = &c, .mpi_comm = &mc};
    return weft__comm_setup(&c, &weft__boot_mpi, &p, out, d);
}
