/* NCCL's tuner plugin interface, versions 2 to 6, restated for weft.
 *
 * Learnt from github:NVIDIA/nccl @5067397c2676d5aed50042fc39e5c8ee96eb0027
 * (master, 2026-06-11): src/include/plugin/nccl_tuner.h and
 * src/include/plugin/tuner/tuner_v{2,3,4,5,6}.h (the structs and the
 * algorithm/protocol numbers), src/include/nccl_common.h (the log levels,
 * subsystems and ncclFunc_t), plugins/tuner/example/nccl/err.h
 * (ncclResult_t), src/plugin/tuner.cc and src/plugin/tuner/tuner_v*.cc (how
 * NCCL loads a plugin), src/enqueue.cc (ncclGetAlgoInfo: how the cost table
 * is filled and read) and src/init.cc (when init is called). These are
 * weft's own declarations of that binary interface; no NCCL text is copied.
 *
 * Loading. With NCCL_TUNER_PLUGIN=PATH NCCL dlopens PATH (a bare name is
 * tried as libnccl-tuner-NAME.so) and looks up, newest first, the data
 * symbols "ncclTunerPlugin_v6", "_v5", "_v4", "_v3", "_v2": the first one
 * found is a struct of the matching layout below, and its `name` is
 * logged. One plugin serves every communicator of the process; each
 * communicator calls init once (after its channels are connected) and
 * gets its own context, then getCollInfo per collective, then the
 * finalize (v5, v6) or destroy (v2 to v4) function on the context.
 *
 * Errors. NCCL checks init's result like any call of its own: an init that
 * does not return NCCL_SUCCESS fails the communicator's creation with that
 * result (NCCL does NOT fall back to its own tuning then), and so does a
 * failing getCollInfo for the collective. The tuner headers' remark that
 * NCCL "falls back to the default tuning" holds for outputs left unset,
 * not for errors.
 *
 * The cost table (v3 and later). `float **collCostTable` is not an array of
 * row pointers: it is the address of a contiguous float[numAlgo][numProto]
 * that NCCL keeps on its stack, indexed [algorithm][protocol] with the
 * numbers below (numAlgo = 7, numProto = 3 in @5067397c). NCCL sets every
 * entry to NCCL_ALGO_PROTO_IGNORE (-1.0), then writes its own estimate in
 * microseconds for each pair this communicator and collective can run
 * (an estimate of -1 where its bandwidth is 0, i.e. the pair cannot run).
 * After the plugin returns, NCCL runs the pair of least cost among the
 * entries that are >= 0 (ties to the lower algorithm, then protocol), so a
 * plugin prefers a pair by lowering its cost and must not give a cost to
 * an entry NCCL left at -1 (NCCL could not run it). *nChannels (0 on
 * entry) caps the channels the collective uses when the plugin sets it
 * above 0; NCCL clamps it to the communicator's channels.
 *
 * Version 2 has no table: getCollInfo returns an algorithm and protocol
 * (or leaves them NCCL_ALGO_UNDEF / NCCL_PROTO_UNDEF) and NCCL sets that
 * entry of its table to 0 when it is not -1.
 */
#ifndef WEFT_TUNER_NCCL_TUNER_ABI_H
#define WEFT_TUNER_NCCL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ncclResult_t: plugins/tuner/example/nccl/err.h. */
typedef enum {
    NCCL_SUCCESS = 0,
    NCCL_UNHANDLED_CUDA_ERROR = 1,
    NCCL_SYSTEM_ERROR = 2,
    NCCL_INTERNAL_ERROR = 3,
    NCCL_INVALID_ARGUMENT = 4,
    NCCL_INVALID_USAGE = 5,
    NCCL_REMOTE_ERROR = 6,
} nccl_result;

/* ncclDebugLogLevel and the NCCL_TUNING subsystem bit of
 * ncclDebugLogSubSys (src/include/nccl_common.h). */
typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5,
} nccl_log_level;
#define NCCL_SUBSYS_INIT 0x1ul
#define NCCL_SUBSYS_TUNING 0x40ul

/* ncclDebugLogger_t: printf-style, with the caller's file and line. */
typedef void (*nccl_logger)(nccl_log_level level, unsigned long flags, const char *file, int line,
                            const char *fmt, ...);

/* ncclFunc_t (an int-sized enum): the collectives NCCL tunes are 0..4;
 * later values (send/recv, all-to-all, gather, scatter, ...) are not
 * tuned through the table. */
