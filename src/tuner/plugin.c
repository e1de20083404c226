/* The plugin's symbols: ncclTunerPlugin_v2 .. _v6 (src/tuner/nccl_tuner_abi.h
 * says what NCCL does with each), all backed by one context per
 * communicator.
 *
 * init reads WEFT_FABRIC (the only place weft reads the environment for
 * the tuner), maps the communicator onto it (tuner_fabric_map) and keeps
 * weft's NCCL model of that sub-fabric; a missing or unusable fabric is
 * refused with a WARN line through NCCL's logger and an error, which fails
 * the communicator's creation (NCCL does not fall back on an init error).
 * A communicator of one rank has nothing to tune: its context stays idle.
 * getCollInfo never fails for a collective weft does not model: it leaves
 * the table and *nChannels as found. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "tuner/nccl_tuner_abi.h"
#include "tuner/tuner.h"

#define EXPORT __attribute__((visibility("default")))
#define NAME "weft"

typedef struct tuner_ctx {
    bool idle; /* one rank: the table is left alone */
    tuner_model m;
} tuner_ctx;

/* One line through NCCL's logger ("TUNER/weft: ..."); WARN lines go to
 * stderr when there is no logger, so that a refusal is never silent. */
__attribute__((format(printf, 4, 5))) static void say(nccl_logger log, nccl_log_level level,
                                                      int line, const char *fmt, ...)
{
    char buf[WEFT_DIAG_MSG_SIZE + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (log)
        log(level, NCCL_SUBSYS_INIT | NCCL_SUBSYS_TUNING, __FILE__, line, "TUNER/" NAME ": %s",
            buf);
    else if (level == NCCL_LOG_WARN)
        fprintf(stderr, "TUNER/" NAME ": %s\n", buf);
}

static nccl_result ctx_new(size_t ranks, size_t nodes, nccl_logger log, int version, void **out)
{
    if (!out)
        return NCCL_INVALID_ARGUMENT;
    const char *spec = getenv("WEFT_FABRIC");
    if (!spec || !*spec) {
        say(log, NCCL_LOG_WARN, __LINE__,
            "WEFT_FABRIC is not set: set it to the fabric the job runs on (a weft fabric spec "
            "such as h100:2, or a .topo file; docs/tuner.md), or unset NCCL_TUNER_PLUGIN");
        return NCCL_INVALID_USAGE;
    }
    tuner_ctx *c = weft__calloc(1, sizeof *c);
    if (!c) {
        say(log, NCCL_LOG_WARN, __LINE__, "out of memory");
        return NCCL_SYSTEM_ERROR;
    }
    if (ranks < 2) {
        c->idle = true;
        say(log, NCCL_LOG_INFO, __LINE__, "one rank: nothing to tune (tuner ABI v%d)", version);
        *out = c;
        return NCCL_SUCCESS;
    }
    weft_nccl_fabric f;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = tuner_fabric_map(spec, ranks, nodes, &f, &d);
    if (e) {
        weft__free(c);
        say(log, NCCL_LOG_WARN, __LINE__, "WEFT_FABRIC=%s: %s", spec, d.msg);
        return e == WEFT_ENOMEM ? NCCL_SYSTEM_ERROR : NCCL_INVALID_USAGE;
    }
    tuner_model_init(&c->m, &f);
    say(log, NCCL_LOG_INFO, __LINE__,
        "WEFT_FABRIC=%s, %zu ranks on %zu nodes: %u channels of %g GB/s (%s, %s%s%s); "
        "costs from weft's NCCL model (tuner ABI v%d)",
        spec, ranks, nodes, f.channels, f.channel_gbps, weft_gpu_arch_name(f.arch),
        f.nvlink ? "NVLink" : "PCIe", f.nvls ? ", NVLS" : "", f.collnet ? ", SHARP" : "", version);
    *out = c;
    return NCCL_SUCCESS;
}

static nccl_result ctx_free(void *context)
{
    weft__free(context);
    return NCCL_SUCCESS;
}

/* v3 to v6: weft's costs into NCCL's table. */
static nccl_result coll_info(void *context, nccl_func func, size_t bytes, int pipe_ops,
                             float **table, int num_algo, int num_proto, int *channels)
{
    tuner_ctx *c = context;
    if (!c || !table || !channels)
        return NCCL_INVALID_ARGUMENT;
    if (c->idle)
        return NCCL_SUCCESS;
    if (tuner_model_fill(&c->m, (int)func, bytes, pipe_ops, (float *)(void *)table, num_algo,
                         num_proto))
        *channels = (int)c->m.f.channels;
    return NCCL_SUCCESS;
}

static nccl_result init_v2(size_t ranks, size_t nodes, nccl_logger log, void **context)
{
    return ctx_new(ranks, nodes, log, 2, context);
}

static nccl_result init_v3(size_t ranks, size_t nodes, nccl_logger log, void **context)
{
    return ctx_new(ranks, nodes, log, 3, context);
}

static nccl_result init_v4(size_t ranks, size_t nodes, nccl_logger log, void **context)
{
    return ctx_new(ranks, nodes, log, 4, context);
}

static nccl_result init_v5(void **context, uint64_t comm_id, size_t ranks, size_t nodes,
                           nccl_logger log, nccl_nvl_domain_info *nvl,
                           nccl_tuner_constants *constants)
{
    return ctx_new(ranks, nodes, log, 5, context);
}

static nccl_result init_v6(void **context, uint64_t comm_id, size_t ranks, size_t nodes,
                           nccl_logger log, nccl_nvl_domain_info *nvl,
                           nccl_tuner_constants *constants)
{
    return ctx_new(ranks, nodes, log, 6, context);
}

/* v2: weft's choice itself (NCCL then zeroes that entry of its table). */
static nccl_result coll_info_v2(void *context, nccl_func func, size_t bytes, int collnet, int nvls,
                                int pipe_ops, int *algo, int *proto, int *channels)
{
    tuner_ctx *c = context;
    if (!c || !algo || !proto || !channels)
        return NCCL_INVALID_ARGUMENT;
    if (c->idle)
        return NCCL_SUCCESS;
    int a, p;
    if (tuner_model_choose(&c->m, (int)func, bytes, pipe_ops, collnet != 0, nvls != 0, &a, &p)) {
        *algo = a;
        *proto = p;
        *channels = (int)c->m.f.channels;
    }
    return NCCL_SUCCESS;
}

static nccl_result coll_info_v3(void *context, nccl_func func, size_t bytes, int pipe_ops,
                                float **table, int num_algo, int num_proto, int *channels)
{
    return coll_info(context, func, bytes, pipe_ops, table, num_algo, num_proto, channels);
}

static nccl_result coll_info_v4(void *context, nccl_func func, size_t bytes, int pipe_ops,
                                float **table, int num_algo, int num_proto, int reg_buff,
                                int *channels)
{
    return coll_info(context, func, bytes, pipe_ops, table, num_algo, num_proto, channels);
}

/* The exported structs: NCCL reads them only; not const so that no NCCL
 * version can fault writing one. */
EXPORT nccl_tuner_v6 ncclTunerPlugin_v6 = {
    .name = NAME,
    .init = init_v6,
    .getCollInfo = coll_info_v4,
    .finalize = ctx_free,
    .getChunkSize = NULL,
};
EXPORT nccl_tuner_v5 ncclTunerPlugin_v5 = {
    .name = NAME,
    .init = init_v5,
    .getCollInfo = coll_info_v4,
    .finalize = ctx_free,
};
EXPORT nccl_tuner_v4 ncclTunerPlugin_v4 = {
    .name = NAME,
    .init = init_v4,
    .getCollInfo = coll_info_v4,
    .destroy = ctx_free,
};
EXPORT nccl_tuner_v3 ncclTunerPlugin_v3 = {
    .name = NAME,
    .init = init_v3,
    .getCollInfo = coll_info_v3,
    .destroy = ctx_free,
};
EXPORT nccl_tuner_v2 ncclTunerPlugin_v2 = {
    .name = NAME,
    .init = init_v2,
    .getCollInfo = coll_info_v2,
    .destroy = ctx_free,
};
