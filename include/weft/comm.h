/* weft communicators: running collectives for real across processes.
 *
 * A weft_comm joins `size` processes (ranks 0 .. size-1) into one job. It is
 * built in three steps:
 *
 *  1. Bootstrap: the ranks find each other through an out-of-band channel,
 *     either a TCP rendezvous at a known address (rank 0 listens there; see
 *     weft_comm_init and weft_comm_init_env) or an MPI communicator
 *     (weft_comm_init_mpi in weft/comm_mpi.h). The bootstrap also agrees on
 *     the per-job secret and carries the address exchange and the agreement
 *     checks (weft_comm_agree); it is never used for bulk data.
 *  2. Transports: every pair of ranks on one host talks through shared memory,
 *     every other pair through TCP (several connections per pair); the
 *     choice can be forced. Every TCP connection presents the job secret and
 *     connections that do not are refused and logged.
 *  3. Use: blocking point-to-point calls and collectives. Every blocking wait
 *     has a deadline (config timeout_ms, default 30 s, counted from the last
 *     byte that moved), and a dead peer is detected (socket EOF/reset, or for
 *     shared memory the peer's process state), so a call returns WEFT_EPEER
 *     or WEFT_ETIMEDOUT instead of hanging. After such an error the
 *     communicator is failed: it tells its peers (closing its connections,
 *     flagging its shared segment) so that they fail too, and every later
 *     call returns WEFT_EPEER at once. Output buffers of a failed call hold
 *     unspecified data.
 *
 * A communicator is used by one thread at a time; different communicators
 * may be used by different threads at once (they share no mutable state:
 * libweft_mpi.so serves MPI_THREAD_MULTIPLE so). Ranks are uint32_t.
 * The architecture, the environment variables and the security model are in
 * docs/run.md.
 */
#ifndef WEFT_COMM_H
#define WEFT_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Element types and reduction operators ------------------------------ */

/* Element types. half (IEEE binary16) and bfloat16 are reduced in float and
 * rounded back to nearest even once per combination of two values. */
typedef enum weft_dtype {
    WEFT_INT8 = 0,
    WEFT_UINT8,
    WEFT_INT16,
    WEFT_UINT16,
    WEFT_INT32,
    WEFT_UINT32,
    WEFT_INT64,
    WEFT_UINT64,
    WEFT_HALF,
    WEFT_BFLOAT16,
    WEFT_FLOAT,
    WEFT_DOUBLE,
    WEFT__DTYPE_COUNT
} weft_dtype;

/* Reduction operators. Integer sum and prod wrap modulo 2^bits (two's
 * complement for signed types; never undefined behaviour). Floating-point
 * min and max return NaN when either operand is NaN. */
typedef enum weft_redop {
    WEFT_SUM = 0,
    WEFT_PROD,
    WEFT_MIN,
    WEFT_MAX,
    WEFT__REDOP_COUNT
} weft_redop;

/* Bytes per element; 0 for an invalid dtype. */
WEFT_API size_t weft_dtype_size(weft_dtype t);
/* nccl-tests names: "int8", "uint8", "int16", "uint16", "int32", "uint32",
 * "int64", "uint64", "half", "bfloat16", "float", "double"; "?" if invalid. */
WEFT_API const char *weft_dtype_name(weft_dtype t);
/* Parses a dtype name; "fp16", "bf16", "fp32", "fp64" are accepted too.
 * False when unknown. */
WEFT_API bool weft_dtype_parse(const char *text, weft_dtype *out);
/* "sum", "prod", "min", "max"; "?" if invalid. */
WEFT_API const char *weft_redop_name(weft_redop op);
WEFT_API bool weft_redop_parse(const char *text, weft_redop *out);

/* dst[i] = dst[i] op src[i] for i < count, with both as they were before
 * the call: dst and src may overlap (src is then copied first; WEFT_ENOMEM
 * if that copy cannot be allocated). Neither needs any alignment.
 * WEFT_EINVAL for an invalid dtype or op. */
WEFT_API weft_err weft_reduce_local(void *dst, const void *src, size_t count, weft_dtype dtype,
                                    weft_redop op);

/* Element i of buf as a double (exact except for 64-bit integers beyond
 * 2^53). 0 for an invalid dtype. */
