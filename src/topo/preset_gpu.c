/* GPU boxes: a100, h100 (NVSwitch boxes with NICs), mi250 (xGMI mesh),
 * dgx1 (NVLink hybrid cube-mesh). Every box is host "bX" and its nodes are
 * named "bX.gpuI", "bX.nvsw0", "bX.nicI", "bX.gcdI"; switches shared by all
 * boxes ("ib0", "rail3") come after the boxes. Links carry the physical
 * latencies of preset_internal.h and every GPU its generation (arch=). */
#include <stdio.h>

#include "topo/preset_internal.h"

/* xGMI links between the GCDs of one MI250 node, from ForestColl
 * (liangyuRain/ForestColl topologies.py @fc693e2, MI250_ADJ_MAT); each link
 * is 50 GB/s each way. preset_test.c compares it with the shared fixture. */
const uint8_t weft__mi250_xgmi[16][16] = {
    {0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    {4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
    {0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0},
    {0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0},
    {2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0},
    {0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0},
    {0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0},
    {0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0},
    {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2},
    {0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0},
};

/* NVLinks between the 8 V100s of a DGX-1V (hybrid cube-mesh, 6 per GPU),
 * from microsoft/msccl-tools sccl/topologies/nvidia.py (dgx1()). */
const uint8_t weft__dgx1_nvlink[8][8] = {
    {0, 2, 1, 1, 2, 0, 0, 0}, {2, 0, 1, 2, 0, 1, 0, 0}, {1, 1, 0, 2, 0, 0, 2, 0},
    {1, 2, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2, 1, 1}, {0, 1, 0, 0, 2, 0, 1, 2},
    {0, 0, 2, 0, 1, 1, 0, 2}, {0, 0, 0, 1, 1, 2, 2, 0},
};

#define GPUS_PER_BOX 8
#define GCDS_PER_BOX 16

static weft_node_id node(uint32_t v)
{
    weft_node_id n = {v};
    return n;
}

/* An NVSwitch box family: 8 GPUs and an NVSwitch per box; with more than
 * one box, NIC i per GPU i and shared switch (i mod n_shared) per NIC. */
typedef struct nv_family {
    weft_rat nvbw, nicbw; /* defaults */
    unsigned n_shared;    /* shared switches: 2 (a100) or 8 (h100) */
    const char *shared;   /* their name prefix */
    const char *arch;     /* the GPUs' generation */
    /* The box's NVSwitch reduces in the network (reduce=nvls): third-
     * generation NVSwitch (H100, H200 boxes) and the fourth (B200) have
     * NVLink SHARP, the A100's second generation has not (NVIDIA H100 Tensor
     * Core GPU Architecture whitepaper, 2022, "NVLink Switch System"; NVIDIA
     * Blackwell Architecture Technical Brief, 2024, "NVLink Switch"; NCCL's
     * NVLS needs NVSwitch and sm90, src/graph/search.cc of github:NVIDIA/nccl
     * @5067397c, ncclTopoCompute). */
    bool nvsw_reduce;
    /* Whether sharp=1 is taken: the shared switches are InfiniBand
     * (Quantum-2 NDR for 400 Gb/s NICs), which has SHARP v3 (NVIDIA
     * Quantum-2 InfiniBand platform datasheet, "SHARPv3"); a100's HDR
     * Quantum also has SHARP (v2), so every family takes it. */
} nv_family;

static weft_err nv_boxes(const weft__preset_args *a, const nv_family *f, weft_topo_builder *b,
                         weft_diag *d)
{
    uint32_t boxes;
    weft_rat nvbw, nicbw, nvlat = weft_rat_int(WEFT__LAT_NVLINK_HALF_NS),
                          niclat = weft_rat_int(WEFT__LAT_NIC_HALF_NS),
                          swlat = weft_rat_int(WEFT__LAT_IBSW_HALF_NS);
    uint32_t sharp;
    weft_err e = weft__preset_uint(a, 0, 1, 1, UINT32_MAX, &boxes, d);
    if (!e)
        e = weft__preset_bw(a, 1, f->nvbw, false, &nvbw, d);
    if (!e)
        e = weft__preset_bw(a, 2, f->nicbw, false, &nicbw, d);
    if (!e)
        e = weft__preset_uint(a, 3, 0, 0, 1, &sharp, d);
    if (e)
        return e;
    bool net = boxes > 1;
    uint32_t per_box = GPUS_PER_BOX + 1 + (net ? GPUS_PER_BOX : 0);
    uint64_t nodes = weft__sat_add(weft__sat_mul(boxes, per_box), net ? f->n_shared : 0);
    uint64_t links = weft__sat_mul(boxes, GPUS_PER_BOX * 2 * (net ? 3 : 1));
    e = weft__preset_check_size(a, nodes, links, d);
    if (e)
        return e;
    char host[16];
    for (uint32_t x = 0; !e && x < boxes; x++) {
        snprintf(host, sizeof host, "b%u", x);
        for (unsigned g = 0; !e && g < GPUS_PER_BOX; g++) {
            weft_node_id v;
            e = weft__preset_node(b, WEFT_NODE_COMPUTE, host, &v, "b%u.gpu%u", x, g);
            if (!e)
                e = weft__preset_arch(b, v, f->arch);
        }
        weft_node_id sw;
        if (!e)
            e = weft__preset_node(b, WEFT_NODE_SWITCH, host, &sw, "b%u.nvsw0", x);
        if (!e && f->nvsw_reduce)
            e = weft_topo_builder_set_attr(b, sw, "reduce", "nvls");
        for (unsigned g = 0; net && !e && g < GPUS_PER_BOX; g++)
            e = weft__preset_node(b, WEFT_NODE_NIC, host, NULL, "b%u.nic%u", x, g);
    }
    uint32_t shared0 = boxes * per_box;
    for (unsigned s = 0; net && !e && s < f->n_shared; s++) {
        weft_node_id sw;
        e = weft__preset_node(b, WEFT_NODE_SWITCH, NULL, &sw, "%s%u", f->shared, s);
        if (!e && sharp)
            e = weft_topo_builder_set_attr(b, sw, "reduce", "sharp");
    }
    for (uint32_t x = 0; !e && x < boxes; x++) {
        uint32_t base = x * per_box, nvsw = base + GPUS_PER_BOX;
        for (unsigned g = 0; !e && g < GPUS_PER_BOX; g++) {
            e = weft_topo_builder_add_duplex(b, node(base + g), node(nvsw), nvbw, nvlat);
            if (!e && net)
                e = weft_topo_builder_add_duplex(b, node(base + g), node(nvsw + 1 + g), nicbw,
                                                 niclat);
            if (!e && net)
                e = weft_topo_builder_add_duplex(b, node(nvsw + 1 + g),
                                                 node(shared0 + g % f->n_shared), nicbw, swlat);
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_a100(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    static const nv_family f = {{300, 1}, {25, 1}, 2, "ib", "ampere", false};
    return nv_boxes(a, &f, b, d);
}

weft_err weft__preset_h100(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    static const nv_family f = {{450, 1}, {50, 1}, 8, "rail", "hopper", true};
    return nv_boxes(a, &f, b, d);
}

/* H200: the H100's NVLink 4 and NVSwitch, more memory (NVIDIA H200 Tensor
 * Core GPU datasheet, 2024: 900 GB/s NVLink per GPU, both ways). */
weft_err weft__preset_h200(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    static const nv_family f = {{450, 1}, {50, 1}, 8, "rail", "hopper", true};
    return nv_boxes(a, &f, b, d);
}

/* B200: NVLink 5, 1.8 TB/s per GPU both ways (NVIDIA DGX B200 datasheet,
 * 2024), eight 400 Gb/s ConnectX-7 NICs per box. */
weft_err weft__preset_b200(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    static const nv_family f = {{900, 1}, {50, 1}, 8, "rail", "blackwell", true};
    return nv_boxes(a, &f, b, d);
}

/* bw times each multiplicity of m[n][n] into out; false on overflow. */
static bool link_bws(const uint8_t *m, unsigned n, weft_rat bw, weft_rat *out)
{
    for (unsigned k = 0; k < n * n; k++) {
        if (m[k] && weft_rat_mul(bw, weft_rat_int(m[k]), &out[k]) != WEFT_OK)
            return false;
    }
    return true;
}

weft_err weft__preset_mi250(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    uint32_t boxes;
    weft_rat xgmibw, ibbw, xlat = weft_rat_int(WEFT__LAT_NVLINK_DIRECT_NS),
                           iblat = weft_rat_int(WEFT__LAT_NIC_HALF_NS + WEFT__LAT_IBSW_HALF_NS);
    weft_rat bw[GCDS_PER_BOX * GCDS_PER_BOX];
    weft_err e = weft__preset_uint(a, 0, 1, 1, UINT32_MAX, &boxes, d);
    if (!e)
        e = weft__preset_bw(a, 1, weft_rat_int(50), false, &xgmibw, d);
    if (!e && !link_bws(&weft__mi250_xgmi[0][0], GCDS_PER_BOX, xgmibw, bw))
        e = weft_diag_set(d, WEFT_EINVAL, "%s: xgmibw is too large", a->spec);
    if (!e)
        e = weft__preset_bw(a, 2, weft_rat_int(16), false, &ibbw, d);
    if (e)
        return e;
    bool net = boxes > 1;
    unsigned pairs = 0;
    for (unsigned i = 0; i < GCDS_PER_BOX; i++) {
        for (unsigned j = i + 1; j < GCDS_PER_BOX; j++)
            pairs += weft__mi250_xgmi[i][j] != 0;
    }
    uint64_t nodes = weft__sat_add(weft__sat_mul(boxes, GCDS_PER_BOX), net ? 1 : 0);
    uint64_t links = weft__sat_mul(boxes, 2 * pairs + (net ? 2 * GCDS_PER_BOX : 0));
    e = weft__preset_check_size(a, nodes, links, d);
    if (e)
        return e;
    char host[16];
    for (uint32_t x = 0; !e && x < boxes; x++) {
        snprintf(host, sizeof host, "b%u", x);
        for (unsigned g = 0; !e && g < GCDS_PER_BOX; g++) {
            weft_node_id v;
            e = weft__preset_node(b, WEFT_NODE_COMPUTE, host, &v, "b%u.gcd%u", x, g);
            if (!e)
                e = weft__preset_arch(b, v, "cdna2");
        }
    }
    weft_node_id ib = {boxes * GCDS_PER_BOX};
    if (!e && net)
        e = weft_topo_builder_add_node(b, "ib0", WEFT_NODE_SWITCH, NULL, &ib);
    for (uint32_t x = 0; !e && x < boxes; x++) {
        uint32_t base = x * GCDS_PER_BOX;
        for (unsigned i = 0; !e && i < GCDS_PER_BOX; i++) {
            for (unsigned j = i + 1; !e && j < GCDS_PER_BOX; j++) {
                if (weft__mi250_xgmi[i][j])
                    e = weft_topo_builder_add_duplex(b, node(base + i), node(base + j),
                                                     bw[i * GCDS_PER_BOX + j], xlat);
            }
            if (!e && net)
                e = weft_topo_builder_add_duplex(b, node(base + i), ib, ibbw, iblat);
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}

weft_err weft__preset_dgx1(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d)
{
    weft_rat nvlink, lat = weft_rat_int(WEFT__LAT_NVLINK_DIRECT_NS);
    weft_rat bw[GPUS_PER_BOX * GPUS_PER_BOX];
    weft_err e = weft__preset_bw(a, 0, weft_rat_int(25), false, &nvlink, d);
    if (!e && !link_bws(&weft__dgx1_nvlink[0][0], GPUS_PER_BOX, nvlink, bw))
        e = weft_diag_set(d, WEFT_EINVAL, "%s: bw is too large", a->spec);
    if (e)
        return e;
    for (unsigned g = 0; !e && g < GPUS_PER_BOX; g++) {
        weft_node_id v;
        e = weft__preset_node(b, WEFT_NODE_COMPUTE, "b0", &v, "gpu%u", g);
        if (!e)
            e = weft__preset_arch(b, v, "volta");
    }
    for (unsigned i = 0; !e && i < GPUS_PER_BOX; i++) {
        for (unsigned j = i + 1; !e && j < GPUS_PER_BOX; j++) {
            if (weft__dgx1_nvlink[i][j])
                e = weft_topo_builder_add_duplex(b, node(i), node(j), bw[i * GPUS_PER_BOX + j],
                                                 lat);
        }
    }
    return e ? weft__preset_built(a, e, d) : WEFT_OK;
}
