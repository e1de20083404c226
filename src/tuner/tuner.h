/* weft's NCCL tuner plugin (libweft_nccl_tuner.so, docs/tuner.md).
 *
 * NCCL asks a tuner plugin, per collective, for the cost of each algorithm
 * and protocol (src/tuner/nccl_tuner_abi.h). This one answers from weft's
 * model of NCCL on the fabric named by WEFT_FABRIC: weft_nccl_fabric_get
 * (channels, their rate, the GPU generation, the switches that reduce)
 * and weft_nccl_cost_of (the latency and algorithm bandwidth of every
 * algorithm NCCL has -- ring, tree, CollNet direct and chain, NVLS, NVLS
 * tree, PAT -- with each protocol it runs), the analytic model weft_nccl_choose ranks
 * (weft/synth.h, "NCCL's choice"). The simulator is not used: it is seconds per size on a 256-GPU
 * fabric, where NCCL's launch path needs microseconds, and its times would not rank the pairs the
 * way weft_nccl_choose does.
 *
 * Files, lowest first (a file calls only files before it):
 *   fabric.c  WEFT_FABRIC and the communicator's nRanks/nNodes -> the
 *             sub-fabric the communicator spans -> weft_nccl_fabric;
 *   cache.c   the cost of each pair per collective and size class,
 *             computed once per class;
 *   plugin.c  the ncclTunerPlugin_v2 .. _v6 symbols, the only exported
 *             names of the library, and the logging through NCCL's logger.
 * Nothing here reads the environment except plugin.c (WEFT_FABRIC, once per
 * communicator, in init).
 */
#ifndef WEFT_TUNER_TUNER_H
#define WEFT_TUNER_TUNER_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/synth.h"

/* ---- fabric.c ------------------------------------------------------------ */

/* The part of the fabric `spec` (any weft fabric spec: a preset, a .topo
 * file, an NCCL XML, an ASTRA-sim config) that a communicator of `ranks`
 * ranks on `nodes` nodes spans, as NCCL's model sees it: the first `nodes`
 * hosts in the order of their first rank, and the first ranks / nodes ranks
 * of each (ranks without a host= count as a host each, as
 * weft_nccl_fabric_get counts them). Every other node of those hosts, and
 * every node outside all hosts (network switches), is kept; the other
 * hosts' nodes are dropped. Errors, with d giving the numbers (the caller
 * names the spec):
 * WEFT_EINVAL when nodes is 0, ranks < 2, or ranks is no multiple of nodes;
 * WEFT_ETOPO when the fabric has fewer hosts than nodes or a chosen host
 * fewer ranks than ranks / nodes; the loader's error for a spec that does
 * not load; WEFT_ENOMEM. */
weft_err tuner_fabric_map(const char *spec, uint64_t ranks, uint64_t nodes, weft_nccl_fabric *out,
                          weft_diag *d);

/* ---- cache.c ------------------------------------------------------------- */

/* NCCL's tuned collectives (ncclFunc_t 0..4) and the size classes: class k
 * holds sizes [2^k, 2^(k+1)) bytes (class 0 also holds 0). */
#define TUNER_FUNCS 5
#define TUNER_CLASSES 64
/* NCCL's algorithms (NCCL_NUM_ALGORITHMS of the v3+ table): tree, ring,
 * collnet direct, collnet chain, nvls, nvls tree, pat. */
#define TUNER_ALGOS 7

/* One algorithm and protocol over one size class: the cost in us of size s
 * is lat_us (lat_hi_us from size `step` on) times the operations whose
 * latency counts, plus s / bytes_per_us. weft's model has one size-
 * dependent latency, the ring's plateau (x 1.4 for Simple allreduce across
 * hosts from 64 B per channel and rank on), found exactly by bisection
 * when it falls inside the class; its bandwidth does not depend on size. */
typedef struct tuner_entry {
    bool on; /* weft's model runs this pair */
    double lat_us, lat_hi_us;
    uint64_t step;       /* UINT64_MAX: lat_us over the whole class */
    double bytes_per_us; /* 1e3 x the algorithm bandwidth in GB/s */
} tuner_entry;

typedef struct tuner_class {
    bool filled;
    tuner_entry e[TUNER_ALGOS][3]; /* [NCCL algorithm][NCCL protocol] */
} tuner_class;

/* Every class of every collective of one communicator (about 260 KiB),
 * filled on first use. Not thread safe: NCCL calls a communicator's
 * getCollInfo from one thread at a time (its communicators are not
 * thread safe). */
typedef struct tuner_model {
    weft_nccl_fabric f;
    tuner_class c[TUNER_FUNCS][TUNER_CLASSES];
} tuner_model;

/* Sets m up for fabric f, every class unfilled. */
void tuner_model_init(tuner_model *m, const weft_nccl_fabric *f);

/* The size class of `bytes`. */
uint32_t tuner_class_of(uint64_t bytes);

/* The class of `bytes` for NCCL function `func` (0..4), filled if it was
 * not; NULL for any other function. */
const tuner_class *tuner_model_class(tuner_model *m, int func, uint64_t bytes);

/* The cost in us of entry e (NCCL's algorithm index a) at `bytes` for a
 * group of pipe_ops operations: the ring pays its latency per operation
 * (NCCL's latCount); the others once (NCCL batches up to
 * NCCL_MAX_DEV_WORK_BATCH_COLLS such operations per latency). */
double tuner_entry_cost(const tuner_entry *e, int a, uint64_t bytes, int pipe_ops);

/* Writes the cost of every pair weft models into NCCL's table (numAlgo x
 * numProto floats, row per algorithm) where NCCL left an entry it can run
 * (>= 0); every other entry is left as found. Returns false, table
 * untouched, for a function NCCL does not tune through the table. */
bool tuner_model_fill(tuner_model *m, int func, uint64_t bytes, int pipe_ops, float *table,
                      int num_algo, int num_proto);

/* The pair of least cost among the tree, the ring, CollNet when collnet
 * and NVLS when nvls (what the v2 interface says the communicator can
 * run; never PAT, which v2's NCCL versions do not have), in NCCL's order
 * (its algorithm index, then LL, LL128, Simple; the first of equal costs),
 * as NCCL algorithm and protocol numbers. False for a function weft does
 * not model. */
bool tuner_model_choose(tuner_model *m, int func, uint64_t bytes, int pipe_ops, bool collnet,
                        bool nvls, int *algo, int *proto);

#endif
