/* Presets: the interface between the registry (preset.c), which parses a
 * spec such as "torus:4x4,bw=50" into raw parameter texts, and the preset
 * families (preset_basic.c, preset_gpu.c, preset_clos.c), which convert and
 * check those texts and build the fabric.
 *
 * Spec grammar: NAME[:ITEM[(,|:)ITEM...]], where an ITEM is either a bare
 * value (positional: it fills the preset's parameters in table order) or
 * KEY=VALUE (named). A parameter may be given once. Every message starts
 * with the whole spec, then names the parameter and says why:
 * "torus:4x0: dimension 2 must be >= 2".
 *
 * Size guard: a family computes the node and link counts of the fabric with
 * saturating 64-bit arithmetic before adding anything, and refuses
 * (WEFT_ELIMIT) a fabric beyond WEFT__PRESET_MAX_NODES nodes or
 * WEFT__PRESET_MAX_LINKS directed links. Those limits keep every id far below
 * UINT32_MAX and the peak memory of building (about 100 bytes per directed
 * link) within a few GB.
 */
#ifndef WEFT_TOPO_PRESET_INTERNAL_H
#define WEFT_TOPO_PRESET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/topo.h"

#define WEFT__PRESET_MAX_PARAMS 16
#define WEFT__PRESET_MAX_NODES (UINT64_C(1) << 23) /* 8,388,608 */
#define WEFT__PRESET_MAX_LINKS (UINT64_C(1) << 25) /* 33,554,432 */

typedef struct weft__preset weft__preset;

/* The raw parameter texts of one spec, indexed like the preset's params
 * table; text == NULL when the parameter was not given. Texts point into
 * the spec and are not NUL-terminated. */
typedef struct weft__preset_args {
    const char *spec;
    const weft__preset *preset;
    struct {
        const char *text;
        size_t len;
    } val[WEFT__PRESET_MAX_PARAMS];
} weft__preset_args;

/* Builds the fabric into b (which the caller owns and frees or builds).
 * Returns WEFT_EINVAL or WEFT_ELIMIT with d set for a bad parameter or an
 * oversized fabric (detected before anything is added), or a builder error
 * with d set by weft__preset_built(). */
typedef weft_err (*weft__preset_build_fn)(const weft__preset_args *a, weft_topo_builder *b,
                                          weft_diag *d);

struct weft__preset {
    weft_preset_info info;
    /* Parameter names in positional order, NULL-terminated. */
    const char *const *params;
    weft__preset_build_fn build;
    /* Where the model comes from, for the fabric's note; NULL if it is
     * generic. */
    const char *source;
};

/* ---- Parameter conversion (preset.c) ------------------------------------ */

/* True when parameter i was given. */
bool weft__preset_has(const weft__preset_args *a, unsigned i);
/* WEFT_EINVAL "SPEC: missing NAME (usage: ...)" unless parameter i is given. */
weft_err weft__preset_need(const weft__preset_args *a, unsigned i, weft_diag *d);
/* An unsigned decimal integer in [min, max]; def when not given. */
weft_err weft__preset_uint(const weft__preset_args *a, unsigned i, uint32_t def, uint32_t min,
                           uint32_t max, uint32_t *out, weft_diag *d);
/* A bandwidth: a number (decimal or fraction) in GB/s, or followed by a unit
 * of topo/units.h (GB/s, Gbps, ...). Must be > 0, or >= 0 when allow_zero.
 * def when not given. */
weft_err weft__preset_bw(const weft__preset_args *a, unsigned i, weft_rat def, bool allow_zero,
                         weft_rat *out, weft_diag *d);
/* A latency: a number in ns, or followed by a unit of topo/units.h (ns, us,
 * ms, s). Must be >= 0. */
weft_err weft__preset_lat(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                          weft_diag *d);
/* A delay: a latency with a unit (ns, us, ms, s), or 0. A bare number is
 * refused: "25" could be ns or us. Must be >= 0; def when not given. */
weft_err weft__preset_delay(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                            weft_diag *d);
/* A positive exact number (no unit), e.g. an oversubscription ratio. */
weft_err weft__preset_ratio(const weft__preset_args *a, unsigned i, weft_rat def, weft_rat *out,
                            weft_diag *d);
