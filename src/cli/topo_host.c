/* weft topo host [--xml FILE] [--ranks UNIT] [--rank-bw BW] [--numa-bw BW]
 * [--nic-bw BW] [--hosts N] [--net rail|switch] [-o FILE]: this machine
 * (from hwloc) plus a network, printed in .topo format. weft/host.h builds
 * it; this file reads flags into weft_host_opts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/flagvals.h"
#include "cli/outfile.h"
#include "cli/topo.h"
#include "weft/host.h"

static const cli_opt host_opts[] = {
    {"xml", 0, "FILE", "read this hwloc XML export instead of this machine"},
    {"ranks", 0, "UNIT", "what a rank is: core (default), numa, package or pu"},
    {"rank-bw", 0, "BW", "each rank to its NUMA node's memory, each way (default 10GB/s)"},
    {"numa-bw", 0, "BW", "between two NUMA nodes of a box, each way (default 20GB/s)"},
    {"nic-bw", 0, "BW", "each NIC to the network, each way (default: its PCIe link speed)"},
    {"hosts", 0, "N", "copies of this box joined by the network (default 1)"},
    {"net", 0, "rail|switch", "a switch per NIC index (default) or one switch"},
    {"output", 'o', "FILE", "write the fabric here (default: standard output)"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup host_group = {"options", host_opts, false};

static const cli_syntax host_syntax = {
    .path = "weft topo host",
    .args = "[--xml FILE] [--ranks UNIT] [--nic-bw BW --hosts N --net rail|switch] [-o FILE]",
    .about = "Prints this machine as a fabric in .topo format, read with hwloc: one rank per\n"
             "core (or NUMA node, package, hardware thread), joined to the memory of its\n"
             "NUMA node; with --hosts N, N copies of the box joined through their NICs by\n"
             "the network described by --net and --nic-bw. Bandwidths hwloc does not know\n"
             "are assumptions, listed in the output's leading comments. The same fabric is\n"
             "the spec host:KEY=VALUE,... (keys xml, ranks, rank-bw, numa-bw, nic-bw,\n"
             "hosts, net), e.g. WEFT_FABRIC=host or weft tune host:ranks=numa.\n"
             "Without hwloc built in, it says so and exits 1.\n",
    .groups = {&host_group},
    .max_pos = 0,
};

static int bw(const cli_args *a, const char *name, weft_rat *out)
{
    const char *v = cli_args_get(a, name);
    char flag[32];
    snprintf(flag, sizeof flag, "--%s", name);
    return v ? cli_flag_bandwidth(a->syn, flag, v, out) : CLI_EXIT_OK;
}

int cli_topo_host(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&host_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    weft_host_opts o;
    weft_host_opts_init(&o);
    weft_topo *t = NULL;
    o.xml = cli_args_get(&a, "xml");
    const char *ranks = cli_args_get(&a, "ranks"), *hosts = cli_args_get(&a, "hosts");
    const char *net = cli_args_get(&a, "net");
    if (ranks && !weft_host_unit_parse(ranks, &o.unit)) {
        rc = cli_usage_error(&host_syntax, "bad --ranks '%s': expected core, numa, package or pu",
                             ranks);
        goto free_args;
    }
    if ((rc = bw(&a, "rank-bw", &o.rank_bw_gbps)) || (rc = bw(&a, "numa-bw", &o.numa_bw_gbps)) ||
        (rc = bw(&a, "nic-bw", &o.nic_bw_gbps)))
        goto free_args;
    if (hosts) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(hosts, &end, 10);
        if (*hosts < '0' || *hosts > '9' || *end || errno || n < 1 || n > 65536) {
            rc = cli_usage_error(&host_syntax, "bad --hosts '%s': expected 1 .. 65536", hosts);
            goto free_args;
        }
        o.hosts = (uint32_t)n;
    }
    if (net && strcmp(net, "rail") != 0 && strcmp(net, "switch") != 0) {
        rc = cli_usage_error(&host_syntax, "bad --net '%s': expected rail or switch", net);
        goto free_args;
    }
    o.network = net;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_host(&o, &t, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    cli_out out;
    if ((rc = cli_out_open(&out, cli_args_get(&a, "output"))))
        goto free_topo;
    errno = 0; /* a failed write leaves its reason (ENOSPC) here */
    e = weft_topo_write(t, out.f);
    int write_err = e == WEFT_EIO ? (errno ? errno : EIO) : 0;
    rc = cli_out_close(&out, e == WEFT_OK);
    if (!rc && write_err) {
        const char *path = cli_args_get(&a, "output");
        cli_error("cannot write '%s': %s", path ? path : "-", strerror(write_err));
        rc = CLI_EXIT_INPUT;
    } else if (!rc && e) {
        rc = cli_fail(e, NULL);
    }
free_topo:
    weft_topo_free(t);
free_args:
    cli_args_fini(&a);
    return rc;
}
