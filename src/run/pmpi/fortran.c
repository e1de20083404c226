/* The Fortran entry points interposed: Open MPI's Fortran bindings (mpif.h
 * and `use mpi` call mpi_allreduce_ & co. in libmpi_mpifh.so; `use mpi_f08`
 * calls mpi_allreduce_f08_ in libmpi_usempif08.so) call PMPI_* directly,
 * so without these a Fortran program never reaches the C functions of this
 * library. Each entry point here converts the Fortran handles
 * (PMPI_Comm_f2c, PMPI_Type_f2c, PMPI_Op_f2c, ...) and Fortran's
 * MPI_IN_PLACE (the address of Open MPI's common block
 * mpi_fortran_in_place) and calls the C function of the same name, which
 * serves the call or passes it to MPI and counts it either way; results go
 * back as Fortran handles and the optional ierror.
 *
 * Every Fortran name convention is defined: mpi_allreduce_ (gfortran),
 * mpi_allreduce__, mpi_allreduce, MPI_ALLREDUCE, and mpi_allreduce_f08_
 * (Open MPI 4.1's `use mpi_f08`, whose handles are one-integer types, laid
 * out as the integer, and whose ierror is optional: NULL when absent;
 * its choice buffers are passed as addresses, as Open MPI 4.1 declares them
 * with gfortran's NO_ARG_CHECK). Covered: MPI_Init, MPI_Init_thread,
 * MPI_Finalize, the communicator constructors, MPI_Comm_free and
 * MPI_Comm_disconnect, and every collective of weft__pmpi_coll but
 * MPI_Alltoallw. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "run/pmpi/pmpi.h"

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int");

/* Defines the five Fortran names of a subroutine as aliases of fn. */
#define FORTRAN(lower, upper, fn)                                                                  \
    extern __typeof__(fn) lower##_ __attribute__((alias(#fn), visibility("default")));             \
    extern __typeof__(fn) lower##__ __attribute__((alias(#fn), visibility("default")));            \
    extern __typeof__(fn) lower __attribute__((alias(#fn), visibility("default")));                \
    extern __typeof__(fn) upper __attribute__((alias(#fn), visibility("default")));                \
    extern __typeof__(fn) lower##_f08_ __attribute__((alias(#fn), visibility("default")))

static void set_err(MPI_Fint *ierror, int rc)
{
    if (ierror)
        *ierror = (MPI_Fint)rc;
}

/* Fortran's MPI_IN_PLACE: the address of Open MPI's common block, under
 * whichever name the compiler gave it; NULL where no Fortran library is
 * loaded. Looked up once, by the first thread that needs it. */
static const void *in_place_at;
static pthread_once_t in_place_once = PTHREAD_ONCE_INIT;

static void look_up_in_place(void)
{
    const char *const names[] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                 "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
    for (size_t i = 0; !in_place_at && i < sizeof names / sizeof names[0]; i++)
        in_place_at = dlsym(RTLD_DEFAULT, names[i]);
}

static const void *fortran_in_place(void)
{
    pthread_once(&in_place_once, look_up_in_place);
    return in_place_at;
}

static const void *in_place(const void *buf)
{
    const void *ip = fortran_in_place();
    return ip && buf == ip ? MPI_IN_PLACE : buf;
}

static MPI_Comm comm_of(const MPI_Fint *c)
{
    return PMPI_Comm_f2c(*c);
}

static MPI_Datatype type_of(const MPI_Fint *t)
{
    return PMPI_Type_f2c(*t);
}

static MPI_Op op_of(const MPI_Fint *o)
{
    return PMPI_Op_f2c(*o);
}

/* ---- MPI_Init, MPI_Init_thread, MPI_Finalize ---------------------------- */

static void f_init(MPI_Fint *ierror)
{
    set_err(ierror, MPI_Init(NULL, NULL));
}
FORTRAN(mpi_init, MPI_INIT, f_init);

static void f_init_thread(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror)
{
    int p = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &p);
    *provided = (MPI_Fint)p;
    set_err(ierror, rc);
}
FORTRAN(mpi_init_thread, MPI_INIT_THREAD, f_init_thread);

static void f_finalize(MPI_Fint *ierror)
{
    set_err(ierror, MPI_Finalize());
}
FORTRAN(mpi_finalize, MPI_FINALIZE, f_finalize);

/* ---- Communicators ---------------------------------------------------------- */

static void f_comm_dup(const MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierror)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(comm_of(comm), &c);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_dup, MPI_COMM_DUP, f_comm_dup);

static void f_comm_split(const MPI_Fint *comm, const MPI_Fint *color, const MPI_Fint *key,
                         MPI_Fint *newcomm, MPI_Fint *ierror)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split(comm_of(comm), (int)*color, (int)*key, &c);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_split, MPI_COMM_SPLIT, f_comm_split);

static void f_comm_split_type(const MPI_Fint *comm, const MPI_Fint *type, const MPI_Fint *key,
                              const MPI_Fint *info, MPI_Fint *newcomm, MPI_Fint *ierror)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(comm_of(comm), (int)*type, (int)*key, PMPI_Info_f2c(*info), &c);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_split_type, MPI_COMM_SPLIT_TYPE, f_comm_split_type);

static void f_comm_create(const MPI_Fint *comm, const MPI_Fint *group, MPI_Fint *newcomm,
                          MPI_Fint *ierror)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_create(comm_of(comm), PMPI_Group_f2c(*group), &c);
    if (rc == MPI_SUCCESS)
        *newcomm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_create, MPI_COMM_CREATE, f_comm_create);

static void f_comm_free(MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Comm c = comm_of(comm);
    int rc = MPI_Comm_free(&c);
    if (rc == MPI_SUCCESS)
        *comm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_free, MPI_COMM_FREE, f_comm_free);

static void f_comm_disconnect(MPI_Fint *comm, MPI_Fint *ierror)
{
    MPI_Comm c = comm_of(comm);
    int rc = MPI_Comm_disconnect(&c);
    if (rc == MPI_SUCCESS)
        *comm = PMPI_Comm_c2f(c);
    set_err(ierror, rc);
}
FORTRAN(mpi_comm_disconnect, MPI_COMM_DISCONNECT, f_comm_disconnect);

/* ---- Collectives -------------------------------------------------------------- */

/* The Fortran request of a non-blocking call that returned rc. */
static void request_out(int rc, MPI_Request r, MPI_Fint *request)
{
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
}

static void f_allreduce(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                        const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                        MPI_Fint *ierror)
{
    set_err(ierror, MPI_Allreduce(in_place(sendbuf), recvbuf, (int)*count, type_of(datatype),
                                  op_of(op), comm_of(comm)));
}
FORTRAN(mpi_allreduce, MPI_ALLREDUCE, f_allreduce);

static void f_iallreduce(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                         const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                         MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Iallreduce(in_place(sendbuf), recvbuf, (int)*count, type_of(datatype), op_of(op),
                            comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_iallreduce, MPI_IALLREDUCE, f_iallreduce);

static void f_reduce(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                     const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *root,
                     const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_err(ierror, MPI_Reduce(in_place(sendbuf), recvbuf, (int)*count, type_of(datatype),
                               op_of(op), (int)*root, comm_of(comm)));
}
FORTRAN(mpi_reduce, MPI_REDUCE, f_reduce);

static void f_ireduce(const void *sendbuf, void *recvbuf, const MPI_Fint *count,
                      const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *root,
                      const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ireduce(in_place(sendbuf), recvbuf, (int)*count, type_of(datatype), op_of(op),
                         (int)*root, comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ireduce, MPI_IREDUCE, f_ireduce);

static void f_bcast(void *buffer, const MPI_Fint *count, const MPI_Fint *datatype,
                    const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_err(ierror, MPI_Bcast(buffer, (int)*count, type_of(datatype), (int)*root, comm_of(comm)));
}
FORTRAN(mpi_bcast, MPI_BCAST, f_bcast);

static void f_ibcast(void *buffer, const MPI_Fint *count, const MPI_Fint *datatype,
                     const MPI_Fint *root, const MPI_Fint *comm, MPI_Fint *request,
                     MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ibcast(buffer, (int)*count, type_of(datatype), (int)*root, comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ibcast, MPI_IBCAST, f_ibcast);

static void f_allgather(const void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                        void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                        const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_err(ierror, MPI_Allgather(in_place(sendbuf), (int)*sendcount, type_of(sendtype), recvbuf,
                                  (int)*recvcount, type_of(recvtype), comm_of(comm)));
}
FORTRAN(mpi_allgather, MPI_ALLGATHER, f_allgather);

static void f_iallgather(const void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                         void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                         const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Iallgather(in_place(sendbuf), (int)*sendcount, type_of(sendtype), recvbuf,
                            (int)*recvcount, type_of(recvtype), comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_iallgather, MPI_IALLGATHER, f_iallgather);

static void f_alltoall(const void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                       void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                       const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_err(ierror, MPI_Alltoall(in_place(sendbuf), (int)*sendcount, type_of(sendtype), recvbuf,
                                 (int)*recvcount, type_of(recvtype), comm_of(comm)));
}
FORTRAN(mpi_alltoall, MPI_ALLTOALL, f_alltoall);

static void f_ialltoall(const void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,
                        void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,
                        const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ialltoall(in_place(sendbuf), (int)*sendcount, type_of(sendtype), recvbuf,
                           (int)*recvcount, type_of(recvtype), comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ialltoall, MPI_IALLTOALL, f_ialltoall);

static void f_alltoallv(const void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                        const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,
                        const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,
                        MPI_Fint *ierror)
{
    set_err(ierror, MPI_Alltoallv(in_place(sendbuf), sendcounts, sdispls, type_of(sendtype),
                                  recvbuf, recvcounts, rdispls, type_of(recvtype), comm_of(comm)));
}
FORTRAN(mpi_alltoallv, MPI_ALLTOALLV, f_alltoallv);

static void f_ialltoallv(const void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                         const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,
                         const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,
                         MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ialltoallv(in_place(sendbuf), sendcounts, sdispls, type_of(sendtype), recvbuf,
                            recvcounts, rdispls, type_of(recvtype), comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ialltoallv, MPI_IALLTOALLV, f_ialltoallv);

static void f_reduce_scatter_block(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                   const MPI_Fint *datatype, const MPI_Fint *op,
                                   const MPI_Fint *comm, MPI_Fint *ierror)
{
    set_err(ierror, MPI_Reduce_scatter_block(in_place(sendbuf), recvbuf, (int)*recvcount,
                                             type_of(datatype), op_of(op), comm_of(comm)));
}
FORTRAN(mpi_reduce_scatter_block, MPI_REDUCE_SCATTER_BLOCK, f_reduce_scatter_block);

static void f_ireduce_scatter_block(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcount,
                                    const MPI_Fint *datatype, const MPI_Fint *op,
                                    const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ireduce_scatter_block(in_place(sendbuf), recvbuf, (int)*recvcount,
                                       type_of(datatype), op_of(op), comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ireduce_scatter_block, MPI_IREDUCE_SCATTER_BLOCK, f_ireduce_scatter_block);

static void f_reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts,
                             const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                             MPI_Fint *ierror)
{
    set_err(ierror, MPI_Reduce_scatter(in_place(sendbuf), recvbuf, recvcounts, type_of(datatype),
                                       op_of(op), comm_of(comm)));
}
FORTRAN(mpi_reduce_scatter, MPI_REDUCE_SCATTER, f_reduce_scatter);

static void f_ireduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Fint *recvcounts,
                              const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                              MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ireduce_scatter(in_place(sendbuf), recvbuf, recvcounts, type_of(datatype),
                                 op_of(op), comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ireduce_scatter, MPI_IREDUCE_SCATTER, f_ireduce_scatter);

static void f_ibarrier(const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierror)
{
    MPI_Request r;
    int rc = MPI_Ibarrier(comm_of(comm), &r);
    request_out(rc, r, request);
    set_err(ierror, rc);
}
FORTRAN(mpi_ibarrier, MPI_IBARRIER, f_ibarrier);
