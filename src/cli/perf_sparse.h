/* weft perf allreduce --density D [--skew zipf:S] and --compress C: the
 * sparse and compressed all-reduces of weft/comm_sparse.h measured beside
 * the dense weft_allreduce of the same tensor, in the same run
 * (perf_sparse.c; docs/compression.md, "Measured on the runtime"). */
#ifndef WEFT_CLI_PERF_SPARSE_H
#define WEFT_CLI_PERF_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/args.h"
#include "weft/comm.h"
#include "weft/compress.h"

/* The option rows weft perf lists. */
#define CLI_PERF_SPARSE_OPTS                                                                       \
    {"density", 0, "D",                                                                            \
     "allreduce: also run weft_allreduce_sparse with D of the elements non-zero (0.01 or 1%)"},    \
        {"skew", 0, "S", "with --density: non-zeros over the index space, none or zipf:S"},        \
    {                                                                                              \
        "compress", 0, "C",                                                                        \
            "allreduce: also run the compressed all-reduce: int8[:B] (weft_allreduce_int8) or "    \
            "topk:D\n(top-k with error feedback, then weft_allreduce_sparse)"                      \
    }

typedef struct cli_perf_sparse {
    bool on;      /* any of the three flags */
    uint32_t ppm; /* --density, or topk's */
    uint32_t zipf_milli;
    weft_compressor comp; /* kind NONE: --density */
} cli_perf_sparse;

/* Reads --density, --skew and --compress into *out (out->on false when
 * none is given). They need COLL allreduce, -d float and -o sum, and go
 * without --plan, --traffic, --json and --plot: usage errors naming the
 * flag otherwise. Without -b and -e the sizes become 1M .. 16M (*minb,
 * *maxb). Returns CLI_CONTINUE or the usage error's exit code. */
int cli_perf_sparse_flags(const cli_syntax *syn, const cli_args *a, const char *coll, size_t *minb,
                          size_t *maxb, cli_perf_sparse *out);

/* The measurement, on every rank (rank 0 prints): for each size from minb
 * to maxb (times factor), the dense all-reduce and the sparse or
 * compressed one, iters timed calls each after warmup; exit 0, or 1 when a
 * result is wrong (or beyond the int8 bound) or a call fails. */
int cli_perf_sparse_run(weft_comm *c, const cli_perf_sparse *o, size_t minb, size_t maxb,
                        long factor, long iters, long warmup, bool check);

#endif