WEFT_API double weft_dtype_load(weft_dtype t, const void *buf, size_t i);
/* Stores v as element i of buf: integer types take v truncated toward zero
 * (v within +-2^63) and wrapped to their width; float and double round to
 * nearest; half and bfloat16 round v to float, then to nearest even. */
WEFT_API void weft_dtype_store(weft_dtype t, void *buf, size_t i, double v);

/* ---- Configuration --------------------------------------------------------- */

typedef enum weft_transport_choice {
    WEFT_TRANSPORT_AUTO = 0, /* shared memory within a host, TCP between hosts */
    WEFT_TRANSPORT_SHM,      /* shared memory only (every rank on one host) */
    WEFT_TRANSPORT_TCP,      /* TCP for every pair, even within a host */
} weft_transport_choice;

#define WEFT_SECRET_BYTES 32
#define WEFT_DEFAULT_TIMEOUT_MS 30000u
#define WEFT_DEFAULT_TCP_CONNS 2u
#define WEFT_MAX_RANKS 4096u
#define WEFT_MAX_TCP_CONNS 16u

/* Everything a communicator needs, passed down explicitly: the library never
 * reads the environment except in weft_comm_config_from_env. Strings are
 * borrowed for the duration of weft_comm_init only. Initialise with
 * weft_comm_config_init, then set fields. */
typedef struct weft_comm_config {
    uint32_t rank, size;
    /* Rendezvous "host:port" (IPv4 address or name). Rank 0 listens there,
     * the others connect; ignored by weft_comm_init_mpi. */
    const char *addr;
    /* A listening socket rank 0 uses for the rendezvous instead of binding
     * addr (weft launch passes one down so no port is ever guessed); -1 for
     * none. The communicator does not close it. */
    int listen_fd;
    /* The per-job secret. When has_secret is false, rank 0 draws one at
     * random and hands it out through the bootstrap (then the rendezvous
     * itself is not authenticated; see docs/run.md). */
    bool has_secret;
    unsigned char secret[WEFT_SECRET_BYTES];
    /* Longest wait without progress before WEFT_ETIMEDOUT; 0 means
     * WEFT_DEFAULT_TIMEOUT_MS. */
    uint32_t timeout_ms;
    weft_transport_choice transport;
    /* Network interfaces for TCP, comma separated ("eth0,eth1"): one set of
     * connections per interface. NULL or "" means the interface of the
     * route to the rendezvous address (loopback when it is local). */
    const char *ifname;
    /* TCP connections per peer and interface, 1 .. WEFT_MAX_TCP_CONNS; 0
     * means WEFT_DEFAULT_TCP_CONNS. */
    uint32_t tcp_conns;
    /* A network namespace file (/var/run/netns/NAME) in which the TCP
     * transport creates its data sockets, listening and connecting; the
     * bootstrap stays in the caller's namespace. ifname is resolved in that
     * namespace (unset: its first non-loopback interface). NULL or "" for
     * none. Needs CAP_SYS_ADMIN; see docs/netns.md. */
    const char *netns;
    /* Plan selection (docs/run.md, "Which schedule runs"). fabric: where
     * the ranks run, a .topo path or preset (weft_topo_from_spec) with as
     * many ranks as the communicator; NULL or "" for none. algo: force this
     * classic algorithm (weft_synth_classic; "ring", "hd", ...) for every
     * collective, built on the fabric or, without one, on "switch:SIZE".
     * plan_file: force this .plan file; then only its collective (and root)
     * may be called. At most one of algo and plan_file. With neither, each
     * call runs the classic algorithm the shared-link estimate
     * (weft_plan_shared_time) ranks fastest on the fabric at the call's
     * size, or, without a fabric, the built-in
     * schedules. Every rank must give the same three (checked at init).
     * tuning: a tuning table (weft/tuning.h, made by `weft tune` for this
     * fabric): with a fabric and nothing forced, each call runs the
     * table's fastest plan by simulation instead of the estimate's
     * ranking; a table for another fabric or rank count fails init. NULL
     * or "" for none. */
    const char *fabric;
    const char *algo;
    const char *plan_file;
    const char *tuning;
    /* The host this rank declares itself on, a name ("h0"); NULL or "" for
     * the machine itself. Ranks share memory (WEFT_TRANSPORT=auto) only
     * when they run on one machine AND declare the same host, so ranks of
     * one machine in different network namespaces (docs/netns.md) can be
     * emulated hosts: shared memory among host-mates, TCP between hosts.
     * The name is combined with the machine's identity, so the same name
     * on two machines never joins them. */
    const char *host;
    /* Relaying (FuseLink, OSDI'25): broadcasts of at least relay_min bytes
     * whose ranks span several hosts run the classic plan relay:auto
     * (weft/synth.h), in which the root's bytes leave its host through the
     * NIC of every rank of the host, handed over by shared memory, instead
     * of the built-in chain, which crosses on one rank's NIC. Only when no
     * fabric, algorithm or plan is configured, and the count is a multiple
     * of the plan's chunks (the ranks of the root's host). 0: never (the
     * default). It pays where each rank owns one NIC (WEFT_SOCKET_IFNAME
     * per rank); docs/netns.md, "Relaying through host-mates". Every rank
     * must give the same (checked at init). */
    uint64_t relay_min;
    /* CPUs this host gives its ranks; 0: detect (the online CPUs, capped by
     * the cgroup's CPU quota, as a container limited to 2 CPUs of a larger
     * machine has). With more ranks on a host than this, the shared-memory
     * paths wait by yielding and sleeping instead of polling and let only
     * this many ranks copy (docs/run.md, "Waits"). Ranks of one host must
     * agree (checked at init). */
    uint32_t cpus;
    /* How many times weft launch --restart has restarted this rank
     * (WEFT_RESTART; 0 for a first start). The library does not act on
     * it: a restarted rank rejoins its job with weft_ckpt_join
     * (weft/ckpt.h), which finds out by itself what the rank lost. */
    uint32_t restart;
} weft_comm_config;

