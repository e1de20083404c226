/* The flags of the compressed and sparse schedules; see sparse_flags.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/sparse_flags.h"

bool cli_sparse_algo(const char *algo)
{
    return algo && (strcmp(algo, "sparse-ag") == 0 || strcmp(algo, "quant-2shot") == 0 ||
                    strcmp(algo, "sparse-hash") == 0 || strcmp(algo, "sparse-range") == 0 ||
                    strcmp(algo, "hier-quant") == 0);
}

bool cli_sparse_skew_parse(const char *s, uint32_t *milli)
{
    if (strcmp(s, "none") == 0) {
        *milli = 0;
        return true;
    }
    if (strncmp(s, "zipf:", 5) != 0)
        return false;
    s += 5;
    uint32_t whole = 0, frac = 0, places = 0;
    bool point = false, digits = false;
    for (; *s; s++) {
        if (*s == '.' && !point) {
            point = true;
            continue;
        }
        if (*s < '0' || *s > '9' || whole > 8 || places >= 3)
            return false;
        digits = true;
        if (point)
            frac = frac * 10 + (uint32_t)(*s - '0'), places++;
        else
            whole = whole * 10 + (uint32_t)(*s - '0');
    }
    for (; places < 3; places++)
        frac *= 10;
    *milli = whole * 1000 + frac;
    return digits && *milli <= 8000;
}

int cli_sparse_flags(const cli_syntax *syn, const cli_args *a, const char *algo,
                     weft_sparse_args *out)
{
    const char *comp = cli_args_get(a, "compress"), *dens = cli_args_get(a, "density"),
               *skew = cli_args_get(a, "skew"), *eb = cli_args_get(a, "elem-bytes");
    weft_sparse_args_init(out);
    if (!cli_sparse_algo(algo)) {
        if (comp || dens || skew || eb)
            return cli_usage_error(syn, "--compress, --density, --skew and --elem-bytes need "
                                        "--algo quant-2shot, hier-quant, sparse-ag, "
                                        "sparse-hash or sparse-range");
        return CLI_CONTINUE;
    }
    weft_diag d = {0};
    if (strcmp(algo, "quant-2shot") == 0 || strcmp(algo, "hier-quant") == 0)
        out->comp.kind = WEFT_COMP_INT8, out->comp.density_ppm = 0;
    if (comp && weft_compressor_parse(comp, &out->comp, &d))
        return cli_usage_error(syn, "bad --compress: %s", d.msg);
    if (dens && comp)
        return cli_usage_error(syn, "--density and --compress both say what is sent: give "
                                    "--compress topk:D, or --density D alone");
    if (dens && (strcmp(algo, "quant-2shot") == 0 || strcmp(algo, "hier-quant") == 0))
        return cli_usage_error(syn,
                               "--density is for the sparse rows; %s quantizes (give "
                               "--compress int8, fp8[:B], qsgd:S or sign)",
                               algo);
    if (dens && weft_density_parse(dens, &out->comp.density_ppm, &d))
        return cli_usage_error(syn, "bad --density: %s", d.msg);
    if (skew && !cli_sparse_skew_parse(skew, &out->zipf_milli))
        return cli_usage_error(syn,
                               "bad --skew '%s' (expected none or zipf:S, 0 <= S <= 8, at "
                               "most 3 decimal places)",
                               skew);
    if (eb) {
        char *end;
        unsigned long v = strtoul(eb, &end, 10);
        if (*eb < '1' || *eb > '9' || *end || v > 16)
            return cli_usage_error(syn, "bad --elem-bytes '%s' (expected 1 .. 16)", eb);
        out->elem_bytes = (uint32_t)v;
    }
    return CLI_CONTINUE;
}

weft_err cli_build_sparse(const weft_topo *t, const char *algo, weft_coll coll, double bytes,
                          uint32_t max_ops, const weft_sparse_args *sa, weft_plan **out,
                          weft_diag *d)
{
    weft_sched_args a;
    weft_sched_args_init(&a, coll);
    a.max_ops = max_ops;
    a.bytes = bytes;
    a.sparse = sa;
    weft_err e = weft_sched_build(t, algo, &a, out, d);
    if (e == WEFT_ELIMIT && max_ops)
        weft_diag_set(d, e, "%s %s on %u ranks has more than %u ops (the limit, --max-ops)", algo,
                      weft_coll_name(coll), weft_topo_num_ranks(t), max_ops);
    return e;
}
