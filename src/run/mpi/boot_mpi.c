/* The MPI bootstrap backend (see boot_mpi.h). */
#include "run/mpi/boot_mpi.h"

#include <arpa/inet.h>
#include <mpi.h>
#include <string.h>

#include "base/alloc.h"

struct weft__boot {
    MPI_Comm comm;
};

static void mpi_close(weft__boot *b)
{
    if (!b)
        return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(&b->comm);
    weft__free(b);
}

static weft_err mpi_open(const weft__boot_params *p, weft__boot **out,
                         unsigned char secret[WEFT_SECRET_BYTES], struct in_addr *local,
                         weft_diag *d)
{
    weft__boot *b = weft__calloc(1, sizeof *b);
    if (!b)
        return weft_diag_code(d, WEFT_ENOMEM);
    if (MPI_Comm_dup(*(const MPI_Comm *)p->mpi_comm, &b->comm) != MPI_SUCCESS) {
        weft__free(b);
        return weft_diag_set(d, WEFT_EIO, "bootstrap: MPI_Comm_dup failed");
    }
    unsigned char job[WEFT_SECRET_BYTES];
    int ok = 1;
    if (p->cfg->has_secret)
        memcpy(job, p->cfg->secret, sizeof job);
    else if (p->cfg->rank == 0 && weft_secret_generate(job))
        ok = 0;
    /* Everyone learns whether rank 0 could draw a secret, then the secret. */
    if (MPI_Bcast(&ok, 1, MPI_INT, 0, b->comm) != MPI_SUCCESS || !ok ||
        MPI_Bcast(job, WEFT_SECRET_BYTES, MPI_BYTE, 0, b->comm) != MPI_SUCCESS) {
        mpi_close(b);
        return weft_diag_set(d, WEFT_EIO, "bootstrap: could not agree on a job secret over MPI");
    }
    memcpy(secret, job, sizeof job);
    local->s_addr = htonl(INADDR_ANY);
    *out = b;
    return WEFT_OK;
}

static weft_err mpi_allgather(weft__boot *b, const void *in, size_t len, void *out,
                              int64_t deadline, weft_diag *d)
{
    (void)deadline;
    if (len > WEFT__BOOT_MAX_BYTES)
        return weft_diag_set(d, WEFT_ELIMIT, "bootstrap: %zu-byte message exceeds the limit", len);
    if (MPI_Allgather(in, (int)len, MPI_BYTE, out, (int)len, MPI_BYTE, b->comm) != MPI_SUCCESS)
        return weft_diag_set(d, WEFT_EPEER, "bootstrap: MPI_Allgather failed");
    return WEFT_OK;
}

const weft__boot_ops weft__boot_mpi = {
    .name = "mpi",
    .open = mpi_open,
    .allgather = mpi_allgather,
    .close = mpi_close,
    .keep_on_fail = true,
};
