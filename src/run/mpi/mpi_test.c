/* weft_comm_init_mpi under mpiexec (CTest runs it with 3 ranks): the job
 * secret and addresses go through MPI, the data through shared memory and
 * then TCP, checked element by element; agreement checks go through MPI. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "weft/comm_mpi.h"

static void check_comm(weft_transport_choice t, const char *name)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = 20000;
    weft_comm *c = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_comm_init_mpi(MPI_COMM_WORLD, &cfg, &c, &d);
    CHECK_ERR(e, WEFT_OK);
    if (e) {
        fprintf(stderr, "weft_comm_init_mpi: %s\n", d.msg);
        return;
    }
    int mrank, msize;
    MPI_Comm_rank(MPI_COMM_WORLD, &mrank);
    MPI_Comm_size(MPI_COMM_WORLD, &msize);
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    CHECK_INT(n, msize);
    CHECK_INT(me, mrank);
    CHECK_STR(weft_comm_transport(c, (me + 1) % n), n > 1 ? name : "self");
    enum { COUNT = 300007 };
    int64_t *v = malloc(COUNT * sizeof *v);
    for (int i = 0; i < COUNT; i++)
        v[i] = (int64_t)me * 3 + i;
    CHECK_ERR(weft_allreduce(c, v, v, COUNT, WEFT_INT64, WEFT_SUM, NULL), WEFT_OK);
    size_t bad = 0;
    for (int i = 0; i < COUNT; i++)
        bad += v[i] != (int64_t)n * i + 3 * (int64_t)n * (n - 1) / 2;
    CHECK_INT(bad, 0);
    free(v);
    CHECK_ERR(weft_comm_agree(c, "size", &n, sizeof n, NULL), WEFT_OK);
    weft_diag_clear(&d);
    CHECK_ERR(weft_comm_agree(c, "rank", &me, sizeof me, &d), n > 1 ? WEFT_EINVAL : WEFT_OK);
    if (n > 1)
        CHECK_CONTAINS(d.msg, "ranks disagree on rank: rank 1 has hash ");
    weft_comm_free(c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_comm(WEFT_TRANSPORT_SHM, "shm");
    check_comm(WEFT_TRANSPORT_TCP, "tcp");
    int failed = weft__test_failed, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("all ranks: %d failed checks\n", any);
    return weft_test_done();
}