/* Records "SPEC: WHAT (e.g. out of memory) while building the fabric" for a
 * builder error and returns e. */
weft_err weft__preset_built(const weft__preset_args *a, weft_err e, weft_diag *d);
/* Refuses (WEFT_ELIMIT) a fabric beyond the size limits. Counts saturate. */
weft_err weft__preset_check_size(const weft__preset_args *a, uint64_t nodes, uint64_t links,
                                 weft_diag *d);

/* Physical per-link latencies of the hardware presets, ns (docs/presets.md
 * gives the sources). A path GPU -> switch -> GPU crosses two links, so a
 * device's or a switch's figure is split evenly over the links at it. */
/* NVLink/NVSwitch, half of the 0.6 us NCCL's tuning model charges an LL
 * step over NVLink (src/graph/tuning.cc): GPU <-> NVSwitch. */
#define WEFT__LAT_NVLINK_HALF_NS 300
/* A direct NVLink or xGMI link between two GPUs (no switch): 0.6 us. */
#define WEFT__LAT_NVLINK_DIRECT_NS 600
/* GPU <-> NIC over PCIe and the adapter: half of ConnectX-6's sub-600 ns
 * (NVIDIA ConnectX-6 user manual), so NIC to NIC pays 600 ns. */
#define WEFT__LAT_NIC_HALF_NS 300
/* NIC <-> InfiniBand switch, and switch <-> switch: half of a Quantum HDR
 * switch's 130 ns port to port (NVIDIA QM87xx user manual). */
#define WEFT__LAT_IBSW_HALF_NS 65

/* Sets arch=NAME (weft/protocol.h) on node n, the GPU generation the
 * simulator's gpu model reads. */
weft_err weft__preset_arch(weft_topo_builder *b, weft_node_id n, const char *arch);

/* Saturating arithmetic for size estimates. */
uint64_t weft__sat_add(uint64_t x, uint64_t y);
uint64_t weft__sat_mul(uint64_t x, uint64_t y);

/* Adds a node named by printf-style fmt (at most 63 bytes). */
weft_err weft__preset_node(weft_topo_builder *b, weft_node_kind kind, const char *host,
                           weft_node_id *out, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- Families ----------------------------------------------------------- */

weft_err weft__preset_ring(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_biring(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_full(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_switch(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_torus(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_hypercube(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);

weft_err weft__preset_genkautz(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_circulant(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_debruijn(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_bipartite(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);

/* Strong connectivity of the digraph of n nodes and the m arcs
 * src[k] -> dst[k] (preset_dc.c), in O(n + m): *connected is true when every
 * node reaches every other. WEFT_ENOMEM only. */
weft_err weft__topo_arcs_connected(uint32_t n, const uint32_t *src, const uint32_t *dst, size_t m,
                                   bool *connected);

/* Operators on direct-connect fabrics (dcops.c): line(SPEC), expand(SPEC;n),
 * product(SPEC;SPEC), nesting; an operand is a preset, a .topo file or an
 * operator. weft__topo_is_operator says whether a spec is spelled so;
 * weft__topo_operator builds it (errors as presets: WEFT_EINVAL naming the
 * spec and the reason, WEFT_ELIMIT, WEFT_ENOMEM). */
bool weft__topo_is_operator(const char *spec);
weft_err weft__topo_operator(const char *spec, weft_topo **out, weft_diag *d);

weft_err weft__preset_a100(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_h100(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_h200(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_b200(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_mi250(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_dgx1(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);

weft_err weft__preset_fattree(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_dragonfly(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_clos(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);
weft_err weft__preset_mixnet(const weft__preset_args *a, weft_topo_builder *b, weft_diag *d);

/* The xGMI link counts between the 16 GCDs of an MI250 node and the NVLink
 * counts between the 8 GPUs of a DGX-1V (symmetric, zero diagonal). Exposed
 * so that tests can compare them with their published sources. */
extern const uint8_t weft__mi250_xgmi[16][16];
extern const uint8_t weft__dgx1_nvlink[8][8];

#endif