/* Largest config cpus (WEFT_CPUS). */
#define WEFT_MAX_CPUS 65536u

/* What WEFT_RELAY=on sets relay_min to (docs/netns.md has the
 * measurement). */
#define WEFT_RELAY_DEFAULT_MIN (UINT64_C(1) << 20)

/* Sets the defaults: rank 0 of 1, no address, listen_fd -1, no secret,
 * default timeout, automatic transport, default interface, default conns. */
WEFT_API void weft_comm_config_init(weft_comm_config *c);

/* Fills c from the environment (the one place weft reads it):
 *   WEFT_RANK, WEFT_SIZE (required), WEFT_ADDR=host:port (required),
 *   WEFT_SECRET (64 hex digits), WEFT_LISTEN_FD (set by weft launch),
 *   WEFT_TIMEOUT (seconds, decimal allowed), WEFT_TRANSPORT (auto|shm|tcp),
 *   WEFT_SOCKET_IFNAME, WEFT_TCP_CONNS, WEFT_NETNS (a namespace file),
 *   WEFT_FABRIC, WEFT_ALGO, WEFT_PLAN, WEFT_TUNING, WEFT_HOST,
 *   WEFT_RELAY (off, on = WEFT_RELAY_DEFAULT_MIN, or bytes with K, M, G),
 *   WEFT_CPUS (1 .. WEFT_MAX_CPUS), WEFT_RESTART (set by weft launch --restart).
 * Strings in c point into the environment. WEFT_EINVAL naming the variable
 * and the bad value when one is missing or malformed. */
WEFT_API weft_err weft_comm_config_from_env(weft_comm_config *c, weft_diag *d);
/* Reads only the optional variables (WEFT_SECRET, WEFT_LISTEN_FD,
 * WEFT_TIMEOUT, WEFT_TRANSPORT, WEFT_SOCKET_IFNAME, WEFT_TCP_CONNS, WEFT_NETNS,
 * WEFT_FABRIC, WEFT_ALGO, WEFT_PLAN, WEFT_TUNING, WEFT_HOST, WEFT_RELAY,
 * WEFT_CPUS, WEFT_RESTART) into c,
 * leaving the other fields as they are: for jobs an MPI launcher started. */
WEFT_API weft_err weft_comm_config_from_env_options(weft_comm_config *c, weft_diag *d);

/* Parses 2*WEFT_SECRET_BYTES hex digits into out. False when malformed. */
WEFT_API bool weft_secret_parse(const char *hex, unsigned char out[WEFT_SECRET_BYTES]);
/* Draws a random secret from the kernel (getrandom). */
WEFT_API weft_err weft_secret_generate(unsigned char out[WEFT_SECRET_BYTES]);
/* Writes the secret as 64 lowercase hex digits and a NUL (buf >= 65 bytes). */
WEFT_API void weft_secret_format(const unsigned char s[WEFT_SECRET_BYTES], char *buf);

