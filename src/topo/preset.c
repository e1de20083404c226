/* The preset registry: the table of every preset with its documentation,
 * spec splitting, and the parameter conversions the families share. See
 * preset_internal.h for the spec grammar and weft/topo.h for the contract. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "topo/preset_internal.h"
#include "topo/units.h"

/* ---- The table ----------------------------------------------------------- */

static const char *const p_n[] = {"N", "bw", "lat", NULL};
static const char *const p_torus[] = {"dims", "bw", "lat", NULL};
static const char *const p_hypercube[] = {"D", "bw", "lat", NULL};
static const char *const p_nvidia[] = {"boxes", "nvbw", "nicbw", "sharp", NULL};
static const char *const p_mi250[] = {"boxes", "xgmibw", "ibbw", NULL};
static const char *const p_dgx1[] = {"bw", NULL};
static const char *const p_genkautz[] = {"N", "d", "bw", "lat", NULL};
static const char *const p_debruijn[] = {"d", "k", "bw", "lat", NULL};
static const char *const p_circulant[] = {"N",  "j1", "j2", "j3", "j4",  "j5",
                                          "j6", "j7", "j8", "bw", "lat", NULL};
static const char *const p_fattree[] = {"k", "bw", "lat", NULL};
static const char *const p_dragonfly[] = {"p", "a", "h", "g", "bw", "gbw", "lat", NULL};
static const char *const p_clos[] = {"hosts",     "gpus",      "nics",    "nicbw",  "nvbw",
                                     "rail",      "leafports", "oversub", "spines", "levels",
                                     "podleaves", "cores",     "lat",     NULL};
static const char *const p_mixnet[] = {"hosts", "gpus",     "ocsnics", "nicbw",
                                       "nvbw",  "reconfig", "region",  NULL};

#define BW_LAT_DOC                                                                                 \
    " bw: bandwidth of every directed link (default 100 GB/s; a plain number is GB/s, or"          \
    " give a unit: GB/s, Gbps, Gb/s, GiB/s, MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps)."                 \
    " lat: latency of every link (default 0; a plain number is ns, or give ns, us, ms, s)."        \
    " Ranks are named rank0, rank1, ... and belong to no host."