typedef enum {
    NCCL_FUNC_BROADCAST = 0,
    NCCL_FUNC_REDUCE = 1,
    NCCL_FUNC_ALLGATHER = 2,
    NCCL_FUNC_REDUCESCATTER = 3,
    NCCL_FUNC_ALLREDUCE = 4,
    NCCL_FUNC_SENDRECV = 5,
} nccl_func;

/* Rows of the cost table (src/include/plugin/nccl_tuner.h). */
#define NCCL_ALGO_UNDEF (-1)
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6
#define NCCL_NUM_ALGORITHMS 7
/* Columns. */
#define NCCL_PROTO_UNDEF (-1)
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2
#define NCCL_NUM_PROTOCOLS 3
/* A table entry NCCL will not run. */
#define NCCL_ALGO_PROTO_IGNORE (-1.0f)

/* v5/v6 init's extra arguments. The plugin reads neither: the constants
 * are NCCL's own tuning tables, in and out, left as NCCL set them. Their
 * layout is given so that the pointers' types are right, not used. */
typedef struct {
    int nNvlDomains;
    int minRanksPerNvlDomain;
    int maxRanksPerNvlDomain;
} nccl_nvl_domain_info;
typedef struct nccl_tuner_constants nccl_tuner_constants; /* opaque here */

/* Version 2 (first in NCCL 2.21; v1, in 2.19 and 2.20, had no context
 * and is not offered). */
typedef struct {
    const char *name;
    nccl_result (*init)(size_t nRanks, size_t nNodes, nccl_logger log, void **context);
    nccl_result (*getCollInfo)(void *context, nccl_func collType, size_t nBytes, int collNetSupport,
                               int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
                               int *nChannels);
    nccl_result (*destroy)(void *context);
} nccl_tuner_v2;

/* Version 3 (first in NCCL 2.22): the cost table. */
typedef struct {
    const char *name;
    nccl_result (*init)(size_t nRanks, size_t nNodes, nccl_logger log, void **context);
    nccl_result (*getCollInfo)(void *context, nccl_func collType, size_t nBytes, int numPipeOps,
                               float **collCostTable, int numAlgo, int numProto, int *nChannels);
    nccl_result (*destroy)(void *context);
} nccl_tuner_v3;

/* Version 4 (first in NCCL 2.24): regBuff, whether the user buffers are
 * registered. */
typedef struct {
    const char *name;
    nccl_result (*init)(size_t nRanks, size_t nNodes, nccl_logger log, void **context);
    nccl_result (*getCollInfo)(void *context, nccl_func collType, size_t nBytes, int numPipeOps,
                               float **collCostTable, int numAlgo, int numProto, int regBuff,
                               int *nChannels);
    nccl_result (*destroy)(void *context);
} nccl_tuner_v4;

/* Version 5 (first in NCCL 2.28): init takes the context first, the communicator's id, its
 * NVLink domains and NCCL's tuning constants; destroy is called finalize. */
typedef struct {
    const char *name;
    nccl_result (*init)(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
                        nccl_logger log, nccl_nvl_domain_info *nvlDomainInfo,
                        nccl_tuner_constants *constants);
    nccl_result (*getCollInfo)(void *context, nccl_func collType, size_t nBytes, int numPipeOps,
                               float **collCostTable, int numAlgo, int numProto, int regBuff,
                               int *nChannels);
    nccl_result (*finalize)(void *context);
} nccl_tuner_v5;

/* Version 6 (first in NCCL 2.30, master): v5 and an optional chunk-size hook (NULL: NCCL's
 * own chunk size). */
typedef struct {
    const char *name;
    nccl_result (*init)(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
                        nccl_logger log, nccl_nvl_domain_info *nvlDomainInfo,
                        nccl_tuner_constants *constants);
    nccl_result (*getCollInfo)(void *context, nccl_func collType, size_t nBytes, int numPipeOps,
                               float **collCostTable, int numAlgo, int numProto, int regBuff,
                               int *nChannels);
    nccl_result (*finalize)(void *context);
    nccl_result (*getChunkSize)(void *context, nccl_func collType, size_t nBytes, int algo,
                                int proto, int nChannels, size_t *chunkSize);
} nccl_tuner_v6;

/* The symbol names, newest first, as NCCL tries them. */
#define NCCL_TUNER_SYMBOL_V6 "ncclTunerPlugin_v6"
#define NCCL_TUNER_SYMBOL_V5 "ncclTunerPlugin_v5"
#define NCCL_TUNER_SYMBOL_V4 "ncclTunerPlugin_v4"
#define NCCL_TUNER_SYMBOL_V3 "ncclTunerPlugin_v3"
#define NCCL_TUNER_SYMBOL_V2 "ncclTunerPlugin_v2"

#endif