/* ---- Communicators --------------------------------------------------------- */

typedef struct weft_comm weft_comm;

/* Builds a communicator with the TCP rendezvous bootstrap. Blocks until every
 * rank has joined and every transport is connected, or the deadline (config
 * timeout) passes. Collective: every rank must call it. It loads the fabric
 * and the forced plan (errors name the file or spec), checks that their
 * ranks are the communicator's, and checks with weft_comm_agree that every
 * rank has the same fabric, algorithm, plan and tuning table: WEFT_EINVAL on every rank
 * otherwise ("ranks disagree on the algorithm (WEFT_ALGO): ..."). */
WEFT_API weft_err weft_comm_init(const weft_comm_config *c, weft_comm **out, weft_diag *d);
/* weft_comm_config_from_env followed by weft_comm_init. */
WEFT_API weft_err weft_comm_init_env(weft_comm **out, weft_diag *d);
/* Closes every connection and frees; NULL is allowed. Not collective: peers
 * that later wait on this rank get WEFT_EPEER. */
WEFT_API void weft_comm_free(weft_comm *c);

WEFT_API uint32_t weft_comm_rank(const weft_comm *c);
WEFT_API uint32_t weft_comm_size(const weft_comm *c);
/* The transport used to reach peer: "self", "shm" or "tcp". */
WEFT_API const char *weft_comm_transport(const weft_comm *c, uint32_t peer);
/* True once the communicator has failed (see above). */
WEFT_API bool weft_comm_failed(const weft_comm *c);

/* Agreement check, collective: every rank passes its own view of something
 * that must be identical everywhere (a fabric, a plan, a size); a 64-bit hash
 * of it is gathered over the bootstrap channel. WEFT_EINVAL on every rank
 * when any two differ, with a message naming `what` and the first rank that
 * disagrees with rank 0 ("ranks disagree on plan: rank 2 has hash ..., rank 0
 * has ..."). */
WEFT_API weft_err weft_comm_agree(weft_comm *c, const char *what, const void *data, size_t len,
                                  weft_diag *d);
/* Returns once every rank has called it (over the bootstrap channel). */
WEFT_API weft_err weft_comm_barrier(weft_comm *c, weft_diag *d);

/* ---- Shared buffers ------------------------------------------------------ */

/* Allocates `bytes` (0 is allowed: one page) of memory that every rank on
 * this host maps too, like NCCL's registered buffers or MPI_Win_allocate_shared.
 * Collective: every rank calls it, in the same order, each with its own
 * size; any rank's failure (out of memory, /dev/shm full, a segment that
 * cannot be created or mapped: WEFT_ENOMEM or WEFT_EIO with the errno text,
 * or the rank that failed) is an error on every rank, and then nothing is
 * allocated. The memory is page-aligned and zeroed, and is released by
 * weft_comm_free_mem or weft_comm_free; no name is left in /dev/shm.
 * Collectives whose buffers lie in this memory on every rank (the sendbufs
 * in one allocation, the recvbufs in one: sendbuf and recvbuf for allreduce
 * and alltoall, sendbuf for reduce-scatter, recvbuf for allgather, the
 * root's sendbuf and the others' recvbuf for broadcast, every sendbuf and
 * the root's recvbuf for reduce) run single-pass: each rank reads its part
 * straight from the peers' buffers and writes the results straight into
 * them, one memcpy's traffic. The ranks agree per call, so a call where
 * any rank's buffer is elsewhere, or a peer is reached over TCP, runs the
 * ordinary schedule on every rank. */
WEFT_API weft_err weft_comm_alloc(weft_comm *c, size_t bytes, void **out, weft_diag *d);
/* Releases memory from weft_comm_alloc (p as returned; NULL and other
 * pointers are ignored). Not collective: a rank may free while its peers
 * still hold theirs; later calls on buffers in it take the ordinary path. */
WEFT_API void weft_comm_free_mem(weft_comm *c, void *p);

/* ---- Point to point ------------------------------------------------------- */

/* Sends sbytes of sbuf to rank dst and receives rbytes from rank src into
 * rbuf, both at once (so a ring of sendrecv calls cannot deadlock). Messages
 * between a pair arrive in the order sent and must be received with exactly
 * the length sent: a length mismatch is WEFT_EPARSE on the receiver. A
 * zero-byte message is a no-op on both sides. dst or src may be the caller's
 * own rank only together (a local copy). Blocking. */