static const weft__preset presets[] = {
    {{"ring", "ring:N[,bw=BW][,lat=LAT]",
      "Unidirectional ring of N >= 2 ranks: one directed link rank i -> rank (i+1) mod "
      "N." BW_LAT_DOC},
     p_n,
     weft__preset_ring,
     NULL},
    {{"biring", "biring:N[,bw=BW][,lat=LAT]",
      "Bidirectional ring of N >= 2 ranks: rank i <-> rank (i+1) mod N, bw each way"
      " (for N == 2 a single duplex pair, not two)." BW_LAT_DOC},
     p_n,
     weft__preset_biring,
     NULL},
    {{"full", "full:N[,bw=BW][,lat=LAT]",
      "Fully connected: N >= 2 ranks with a duplex link between every pair"
      " (N(N-1) directed links)." BW_LAT_DOC},
     p_n,
     weft__preset_full,
     NULL},
    {{"switch", "switch:N[,bw=BW][,lat=LAT]",
      "Star: N >= 1 ranks, each with a duplex link to one switch named sw0." BW_LAT_DOC},
     p_n,
     weft__preset_switch,
     NULL},
    {{"torus", "torus:AxB[xC...][,bw=BW][,lat=LAT]",
      "Torus with wrap-around in every dimension: 1 to 8 dimensions, each >= 2, e.g."
      " torus:4x4 or torus:4x4x4. Every rank has a duplex link to its next neighbour in each"
      " dimension; a dimension of size 2 gets one duplex pair, not two. Rank number is"
      " x1 + A*(x2 + B*(x3 + ...)) for coordinates (x1, x2, ...)." BW_LAT_DOC},
     p_torus,
     weft__preset_torus,
     NULL},
    {{"hypercube", "hypercube:D[,bw=BW][,lat=LAT]",
      "Hypercube of 2^D ranks, 1 <= D <= 20: rank i <-> rank i XOR 2^k for every k < "
      "D." BW_LAT_DOC},
     p_hypercube,
     weft__preset_hypercube,
     NULL},
    {{"genkautz", "genkautz:N,d[,bw=BW][,lat=LAT]",
      "Generalized Kautz digraph (Imase and Itoh), a direct-connect base graph of Zhao et al."
      " (NSDI'25): N ranks, 1 <= d < N; rank i has a directed link to (-d*i - a) mod N for"
      " a = 1 .. d, self-loops dropped (so a few ranks have out-degree d-1). Diameter at most"
      " ceil(log_d N)." BW_LAT_DOC},
     p_genkautz,
     weft__preset_genkautz,
     NULL},
    {{"circulant", "circulant:N,J1[,J2...][,bw=BW][,lat=LAT]",
      "Circulant graph: N >= 3 ranks, rank i <-> rank (i+J) mod N for every offset J (1 to 8"
      " distinct offsets, each 1 <= J <= N/2; J = N/2 gives one duplex pair per two ranks)."
      " bw and lat must be named (a bare value after N is an offset). circulant:N,1 is"
      " biring:N." BW_LAT_DOC},
     p_circulant,
     weft__preset_circulant,
     NULL},
    {{"debruijn", "debruijn:d,k[,bw=BW][,lat=LAT]",
      "De Bruijn digraph of d^k ranks (d >= 2, k >= 1): rank i has a directed link to"
      " (d*i + a) mod d^k for a = 0 .. d-1, self-loops dropped. Diameter k." BW_LAT_DOC},
     p_debruijn,
     weft__preset_debruijn,
     NULL},
    {{"bipartite", "bipartite:N[,bw=BW][,lat=LAT]",
      "Complete bipartite graph K(N/2, N/2): N even >= 2 ranks, every rank of 0 .. N/2-1"
      " duplex to every rank of N/2 .. N-1; degree N/2, diameter 2 (1 for N = 2)." BW_LAT_DOC},
     p_n,
     weft__preset_bipartite,
     NULL},
    {{"a100", "a100:B[,nvbw=BW][,nicbw=BW][,sharp=0|1]",
      "ForestColl's A100 model: B >= 1 boxes (default 1) of 8 GPUs (bX.gpu0-7) and one"
      " NVSwitch node (bX.nvsw0), GPU <-> NVSwitch nvbw each way (default 300 GB/s). When"
      " B > 1 each box also has 8 NICs (bX.nic0-7), GPU i <-> NIC i and NIC i <-> IB switch"
      " ib(i mod 2) at nicbw each way (default 25 GB/s); the two IB switches ib0, ib1 are"
      " shared by all boxes (sharp=1: they reduce, reduce=sharp). Box X is host bX. GPUs have "
      "arch=ampere. Latency: GPU <->"
      " NVSwitch 300 ns, GPU <-> NIC 300 ns, NIC <-> switch 65 ns (docs/presets.md)."},
     p_nvidia,
     weft__preset_a100,
     "model: ForestColl's a100_topology (github.com/liangyuRain/ForestColl topologies.py)"},
    {{"h100", "h100:B[,nvbw=BW][,nicbw=BW][,sharp=0|1]",
      "H100 (DGX/HGX H100-like) boxes: B >= 1 boxes (default 1) of 8 GPUs (bX.gpu0-7) and"
      " one NVSwitch node (bX.nvsw0, reduce=nvls: NVLink SHARP), GPU <-> NVSwitch nvbw each"
      " way (default 450 GB/s). When"
      " B > 1 each box also has 8 NICs (bX.nic0-7), GPU i <-> NIC i and NIC i <-> rail switch"
      " rail i at nicbw each way (default 50 GB/s, a 400 Gb/s NIC); the 8 rail switches"
      " rail0-7 are shared by all boxes (sharp=1: InfiniBand switches with SHARP,"
      " reduce=sharp). A single box has no NICs. Box X is host bX. GPUs"
      " have arch=hopper. Latency: GPU <-> NVSwitch 300 ns, GPU <-> NIC 300 ns, NIC <->"
      " switch 65 ns (docs/presets.md)."},
     p_nvidia,
     weft__preset_h100,
     "model: DGX H100-like box, NVLink 4 (18 links x 25 GB/s = 450 GB/s per GPU each way) "
     "through one NVSwitch node; one 400 Gb/s NIC per GPU on its own rail"},
    {{"h200", "h200:B[,nvbw=BW][,nicbw=BW][,sharp=0|1]",
      "H200 (DGX/HGX H200-like) boxes: B >= 1 boxes (default 1) of 8 GPUs (bX.gpu0-7) and"
      " one NVSwitch node (bX.nvsw0, reduce=nvls: NVLink SHARP), GPU <-> NVSwitch nvbw each"
      " way (default 450 GB/s). When"
      " B > 1 each box also has 8 NICs (bX.nic0-7), GPU i <-> NIC i and NIC i <-> rail switch"
      " rail i at nicbw each way (default 50 GB/s, a 400 Gb/s NIC); the 8 rail switches"
      " rail0-7 are shared by all boxes (sharp=1: InfiniBand switches with SHARP,"
      " reduce=sharp). A single box has no NICs. Box X is host bX. GPUs"
      " have arch=hopper. Latency: GPU <-> NVSwitch 300 ns, GPU <-> NIC 300 ns, NIC <->"
      " switch 65 ns (docs/presets.md)."},
     p_nvidia,
     weft__preset_h200,
     "model: DGX H200-like box, NVLink 4 as h100 (NVIDIA H200 datasheet: 900 GB/s NVLink per "
     "GPU both ways); one 400 Gb/s NIC per GPU on its own rail"},
    {{"b200", "b200:B[,nvbw=BW][,nicbw=BW][,sharp=0|1]",
      "B200 (DGX/HGX B200-like) boxes: B >= 1 boxes (default 1) of 8 GPUs (bX.gpu0-7) and"
      " one NVSwitch node (bX.nvsw0, reduce=nvls: NVLink SHARP), GPU <-> NVSwitch nvbw each"
      " way (default 900 GB/s). When"
      " B > 1 each box also has 8 NICs (bX.nic0-7), GPU i <-> NIC i and NIC i <-> rail switch"
      " rail i at nicbw each way (default 50 GB/s, a 400 Gb/s NIC); the 8 rail switches"
      " rail0-7 are shared by all boxes (sharp=1: InfiniBand switches with SHARP,"
      " reduce=sharp). A single box has no NICs. Box X is host bX. GPUs"
      " have arch=blackwell. Latency: GPU <-> NVSwitch 300 ns, GPU <-> NIC 300 ns, NIC <->"
      " switch 65 ns (docs/presets.md)."},
     p_nvidia,
     weft__preset_b200,
     "model: DGX B200-like box, NVLink 5 (18 links x 50 GB/s = 900 GB/s per GPU each way; "
     "NVIDIA DGX B200 datasheet) through one NVSwitch node; one 400 Gb/s NIC per GPU"},
    {{"mi250", "mi250:B[,xgmibw=BW][,ibbw=BW]",
      "ForestColl's AMD MI250 model: B >= 1 boxes (default 1) of 16 GCDs (bX.gcd0-15) joined"
      " by xGMI: GCDs i and j have m(i,j) links of xgmibw each way (default 50 GB/s per link;"
      " m from ForestColl's MI250_ADJ_MAT, 1, 2 or 4 links). When B > 1 every GCD also has a"
      " duplex link of ibbw (default 16 GB/s) to one IB switch ib0 shared by all boxes. Box X"
      " is host bX. GCDs have arch=cdna2. Latency: xGMI 600 ns, GCD <-> ib0 365 ns"
      " (docs/presets.md)."},
     p_mi250,
     weft__preset_mi250,
     "model: ForestColl's mi250_topology and MI250_ADJ_MAT (github.com/liangyuRain/ForestColl "
     "topologies.py)"},
    {{"dgx1", "dgx1[:bw=BW]",
      "NVIDIA DGX-1 with 8 V100 (gpu0-7, host b0) in the hybrid cube-mesh: 6 NVLinks per GPU,"
      " bw per NVLink each way (default 25 GB/s), doubled where two NVLinks join a pair"
      " (0-1, 0-4, 1-3, 2-3, 2-6, 4-5, 5-7, 6-7). NVLink only: no PCIe, CPUs or NICs. GPUs"
      " have arch=volta. Latency 600 ns per NVLink (docs/presets.md)."},
     p_dgx1,
     weft__preset_dgx1,
     "model: NVLink counts of dgx1() in github.com/microsoft/msccl-tools "
     "sccl/topologies/nvidia.py (hybrid cube-mesh, 6 NVLinks per V100)"},
    {{"fattree", "fattree:K[,bw=BW][,lat=LAT]",
      "k-ary fat tree (Al-Fares et al., SIGCOMM 2008), one link per cable: K even >= 2 pods,"
      " each with K/2 edge switches (podP.edgeE) and K/2 aggregation switches (podP.aggA);"
      " (K/2)^2 cores (coreC); K^3/4 ranks, K/2 per edge switch. Every edge switch reaches"
      " every aggregation switch of its pod; aggregation switch A of each pod reaches cores"
      " A*K/2 .. A*K/2+K/2-1. Full bisection bandwidth." BW_LAT_DOC},
     p_fattree,
     weft__preset_fattree,
     NULL},
    {{"dragonfly", "dragonfly[:p=P,a=A,h=H,g=G,bw=BW,gbw=BW,lat=LAT]",
      "Dragonfly (Kim et al., ISCA 2008): G groups (default A*H+1, at most A*H+1) of A"
      " routers gX.rY (default 4), each with P ranks (default 2) and H global links (default"
      " 2). The routers of a group are fully connected; every two groups share one global"
      " link: the link between groups i < j joins router (j-1)/H of group i and router i/H of"
      " group j. gbw: bandwidth of global links (default bw)." BW_LAT_DOC},
     p_dragonfly,
     weft__preset_dragonfly,
     NULL},
    {{"clos",
      "clos[:hosts=H,gpus=G,nics=K,nicbw=BW,nvbw=BW,rail=0|1,leafports=P,oversub=R,"
      "spines=S,levels=2|3,podleaves=L,cores=C,lat=LAT]",
      "Two- or three-level Clos (leaf/spine fat tree) of H hosts (default 4) with G ranks each"
      " (default 8; bX.gpuI, host bX) and K NICs each (default 8, must divide G; bX.nicJ);"
      " ranks G/K*J .. G/K*(J+1)-1 share NIC J, each through its own duplex link of nicbw."
      " nicbw: each NIC's bandwidth each way (default 50 GB/s). nvbw: each rank's link to its"
      " host's switch bX.nvsw0, each way (default 450 GB/s; 0 or G == 1: no host switch)."
      " rail=1 (default): rail-optimised, NIC J of hosts g*P .. g*P+P-1 goes to leaf g*K+J;"
      " rail=0: NICs fill leaves in order, P per leaf. leafports: NIC ports per leaf switch"
      " (default 32). oversub: leaf downlink : uplink bandwidth ratio, a positive number"
      " (default 1); each leaf has P*nicbw/oversub of uplink bandwidth spread evenly over"
      " the spines it reaches. spines: number of spine switches (levels=2, every leaf reaches"
      " all of them) or per pod (levels=3) (default ceil(P/oversub)). levels=3: consecutive"
      " leaves form pods of podleaves leaves (default P), each pod's spines reach all cores"
      " core0.. (cores, default = spines) with the pod's uplink bandwidth split evenly and no"
      " further oversubscription. lat: latency of every link outside the hosts (NIC-leaf,"
      " leaf-spine, spine-core; default 65 ns, half an InfiniBand switch's port to port;"
      " ns unless a unit is given); in a host, rank <-> switch and rank <-> NIC are 300 ns,"
      " and ranks behind a host switch have arch=hopper. Links are aggregated:"
      " one link per switch pair carries all their ports' bandwidth. Names: leafN, spineN"
      " (podP.spineN with levels=3), coreN."},
     p_clos,
     weft__preset_clos,
     NULL},
    {{"mixnet", "mixnet[:hosts=H,gpus=G,ocsnics=K,nicbw=BW,nvbw=BW,reconfig=D,region=R]",
      "MixNet-like optical-electrical fabric (Liao et al., SIGCOMM 2025): H >= 2 hosts"
      " (default 4; host bX) of G GPUs (default 8; bX.gpuI, arch=hopper) on one NVSwitch"
      " bX.nvsw0 (nvbw each way, default 450 GB/s, 300 ns) and G NICs bX.nicI (GPU I <-> NIC"
      " I, nicbw each way, default 50 GB/s, 300 ns). NICs 0 .. G-K-1 go to packet rail"
      " switches railI shared by all hosts (65 ns); the last K NICs (ocsnics, default G/2)"
      " are ports of an optical circuit switch: hosts R*r .. R*r+R-1 (region, default all H)"
      " share ocsr, whose circuits take reconfig to change (a delay with a unit, default"
      " 25us; docs/topo-format.md, \"ocs\"). OCS ports add no latency. With K = G there is"
      " no packet fabric and region must be H."},
     p_mixnet,
     weft__preset_mixnet,
     "model: MixNet (Liao et al., SIGCOMM 2025): part of each server's NICs on a regional "
     "OCS, the rest on the packet fabric"},
};

