/* --nccl-algo, --nccl-proto, --nccl-buffsize. See nccl_force.h. */
#include "cli/nccl_force.h"

#include <ctype.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sizes.h"
#include "weft/protocol.h"
#include "weft/synth.h"

/* a and b equal ignoring case and '_'. */
static bool same_name(const char *a, const char *b)
{
    for (;;) {
        while (*a == '_')
            a++;
        while (*b == '_')
            b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        if (!*a)
            return true;
        a++;
        b++;
    }
}

int cli_nccl_force_flags(const cli_syntax *syn, const cli_args *a, const char *algo,
                         cli_nccl_force *out)
{
    out->algo = out->proto = -1;
    out->buffsize = 0;
    const char *na = cli_args_get(a, "nccl-algo"), *np = cli_args_get(a, "nccl-proto"),
               *nb = cli_args_get(a, "nccl-buffsize");
    if (!na && !np && !nb)
        return CLI_CONTINUE;
    const char *flag = na ? "--nccl-algo" : np ? "--nccl-proto" : "--nccl-buffsize";
    if (!algo || strcmp(algo, "nccl") != 0)
        return cli_usage_error(syn, "%s forces NCCL's choice: it needs --algo nccl", flag);
    if (na) {
        for (int k = 0; k < WEFT__NCCL_ALGO_COUNT && out->algo < 0; k++)
            if (same_name(na, weft_nccl_algo_name((weft_nccl_algo)k)))
                out->algo = k;
        if (out->algo == WEFT_NCCL_P2P)
            return cli_usage_error(syn,
                                   "--nccl-algo '%s': NCCL runs all-to-all as p2p sends, which it "
                                   "does not tune; there is nothing to force",
                                   na);
        if (out->algo < 0)
            return cli_usage_error(syn,
                                   "unknown --nccl-algo '%s' (weft models ring, tree, nvls, "
                                   "nvls_tree, collnet_direct, collnet_chain and pat)",
                                   na);
    }
    if (np) {
        weft_proto p;
        if (!weft_proto_parse(np, &p))
            return cli_usage_error(syn, "unknown --nccl-proto '%s' (expected LL, LL128 or Simple)",
                                   np);
        if (cli_args_has(a, "proto"))
            return cli_usage_error(syn, "--proto and --nccl-proto both set the protocol; give "
                                        "one (--nccl-proto also makes NCCL choose its algorithm "
                                        "for it)");
        out->proto = (int)p;
    }
    if (nb) {
        if (cli_flag_size(syn, "--nccl-buffsize", nb, UINT64_MAX, &out->buffsize))
            return CLI_EXIT_USAGE;
        if (out->buffsize < WEFT_NCCL_STEPS)
            return cli_usage_error(syn,
                                   "bad --nccl-buffsize '%s': NCCL's buffer holds %u steps, so at "
                                   "least %u bytes",
                                   nb, WEFT_NCCL_STEPS, WEFT_NCCL_STEPS);
    }
    return CLI_CONTINUE;
}

bool cli_nccl_forced(const cli_nccl_force *f)
{
    return f->algo >= 0 || f->proto >= 0 || f->buffsize > 0;
}

weft_err cli_nccl_force_apply(const cli_nccl_force *f, weft_candidate *c, weft_diag *d)
{
    return weft_candidate_force(c, f->algo, f->proto, f->buffsize, d);
}