WEFT_API weft_err weft_sendrecv(weft_comm *c, uint32_t dst, const void *sbuf, size_t sbytes,
                                uint32_t src, void *rbuf, size_t rbytes, weft_diag *d);
WEFT_API weft_err weft_send(weft_comm *c, uint32_t dst, const void *buf, size_t bytes,
                            weft_diag *d);
WEFT_API weft_err weft_recv(weft_comm *c, uint32_t src, void *buf, size_t bytes, weft_diag *d);

/* ---- Collectives ------------------------------------------------------------ */

/* Blocking collectives over all ranks. count is in elements. In-place when
 * sendbuf == recvbuf (for allgather: sendbuf == recvbuf + rank*count
 * elements). Which schedule runs is chosen per call (weft_comm_choose). A
 * forced algorithm or plan that does not fit the call (another collective
 * or root, or count not a multiple of its chunks) is WEFT_EINVAL or
 * WEFT_EUNSUPPORTED naming why; nothing falls back silently. */
/* recvbuf[i] = op over ranks of sendbuf[i], i < count, on every rank. */
WEFT_API weft_err weft_allreduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                 weft_dtype dtype, weft_redop op, weft_diag *d);
/* recvbuf holds size*count elements: rank r's sendbuf at offset r*count. */
WEFT_API weft_err weft_allgather(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                 weft_dtype dtype, weft_diag *d);
/* sendbuf holds size*count elements; rank r gets the reduction of every
 * rank's block r in recvbuf (count elements). In place: recvbuf ==
 * sendbuf + rank*count elements. */
WEFT_API weft_err weft_reduce_scatter(weft_comm *c, const void *sendbuf, void *recvbuf,
                                      size_t count, weft_dtype dtype, weft_redop op, weft_diag *d);
/* recvbuf on every rank = root's sendbuf (count elements). */
WEFT_API weft_err weft_broadcast(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                 weft_dtype dtype, uint32_t root, weft_diag *d);

/* recvbuf on root = op over ranks of sendbuf[i], i < count. recvbuf is
 * used on the root only (other ranks may pass NULL); in place on the root
 * when sendbuf == recvbuf. */
WEFT_API weft_err weft_reduce(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                              weft_dtype dtype, weft_redop op, uint32_t root, weft_diag *d);
/* count elements per pair of ranks: sendbuf and recvbuf hold size*count
 * elements; block d of sendbuf (elements d*count ..) goes to rank d and
 * arrives as block r of its recvbuf, r the sender. In place when sendbuf ==
 * recvbuf. */
WEFT_API weft_err weft_alltoall(weft_comm *c, const void *sendbuf, void *recvbuf, size_t count,
                                weft_dtype dtype, weft_diag *d);
/* All-to-all with a count per pair, as MPI_Alltoallv: rank r sends
 * sendcounts[j] elements from sendbuf + sdispls[j] elements to rank j,
 * where they arrive at recvbuf + rdispls[r] elements; recvcounts[j] is
 * what rank j sends this rank. Every array has size elements. In place when
 * sendbuf == recvbuf: the data to send lies as recvcounts and rdispls
 * describe and is replaced (sendcounts and sdispls are ignored and may be
 * NULL). Before data moves the ranks compare counts (one alltoall and one
 * allgather of a few words): a count that differs from what its receiver
 * expects, or another dtype, is WEFT_EINVAL on every rank with the same
 * message ("comm: ranks disagree on the counts of alltoallv: rank 1 sends 5
 * elements (float) to rank 2, which expects 4"), and nothing is received.
 * Which schedule runs: when config plan_file (WEFT_PLAN) is an alltoallv
 * plan (a traffic matrix), that plan, and every call's counts must be its
 * matrix (WEFT_EINVAL on every rank otherwise, as weft_comm_plan_run_v
 * says); with any other plan forced, or none, weft's own pairwise
 * schedule. */
WEFT_API weft_err weft_alltoallv(weft_comm *c, const void *sendbuf, const size_t *sendcounts,
                                 const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                 const size_t *rdispls, weft_dtype dtype, weft_diag *d);