#define N_PRESETS (sizeof presets / sizeof presets[0])

size_t weft_preset_count(void)
{
    return N_PRESETS;
}

const weft_preset_info *weft_preset_get(size_t i)
{
    return i < N_PRESETS ? &presets[i].info : NULL;
}

/* ---- Spec splitting ------------------------------------------------------ */

static unsigned param_count(const weft__preset *p)
{
    unsigned n = 0;
    while (p->params[n])
        n++;
    return n;
}

/* "N, bw, lat" into buf. */
static void param_list(const weft__preset *p, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned i = 0; p->params[i] && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", p->params[i]);
}

static weft_err split_args(const char *spec, const char *args, weft__preset_args *a, weft_diag *d)
{
    const weft__preset *p = a->preset;
    unsigned n = param_count(p), pos = 0;
    bool named = false;
    if (*args == '\0')
        return weft_diag_set(d, WEFT_EINVAL, "%s: empty parameter list (usage: %s)", spec,
                             p->info.usage);
    for (const char *s = args;;) {
        size_t len = strcspn(s, ",:");
        if (len == 0)
            return weft_diag_set(d, WEFT_EINVAL, "%s: empty parameter (usage: %s)", spec,
                                 p->info.usage);
        const char *eq = memchr(s, '=', len);
        unsigned i;
        const char *val = s;
        size_t vlen = len;
        if (eq) {
            size_t klen = (size_t)(eq - s);
            for (i = 0; i < n; i++) {
                if (strlen(p->params[i]) == klen && memcmp(p->params[i], s, klen) == 0)
                    break;
            }
            if (i == n) {
                char list[256];
                param_list(p, list, sizeof list);
                return weft_diag_set(d, WEFT_EINVAL, "%s: unknown parameter '%.*s' (%s takes %s)",
                                     spec, (int)klen, s, p->info.name, list);
            }
            val = eq + 1;
            vlen = len - klen - 1;
            named = true;
        } else {
            /* "clos:oversub=2:1" must not quietly mean hosts=1. */
            if (named)
                return weft_diag_set(d, WEFT_EINVAL,
                                     "%s: unnamed value '%.*s' after named parameters "
                                     "(usage: %s)",
                                     spec, (int)len, s, p->info.usage);
            if (pos >= n)
                return weft_diag_set(d, WEFT_EINVAL, "%s: too many parameters (usage: %s)", spec,
                                     p->info.usage);
            i = pos++;
        }
        if (a->val[i].text)
            return weft_diag_set(d, WEFT_EINVAL, "%s: parameter '%s' given twice", spec,
                                 p->params[i]);
        a->val[i].text = val;
        a->val[i].len = vlen;
        if (s[len] == '\0')
            return WEFT_OK;
        s += len + 1;
    }
}

