/* The flags that force NCCL's choice for `weft sim --algo nccl`, as
 * nccl-tests users force it with NCCL's environment: --nccl-algo A
 * (NCCL_ALGO), --nccl-proto P (NCCL_PROTO), --nccl-buffsize B
 * (NCCL_BUFFSIZE); docs/sim.md, "Forcing NCCL's choice". */
#ifndef WEFT_CLI_NCCL_FORCE_H
#define WEFT_CLI_NCCL_FORCE_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/args.h"
#include "weft/choose.h"

/* The option rows (help text included). */
#define CLI_NCCL_FORCE_OPTS                                                                        \
    {"nccl-algo", 0, "A",                                                                          \
     "with --algo nccl: the algorithm NCCL runs at every size (NCCL_ALGO):\n"                      \
     "ring, tree, nvls, nvls_tree, collnet_direct, collnet_chain or pat"},                         \
        {"nccl-proto", 0, "P",                                                                     \
         "with --algo nccl: the protocol NCCL runs (NCCL_PROTO): LL, LL128 or\n"                   \
         "Simple; NCCL's algorithm is the fastest with it"},                                       \
    {                                                                                              \
        "nccl-buffsize", 0, "B",                                                                   \
            "with --algo nccl: NCCL_BUFFSIZE (default 4M); NCCL's tree moves steps\n"              \
            "of B / 8 bytes"                                                                       \
    }

/* What the flags force: -1 and 0 when not given. */
typedef struct cli_nccl_force {
    int algo;  /* weft_nccl_algo */
    int proto; /* weft_proto */
    uint64_t buffsize;
} cli_nccl_force;

/* Reads the flags into *out. An algorithm is weft's name or NCCL's, in
 * any case and with or without '_' (Ring, NVLSTree, CollnetChain); p2p
 * and names weft does not model are refused by name. Returns
 * CLI_CONTINUE, or the usage error's exit code after printing it: a bad
 * value, the flags without --algo nccl, or --nccl-proto with --proto. */
int cli_nccl_force_flags(const cli_syntax *syn, const cli_args *a, const char *algo,
                         cli_nccl_force *out);

/* Whether any flag forces something. */
bool cli_nccl_forced(const cli_nccl_force *f);

/* Applies *f to the nccl candidate c (weft_candidate_force). */
weft_err cli_nccl_force_apply(const cli_nccl_force *f, weft_candidate *c, weft_diag *d);

#endif
