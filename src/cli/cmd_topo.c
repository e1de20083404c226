/* weft topo: the group of fabric commands. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/topo.h"

static const cli_command topo_commands[] = {
    {"list", "list every fabric preset with its parameters", cli_topo_list},
    {"show", "print a fabric in .topo format", cli_topo_show},
    {"stats", "summarise a fabric: ranks, nodes, links, bandwidth, balance, connectivity",
     cli_topo_stats},
    {"dot", "draw a fabric as a Graphviz DOT graph", cli_topo_dot},
    {"host", "this machine (hwloc) plus a network, in .topo format", cli_topo_host},
    {"search",
     "direct-connect fabrics for N ranks of degree D scored by BFB: Pareto frontier, "
     "best for a size",
     cli_topo_search},
    {"cost", "the network bill of materials of a fabric: parts by rate, $ and W (--cost FILE)",
     cli_topo_cost},
};

static const cli_group topo_group = {
    .path = "weft topo",
    .noun = "topo command",
    .about = "Inspect fabrics. SPEC is a .topo file, an NCCL topology XML, an ASTRA-sim\n"
             "network config (.yml) or a preset such as a100:2 ('weft topo list'), or an\n"
             "operator on fabrics of ranks joined directly: line(SPEC), expand(SPEC;n),\n"
             "product(SPEC;SPEC) (docs/presets.md). 'weft topo search' picks such a fabric.\n",
    .commands = topo_commands,
    .count = sizeof topo_commands / sizeof *topo_commands,
};

int cli_cmd_topo(int argc, char **argv)
{
    return cli_group_run(&topo_group, argc, argv);
}

void cli_format_bw(weft_rat gbps, char *buf, size_t size)
{
    char exact[64];
    weft_rat_format_exact(gbps, exact, sizeof exact);
    /* format_exact falls back to "num/den" when no finite decimal exists. */
    bool fraction = gbps.den != 1;
    for (const char *p = exact; *p; p++)
        if (*p == '.')
            fraction = false;
    if (fraction)
        snprintf(buf, size, "%s GB/s (~%.6g GB/s)", exact, weft_rat_to_double(gbps));
    else
        snprintf(buf, size, "%s GB/s", exact);
}