weft_err weft_topo_preset(const char *spec, weft_topo **out, weft_diag *d)
{
    if (!spec || !out)
        return weft_diag_set(d, WEFT_EINVAL, "no preset spec given");
    size_t name_len = strcspn(spec, ":");
    const weft__preset *p = NULL;
    for (size_t i = 0; i < N_PRESETS; i++) {
        if (strlen(presets[i].info.name) == name_len &&
            memcmp(presets[i].info.name, spec, name_len) == 0)
            p = &presets[i];
    }
    if (!p) {
        char list[256];
        size_t len = 0;
        for (size_t i = 0; i < N_PRESETS && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                    presets[i].info.name);
        return weft_diag_set(d, WEFT_ENOENT, "unknown preset '%.*s' (presets: %s)",
                             (int)(name_len > 64 ? 64 : name_len), spec, list);
    }
    weft__preset_args a;
    memset(&a, 0, sizeof a);
    a.spec = spec;
    a.preset = p;
    weft_err e;
    if (spec[name_len] == ':') {
        e = split_args(spec, spec + name_len + 1, &a, d);
        if (e)
            return e;
    }
    weft_topo_builder *b;
    e = weft_topo_builder_new(&b);
    if (e)
        return weft__preset_built(&a, e, d);
    e = p->build(&a, b, d);
    if (e)
        goto free_builder;
    char note[WEFT_TOPO_NAME_MAX + 32];
    snprintf(note, sizeof note, "preset %.*s", WEFT_TOPO_NAME_MAX, spec);
    e = weft_topo_builder_note(b, note);
    if (!e && p->source)
        e = weft_topo_builder_note(b, p->source);
    if (e) {
        weft__preset_built(&a, e, d);
        goto free_builder;
    }
    return weft_topo_build(b, out, d);
free_builder:
    weft_topo_builder_free(b);
    return e;
}