/* Which schedule a call runs. */
typedef enum weft_choice_source {
    WEFT_CHOICE_BUILTIN = 0, /* the built-in schedules (coll_ring.c, coll_alltoall.c) */
    WEFT_CHOICE_RANKED,      /* the fastest classic algorithm by the shared-link estimate */
    WEFT_CHOICE_ALGO,        /* the algorithm forced by config algo (WEFT_ALGO) */
    WEFT_CHOICE_PLAN,        /* the plan forced by config plan_file (WEFT_PLAN) */
    WEFT_CHOICE_TUNED,       /* the fastest by simulation in config tuning (WEFT_TUNING) */
    WEFT_CHOICE_RELAY,       /* relay:auto across hosts, config relay_min (WEFT_RELAY) */
} weft_choice_source;

typedef struct weft_comm_choice {
    weft_choice_source source;
    const char *algo; /* "ring", "hd", ..., "builtin", "relay:auto", or the plan file's path
                         as given;
                         the communicator's storage, valid until weft_comm_free */
    char reason[WEFT_DIAG_MSG_SIZE]; /* why, e.g. "fastest of 4 by the shared-link estimate
                                        on switch:4 at 4096 B ..."; whole paths */
    double estimate_s; /* shared-link estimate (weft_plan_shared_time), or simulated time
                          (tuned); 0 for builtin */
    uint64_t bytes;    /* the call's size (DESIGN.md's convention per collective) */
} weft_comm_choice;

/* What a call of collective coll with count elements of dtype (root for
 * broadcast and reduce; ignored otherwise) runs on this communicator, and
 * why: the same decision the call makes (and caches: plans are built once
 * per collective and root, ranked once per size class, a power of two of
 * bytes). Not collective; every rank decides alike. Errors are the ones the
 * call would return: a forced choice that does not fit. The first time a
 * (collective, size class) is decided, one line is logged at info level:
 * "weft INFO run: allreduce 4096 B: hd (fastest of ...)". */
WEFT_API weft_err weft_comm_choose(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                                   uint32_t root, weft_comm_choice *out, weft_diag *d);

/* ---- Running plans ----------------------------------------------------------- */

/* Runs plan p (weft/plan.h) on this communicator: collective, every rank
 * passes the same plan. The plan is verified first (weft_plan_verify; its
 * message is returned on failure, WEFT_EVERIFY) and must be for as many
 * ranks as c has. sendbuf, recvbuf and count mean what they mean for the
 * plan's collective above (allgather: count per rank; reducescatter: count
 * received per rank; alltoall: count per pair of ranks; broadcast and
 * reduce: the plan's root); count must be a multiple of the plan's chunks
 * (WEFT_EINVAL otherwise: nothing is padded or cut silently). reduce ops
 * combine with op.
 *
 * Each rank runs the ops it takes part in; every rank computes the same
 * topological order of the deps. Each chunk is cut into slices (about 256
 * KiB, at most 32 per chunk; rank 0 logs the count at debug level), and
 * slice s of an op starts as soon as slice s of every op it depends on
 * (directly or through other ranks' ops) has finished on this rank, so
 * independent transfers run at once and forwarded chunks are pipelined, as
 * in weft_sim_plan with that many slices. Remote ops travel on streams (peer,
 * direction, lane: the op's channel modulo the lanes the transport offers,
 * one per TCP connection of an interface's set, one for shared memory);
 * within a stream, messages are matched in that order, which also makes the
 * execution deadlock-free: the first unfinished slice in the order can
 * always run on both of its ranks. The
 * plan's in buffer is a private copy when the plan is out of place (plans
 * may write their inputs), so sendbuf is never written. */
WEFT_API weft_err weft_comm_run_plan(weft_comm *c, const weft_plan *p, const void *sendbuf,
                                     void *recvbuf, size_t count, weft_dtype dtype, weft_redop op,
                                     weft_diag *d);

/* The same in two steps, so that repeated runs pay for verification and
 * scheduling once: weft_comm_plan_new checks the rank count, verifies p and
 * computes this rank's schedule (not collective; p is borrowed and must
 * outlive the handle); weft_comm_plan_run is one collective run. */
typedef struct weft_comm_plan weft_comm_plan;
WEFT_API weft_err weft_comm_plan_new(weft_comm *c, const weft_plan *p, weft_comm_plan **out,
                                     weft_diag *d);
