/* Fabric options and loading. See fabric.h. */
#include "cli/fabric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/flagvals.h"
#include "weft/log.h"

const cli_optgroup cli_fabric_options = {
    "fabric options (NCCL topology XML only; an error with any other SPEC)",
    (const cli_opt[]){
        {"nvlink-bw", 0, "BW", "NVLink: per GPU to one NVSwitch, each way (or per <nvlink> link)"},
        {"nic-bw", 0, "BW", "each NIC to the network, each way"},
        {"cpu-bw", 0, "BW", "between two CPU sockets of a box, each way"},
        {"hosts", 0, "N", "copies of the box, 1 to 1000000 (default 1)"},
        {"net", 0, "rail|switch", "with --hosts 2 or more: a switch per NIC index or one switch"},
        {NULL, 0, NULL, NULL},
    },
    false,
};

/* The options above, in order: each applies only to NCCL XML imports. */
static const char *const nccl_only[] = {"nvlink-bw", "nic-bw", "cpu-bw", "hosts", "net"};

/* Reads --NAME as a bandwidth into *out when given. */
static int bw_option(const cli_args *a, const char *name, weft_rat *out)
{
    const char *v = cli_args_get(a, name);
    char flag[32];
    snprintf(flag, sizeof flag, "--%s", name);
    return v ? cli_flag_bandwidth(a->syn, flag, v, out) : CLI_EXIT_OK;
}

/* Fills opts from the options; a usage error's code, or CLI_EXIT_OK. */
static int read_options(const cli_args *a, weft_spec_opts *opts)
{
    int rc;
    if ((rc = bw_option(a, "nvlink-bw", &opts->nccl.nvlink_bw_gbps)) ||
        (rc = bw_option(a, "nic-bw", &opts->nccl.nic_bw_gbps)) ||
        (rc = bw_option(a, "cpu-bw", &opts->nccl.cpu_bw_gbps)))
        return rc;
    const char *hosts = cli_args_get(a, "hosts");
    if (hosts) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(hosts, &end, 10);
        if (hosts[0] < '0' || hosts[0] > '9' || *end || errno || n < 1 || n > WEFT_NCCL_MAX_HOSTS)
            return cli_usage_error(a->syn, "bad --hosts '%s': expected an integer from 1 to %u",
                                   hosts, WEFT_NCCL_MAX_HOSTS);
        opts->nccl.hosts = (uint32_t)n;
    }
    const char *net = cli_args_get(a, "net");
    if (net) {
        if (strcmp(net, "rail") != 0 && strcmp(net, "switch") != 0)
            return cli_usage_error(a->syn, "bad --net '%s': expected rail or switch", net);
        opts->nccl.network = net;
    }
    return CLI_EXIT_OK;
}

/* An option given with a SPEC it does not apply to is an error rather than
 * silently ignored, since the answer would not be the one the user asked
 * for. Checked once the SPEC has loaded, so that a SPEC that is nothing is
 * reported as such first. A usage error's code, or CLI_EXIT_OK. */
static int check_applies(const cli_args *a, const char *spec, weft_spec_kind kind,
                         const weft_spec_opts *opts)
{
    for (size_t i = 0; i < sizeof nccl_only / sizeof *nccl_only; i++) {
        if (kind != WEFT_SPEC_NCCL_XML && cli_args_has(a, nccl_only[i]))
            return cli_usage_error(a->syn,
                                   "--%s applies only to NCCL topology XML imports, and '%s' is "
                                   "%s (%s)",
                                   nccl_only[i], spec, weft_spec_kind_name(kind),
                                   kind == WEFT_SPEC_PRESET ? "whose parameters describe it: "
                                                              "weft topo list"
                                   : kind == WEFT_SPEC_HOST ? "whose keys describe it: "
                                                              "host:nic-bw=BW,hosts=N,..."
                                                            : "which describes every link itself");
    }
    if (cli_args_has(a, "net") && opts->nccl.hosts < 2)
        return cli_usage_error(a->syn, "--net says how the boxes of --hosts N are joined; it "
                                       "needs --hosts 2 or more");
    return CLI_EXIT_OK;
}

void cli_fabric_say_assumptions(const weft_topo *t)
{
    const char *s = weft_topo_assumptions(t);
    while (*s) {
        const char *nl = strchr(s, '\n');
        int n = nl ? (int)(nl - s) : (int)strlen(s);
        fprintf(stderr, "weft: assumed: %.*s\n", n, s);
        s += n + (nl != NULL);
    }
}

int cli_load_fabric(const cli_args *a, const char *spec, weft_topo **out)
{
    weft_spec_opts opts;
    weft_spec_opts_init(&opts);
    /* "-" is the usual name of standard input; the importers read it as
     * the file /dev/stdin (by content, since it has no extension). */
    const char *as_given = spec;
    if (strcmp(spec, "-") == 0)
        spec = "/dev/stdin";
    int rc = read_options(a, &opts);
    if (rc)
        return rc;
    weft_spec_kind kind = weft_spec_kind_of(spec);
    weft_diag d;
    weft_diag_clear(&d);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    weft_err e = weft_topo_from_spec(spec, &opts, out, &d);
    if (e)
        return cli_fail(e, &d);
    if ((rc = check_applies(a, as_given, kind, &opts))) {
        weft_topo_free(*out);
        *out = NULL;
        return rc;
    }
    cli_fabric_say_assumptions(*out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    weft_log(WEFT_LOG_INFO, "cli", "loaded %s: %u ranks, %u nodes, %u links in %.3f s", spec,
             weft_topo_num_ranks(*out), weft_topo_num_nodes(*out), weft_topo_num_links(*out),
             (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return CLI_EXIT_OK;
}