/* ---- Parameter conversion ------------------------------------------------ */

bool weft__preset_has(const weft__preset_args *a, unsigned i)
{
    return a->val[i].text != NULL;
}

weft_err weft__preset_need(const weft__preset_args *a, unsigned i, weft_diag *d)
{
    if (a->val[i].text)
        return WEFT_OK;
    return weft_diag_set(d, WEFT_EINVAL, "%s: missing %s (usage: %s)", a->spec,
                         a->preset->params[i], a->preset->info.usage);
}

weft_err weft__preset_uint(const weft__preset_args *a, unsigned i, uint32_t def, uint32_t min,
                           uint32_t max, uint32_t *out, weft_diag *d)
{
    const char *name = a->preset->params[i];
    if (!a->val[i].text) {
        *out = def;
        return WEFT_OK;
    }
    const char *s = a->val[i].text;
    size_t len = a->val[i].len;
    uint64_t v = 0;
    bool big = false;
    if (len == 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be an integer", a->spec, name);
    for (size_t k = 0; k < len; k++) {
        if (s[k] < '0' || s[k] > '9')
            return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be an integer", a->spec, name);
        v = v * 10 + (uint64_t)(s[k] - '0');
        if (v > UINT32_MAX) {
            big = true;
            v = UINT32_MAX; /* keep scanning for non-digits; the value is too big anyway */
        }
    }
    if (v < min)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be >= %u", a->spec, name, min);
    if (big || v > max)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be <= %u", a->spec, name, max);
    *out = (uint32_t)v;
    return WEFT_OK;
}

/* A plain number (in the base unit: GB/s, ns) or a number and a unit, read
 * by the reader every command-line flag and .topo file shares
 * (weft__quantity_parse). Writes the value, which may be zero or negative;
 * false when malformed. */
static bool parse_quantity(const char *s, size_t len, bool bandwidth, weft_rat *out)
{
    const char *why;
    size_t where;
    weft_err e = weft__quantity_parse(bandwidth ? WEFT_QTY_BANDWIDTH : WEFT_QTY_LATENCY, s, len,
                                      bandwidth ? "GB/s" : "ns", out, &why, &where);
    if (e == WEFT_EINVAL) {
        /* The text was understood and only the sign was refused: the
         * callers judge the sign, and 0 or a negative number in any unit
         * is 0 or negative. */
        size_t used;
        return weft_rat_parse(s, len, out, &used) == WEFT_OK;
    }
    return e == WEFT_OK;
}

weft_err weft__preset_bw(const weft__preset_args *a, unsigned i, weft_rat def, bool allow_zero,
                         weft_rat *out, weft_diag *d)
{
    const char *name = a->preset->params[i];
    if (!a->val[i].text) {
        *out = def;
        return WEFT_OK;
    }
    weft_rat v;
    if (!parse_quantity(a->val[i].text, a->val[i].len, true, &v))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: %s must be a bandwidth such as 100, 12.5 or 400Gbps (GB/s "
                             "unless a unit is given: %s)",
                             a->spec, name, weft__bandwidth_units);
    if (weft_rat_sign(v) < 0 || (!allow_zero && weft_rat_is_zero(v)))
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be %s", a->spec, name,
                             allow_zero ? ">= 0" : "> 0");
    *out = v;
    return WEFT_OK;
}

