/* The flags of the compressed and sparse schedules (weft plan, weft sim;
 * docs/compression.md): --compress C, --density D, --skew zipf:S,
 * --elem-bytes B, read into weft_sparse_args. */
#ifndef WEFT_CLI_SPARSE_FLAGS_H
#define WEFT_CLI_SPARSE_FLAGS_H

#include <stdbool.h>

#include "cli/args.h"
#include "weft/synth.h"

/* The option rows both commands list (help text included). */
#define CLI_SPARSE_OPTS                                                                            \
    {"compress", 0, "C",                                                                           \
     "quant-2shot, sparse-*: the compressor (int8, fp8[:B], qsgd:S, sign; topk:D, dgc:D,\n"        \
     "randk:D, hash:D; docs/compression.md)"},                                                     \
        {"density", 0, "D", "sparse-*: each rank's non-zeros, 0.01 or 1% (topk:D)"},               \
        {"skew", 0, "S", "sparse-*: non-zeros over the index space: none or zipf:S (S <= 8)"},     \
    {                                                                                              \
        "elem-bytes", 0, "B", "quant-2shot, sparse-*: bytes per dense element (default 2)"         \
    }

/* "none" (0) or "zipf:S" with S a decimal of at most 3 places in [0, 8],
 * as thousandths. False when malformed. */
bool cli_sparse_skew_parse(const char *s, uint32_t *milli);

/* True for the rows that build from weft_sparse_args. */
bool cli_sparse_algo(const char *algo);

/* Reads the flags into *out (defaults: weft_sparse_args_init; --compress
 * int8 for quant-2shot). Returns CLI_CONTINUE, or the usage error's exit
 * code after printing it, naming the flag ("bad --density '2': ..."); the
 * flags without a sparse --algo are a usage error too. */
int cli_sparse_flags(const cli_syntax *syn, const cli_args *a, const char *algo,
                     weft_sparse_args *out);

/* Builds a sparse row at dense size `bytes` (weft_sched_build with out's
 * args); the --max-ops message as cli_build_limited gives it. */
weft_err cli_build_sparse(const weft_topo *t, const char *algo, weft_coll coll, double bytes,
                          uint32_t max_ops, const weft_sparse_args *sa, weft_plan **out,
                          weft_diag *d);

#endif
