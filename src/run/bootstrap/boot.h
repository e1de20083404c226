/* Bootstrap backends: how the ranks of a job first find each other.
 *
 * A bootstrap carries small, rare messages (addresses, agreement hashes,
 * barriers); bulk data goes through the transports. Each backend is one file
 * that exports one const table of operations:
 *
 *   weft__boot_tcp  TCP rendezvous: rank 0 listens at the configured address
 *                   (or on an inherited socket), every other rank connects
 *                   to it; a star, so allgather costs 2(n-1) messages.
 *   weft__boot_mpi  an MPI communicator (built only when MPI is found;
 *                   src/run/mpi/).
 *   weft__boot_sub  another weft communicator's bootstrap (sub.c): a second
 *                   communicator of the same ranks, formed without a second
 *                   rendezvous (the checkpoint channel, ckpt_join.c).
 */
#ifndef WEFT_RUN_BOOT_H
#define WEFT_RUN_BOOT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/comm.h"

typedef struct weft__boot weft__boot;

typedef struct weft__boot_params {
    const weft_comm_config *cfg; /* rank, size, addr, listen_fd, secret */
    int64_t deadline;            /* absolute, for open */
    const void *mpi_comm;        /* weft__boot_mpi: points to an MPI_Comm */
    weft_comm *parent;           /* weft__boot_sub: the communicator to ride on */
} weft__boot_params;

/* The largest allgather contribution, per rank: a bootstrap message longer
 * than this is malformed and refused. */
#define WEFT__BOOT_MAX_BYTES (1u << 20)

typedef struct weft__boot_ops {
    const char *name;
    /* Joins the job. Blocks until every rank has joined or the deadline
     * passes. On success *out is owned by the caller (free with close), the
     * job secret is in secret (the configured one, or one rank 0 drew and
     * handed out), and *local is the IPv4 address this rank used to reach
     * the others (INADDR_ANY when the backend cannot tell). */
    weft_err (*open)(const weft__boot_params *p, weft__boot **out,
                     unsigned char secret[WEFT_SECRET_BYTES], struct in_addr *local, weft_diag *d);
    /* Collective: every rank contributes len bytes (len must be equal on
     * every rank, <= WEFT__BOOT_MAX_BYTES); out (size*len bytes, owned by the
     * caller) receives them in rank order. Blocks until done or the deadline;
     * a rank that left is WEFT_EPEER. */
    weft_err (*allgather)(weft__boot *b, const void *in, size_t len, void *out, int64_t deadline,
                          weft_diag *d);
    /* Frees; NULL is allowed. Never blocks. */
    void (*close)(weft__boot *b);
    /* true: failing the communicator (comm_fail.c) leaves the bootstrap
     * open until weft_comm_free instead of closing it. The MPI backend:
     * closing calls MPI (MPI_Comm_free), and a failure may come on a
     * thread that must not call MPI (the interposition library's progress
     * thread, pmpi/progress.c); freeing an MPI communicator ends no peer's
     * wait anyway. */
    bool keep_on_fail;
} weft__boot_ops;

extern const weft__boot_ops weft__boot_tcp;
extern const weft__boot_ops weft__boot_sub;

#endif