weft_err weft__preset_lat(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                          weft_diag *d)
{
    const char *name = a->preset->params[i];
    if (!a->val[i].text) {
        *out = def;
        return WEFT_OK;
    }
    weft_rat v;
    if (!parse_quantity(a->val[i].text, a->val[i].len, false, &v))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: %s must be a latency such as 500 or 1.5us (ns unless a unit "
                             "is given: %s)",
                             a->spec, name, weft__latency_units);
    if (weft_rat_sign(v) < 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be >= 0", a->spec, name);
    *out = v;
    return WEFT_OK;
}

weft_err weft__preset_delay(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                            weft_diag *d)
{
    const char *name = a->preset->params[i], *why;
    size_t where;
    if (!a->val[i].text) {
        *out = def;
        return WEFT_OK;
    }
    if (a->val[i].len == 1 && a->val[i].text[0] == '0') {
        *out = weft_rat_int(0);
        return WEFT_OK;
    }
    if (weft__quantity_parse(WEFT_QTY_LATENCY, a->val[i].text, a->val[i].len, NULL, out, &why,
                             &where))
        return weft_diag_set(d, WEFT_EINVAL,
                             "%s: %s='%.*s': %s (a delay such as 25us or 1ms; units %s)", a->spec,
                             name, (int)a->val[i].len, a->val[i].text, why, weft__latency_units);
    return WEFT_OK;
}

weft_err weft__preset_ratio(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                            weft_diag *d)
{
    const char *name = a->preset->params[i];
    if (!a->val[i].text) {
        *out = def;
        return WEFT_OK;
    }
    weft_rat v;
    size_t used;
    if (weft_rat_parse(a->val[i].text, a->val[i].len, &v, &used) != WEFT_OK ||
        used != a->val[i].len)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be a number such as 1, 3 or 1.5", a->spec,
                             name);
    if (weft_rat_sign(v) <= 0)
        return weft_diag_set(d, WEFT_EINVAL, "%s: %s must be > 0", a->spec, name);
    *out = v;
    return WEFT_OK;
}

