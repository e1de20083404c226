/* Fabric options and loading. See fabric.h. */
#include "cli/fabric.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "weft/log.h"

const cli_optgroup cli_fabric_options = {
    "fabric options (NCCL topology XML only; presets and .topo files ignore them)",
    (const cli_opt[]){
        {"nvlink-bw", 0, "BW", "NVLink: per GPU to one NVSwitch, each way (or per <nvlink> link)"},
        {"nic-bw", 0, "BW", "each NIC to the network, each way"},
        {"cpu-bw", 0, "BW", "between two CPU sockets of a box, each way"},
        {"hosts", 0, "N", "copies of the box (default 1)"},
        {"net", 0, "rail|switch", "how boxes are joined: a switch per NIC index or one switch"},
        {NULL, 0, NULL, NULL},
    },
};

static const char bw_example[] = "a number and a unit such as 300GB/s or 200Gbps "
                                 "(GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps)";

/* Reads --NAME as a bandwidth into *out when given. */
static int bw_option(const cli_args *a, const char *name, weft_rat *out)
{
    const char *v = cli_args_get(a, name);
    if (!v)
        return CLI_EXIT_OK;
    weft_err e = weft_parse_bandwidth(v, out);
    if (e == WEFT_EINVAL)
        return cli_usage_error(a->syn, "bad --%s '%s': must be > 0", name, v);
    if (e == WEFT_EOVERFLOW)
        return cli_usage_error(a->syn, "bad --%s '%s': too large", name, v);
    if (e)
        return cli_usage_error(a->syn, "bad --%s '%s': expected %s", name, v, bw_example);
    return CLI_EXIT_OK;
}

int cli_load_fabric(const cli_args *a, const char *spec, weft_topo **out)
{
    weft_spec_opts opts;
    weft_spec_opts_init(&opts);
    int rc;
    if ((rc = bw_option(a, "nvlink-bw", &opts.nccl.nvlink_bw_gbps)) ||
        (rc = bw_option(a, "nic-bw", &opts.nccl.nic_bw_gbps)) ||
        (rc = bw_option(a, "cpu-bw", &opts.nccl.cpu_bw_gbps)))
        return rc;
    const char *hosts = cli_args_get(a, "hosts");
    if (hosts) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(hosts, &end, 10);
        if (hosts[0] < '0' || hosts[0] > '9' || *end || errno || n < 1 || n > UINT32_MAX)
            return cli_usage_error(a->syn, "bad --hosts '%s': expected an integer from 1 to %u",
                                   hosts, UINT32_MAX);
        opts.nccl.hosts = (uint32_t)n;
    }
    const char *net = cli_args_get(a, "net");
    if (net) {
        if (strcmp(net, "rail") != 0 && strcmp(net, "switch") != 0)
            return cli_usage_error(a->syn, "bad --net '%s': expected rail or switch", net);
        opts.nccl.network = net;
    }
    weft_diag d;
    weft_diag_clear(&d);
    /* "-" is the usual name of standard input; the importers read it as
     * the file /dev/stdin (by content, since it has no extension). */
    if (strcmp(spec, "-") == 0)
        spec = "/dev/stdin";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    weft_err e = weft_topo_from_spec(spec, &opts, out, &d);
    if (e)
        return cli_fail(e, &d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    weft_log(WEFT_LOG_INFO, "cli", "loaded %s: %u ranks, %u nodes, %u links in %.3f s", spec,
             weft_topo_num_ranks(*out), weft_topo_num_nodes(*out), weft_topo_num_links(*out),
             (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return CLI_EXIT_OK;
}