WEFT_API weft_err weft_comm_plan_run(weft_comm_plan *cp, const void *sendbuf, void *recvbuf,
                                     size_t count, weft_dtype dtype, weft_redop op, weft_diag *d);
/* Runs an alltoallv plan (one with a traffic matrix, weft/plan.h, which
 * fixes every block's bytes) with counts and displacements as
 * weft_alltoallv takes them: block d of this rank's input is sendcounts[d]
 * elements at sendbuf + sdispls[d] elements, block s of its output
 * recvcounts[s] at recvbuf + rdispls[s]; in place when sendbuf == recvbuf
 * (sendcounts and sdispls are then ignored). Chunk p of a block of b bytes
 * (C chunks per block) lies at the block's start + p*floor(b/C) + min(p,
 * b mod C). Collective. Before data moves the ranks compare their counts
 * (as weft_alltoallv does): counts a receiver does not expect, or counts
 * whose bytes (count x the dtype's size) are not the plan's matrix, are
 * WEFT_EINVAL on every rank with one message ("comm: the counts of
 * alltoallv differ from the traffic matrix of the plan: rank 1 sends rank 2
 * 5 elements of float (20 bytes), the matrix 16 bytes"). A plan with equal
 * chunks is WEFT_EINVAL here, and an alltoallv plan is WEFT_EINVAL for
 * weft_comm_plan_run and weft_comm_run_plan, which take one count. */
WEFT_API weft_err weft_comm_plan_run_v(weft_comm_plan *cp, const void *sendbuf,
                                       const size_t *sendcounts, const size_t *sdispls,
                                       void *recvbuf, const size_t *recvcounts,
                                       const size_t *rdispls, weft_dtype dtype, weft_diag *d);
/* NULL is allowed. */
WEFT_API void weft_comm_plan_free(weft_comm_plan *cp);

/* ---- Launching ranks on this host ------------------------------------------ */

typedef struct weft_launch_opts {
    uint32_t ranks;    /* 1 .. WEFT_MAX_RANKS */
    char *const *argv; /* the command: argv[0] is looked up in PATH; NULL-terminated */
    /* After the first rank fails, the others get SIGTERM and, grace_ms later,
     * SIGKILL. 0 means 2000. */
    uint32_t grace_ms;
    /* Restarts (weft launch --restart N): while fewer than this many
     * restarts were made in the job, a rank that fails (non-zero exit or a
     * signal) is started again in its place, with WEFT_RESTART set to how
     * many times that rank was restarted, and the other ranks go on (they
     * rejoin it with weft_ckpt_join, weft/ckpt.h). One line per restart on
     * stderr ("weft launch: rank 2 (pid 812) was killed by signal 9
     * (Killed); restart 1 of 3"). 0: none, a failure stops the job. */
    uint32_t restarts;
} weft_launch_opts;

typedef struct weft_launch_result {
    /* What the launcher should exit with: 0 when every rank exited 0, else
     * the first failing rank's exit code, or 128 + the signal that killed it. */
    int status;
    int failed_rank;    /* -1 when none failed */
    char message[256];  /* "rank 2 (pid 812) exited with status 3" or "" */
    uint32_t restarted; /* restarts made (opts restarts) */
} weft_launch_result;

/* Runs o->ranks copies of a command on this host, each with WEFT_RANK,
 * WEFT_SIZE, WEFT_ADDR (a rendezvous on 127.0.0.1, port chosen by the
 * kernel), WEFT_SECRET (drawn at random for this job) and, for rank 0,
 * WEFT_LISTEN_FD (the rendezvous socket, inherited) in the environment, so
 * weft_comm_init_env joins them without MPI and without guessing a port.
 * Each rank runs in its own process group and writes straight to the
 * launcher's stdout and stderr. When a rank fails (non-zero exit or a
 * signal) it is restarted while restarts are left (see restarts; the
 * launcher keeps the rendezvous socket open for a restarted rank 0), and
 * otherwise the others are stopped (see grace_ms). SIGINT and SIGTERM sent to
 * the launcher are passed on to every rank. Blocks until every rank has
 * ended; writes *res. Fails (WEFT_EINVAL, WEFT_EIO) only when the job cannot
 * be started; a failing rank is reported in *res, not as an error. */
WEFT_API weft_err weft_launch(const weft_launch_opts *o, weft_launch_result *res, weft_diag *d);

#ifdef __cplusplus
}
#endif
#endif