weft_err weft__preset_built(const weft__preset_args *a, weft_err e, weft_diag *d)
{
    return weft_diag_set(d, e, "%s: %s while building the fabric", a->spec, weft_strerror(e));
}

uint64_t weft__sat_add(uint64_t x, uint64_t y)
{
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

uint64_t weft__sat_mul(uint64_t x, uint64_t y)
{
    return y && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

static weft_err too_large(const weft__preset_args *a, uint64_t count, const char *what,
                          uint64_t limit, weft_diag *d)
{
    if (count == UINT64_MAX)
        return weft_diag_set(d, WEFT_ELIMIT,
                             "%s: too large: more than %llu %s (presets are limited to %llu)",
                             a->spec, (unsigned long long)limit, what, (unsigned long long)limit);
    return weft_diag_set(d, WEFT_ELIMIT, "%s: too large: %llu %s (presets are limited to %llu)",
                         a->spec, (unsigned long long)count, what, (unsigned long long)limit);
}

weft_err weft__preset_check_size(const weft__preset_args *a, uint64_t nodes, uint64_t links,
                                 weft_diag *d)
{
    if (nodes > WEFT__PRESET_MAX_NODES)
        return too_large(a, nodes, "nodes", WEFT__PRESET_MAX_NODES, d);
    if (links > WEFT__PRESET_MAX_LINKS)
        return too_large(a, links, "links", WEFT__PRESET_MAX_LINKS, d);
    return WEFT_OK;
}

weft_err weft__preset_arch(weft_topo_builder *b, weft_node_id n, const char *arch)
{
    return weft_topo_builder_set_attr(b, n, "arch", arch);
}

weft_err weft__preset_node(weft_topo_builder *b, weft_node_kind kind, const char *host,
                           weft_node_id *out, const char *fmt, ...)
{
    char name[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return weft_topo_builder_add_node(b, name, kind, host, out);
}
