/* weft fabrics: the topology graph.
 *
 * A fabric is a directed graph. Nodes have a kind (compute, switch, nic, ocs),
 * a unique name, an optional host (ranks on one host/box share it) and other
 * key=value attributes kept verbatim. Links are directed and carry an exact
 * bandwidth in GB/s (10^9 bytes/s) and an exact latency in ns, both
 * weft_rat. Ranks are the compute nodes in the order they were added.
 *
 * A weft_topo is immutable once built and safe to share between threads. It
 * is built through a weft_topo_builder: add nodes and links in any order,
 * then weft_topo_build() validates, merges parallel links (same source and
 * destination: bandwidths add up, latencies must agree) and lays the graph
 * out in compressed arrays. Node ids are the order of addition; link ids are
 * the order of (source id, destination id), so the out-links of a node are
 * one contiguous range of link ids (CSR). In-links are a second index.
 * Building is O(V + E log E) time and O(V + E) memory with no per-link
 * allocation.
 *
 * Where a fabric comes from (a .topo file, a preset such as "a100:2", an
 * NCCL topology XML, an ASTRA-sim config) is a "spec"; weft_topo_from_spec()
 * takes any of them.
 */
#ifndef WEFT_TOPO_H
#define WEFT_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"
#include "weft/rat.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_node_kind {
    WEFT_NODE_COMPUTE = 0, /* a rank: GPU, NPU or CPU process */
    WEFT_NODE_SWITCH,      /* forwards, never computes */
    WEFT_NODE_NIC,
    WEFT_NODE_OCS, /* optical circuit switch */
    WEFT__NODE_KIND_COUNT
} weft_node_kind;

/* Ids are wrapped so that a rank cannot be passed where a node is meant. */
typedef struct weft_node_id {
    uint32_t v;
} weft_node_id;
typedef struct weft_link_id {
    uint32_t v;
} weft_link_id;
typedef struct weft_rank {
    uint32_t v;
} weft_rank;

#define WEFT_NO_HOST (-1)
/* Names and attribute values are limited so that every line of a .topo file
 * stays short. */
#define WEFT_TOPO_NAME_MAX 255

typedef struct weft_topo weft_topo;
typedef struct weft_topo_builder weft_topo_builder;

/* "compute", "switch", "nic", "ocs". */
WEFT_API const char *weft_node_kind_name(weft_node_kind kind);
/* Parses a kind name; false when unknown. */
WEFT_API bool weft_node_kind_parse(const char *text, size_t len, weft_node_kind *out);

/* ---- Building ---------------------------------------------------------- */

WEFT_API weft_err weft_topo_builder_new(weft_topo_builder **out);
/* Frees a builder and everything added to it; NULL is allowed. */
WEFT_API void weft_topo_builder_free(weft_topo_builder *b);

/* Adds a node. name must be non-empty, at most WEFT_TOPO_NAME_MAX bytes, and
 * unique (WEFT_EEXIST otherwise); host may be NULL. */
WEFT_API weft_err weft_topo_builder_add_node(weft_topo_builder *b, const char *name,
                                             weft_node_kind kind, const char *host,
                                             weft_node_id *out);
/* Looks a node up by name (len bytes, not necessarily NUL-terminated). */
WEFT_API bool weft_topo_builder_find(const weft_topo_builder *b, const char *name, size_t len,
                                     weft_node_id *out);
/* Adds a key=value attribute other than host to a node. Attributes are kept
 * in the order added and written back verbatim. WEFT_EEXIST if the key is
 * already set on the node. */
WEFT_API weft_err weft_topo_builder_set_attr(weft_topo_builder *b, weft_node_id node,
                                             const char *key, const char *value);
/* Adds a directed link. Bandwidth must be > 0 (GB/s), latency >= 0 (ns);
 * WEFT_EINVAL for a self-loop, a bad value or an unknown node. */
WEFT_API weft_err weft_topo_builder_add_link(weft_topo_builder *b, weft_node_id src,
                                             weft_node_id dst, weft_rat bw_gbps, weft_rat lat_ns);
/* Adds two directed links, src->dst and dst->src. */
WEFT_API weft_err weft_topo_builder_add_duplex(weft_topo_builder *b, weft_node_id a, weft_node_id c,
                                               weft_rat bw_gbps, weft_rat lat_ns);
/* A token-bucket shaper on a link, as tc-tbf(8) has one: tokens accrue at
 * the link's bandwidth up to burst_bytes, a byte leaves when it has a
 * token, and while the bucket holds tokens bytes leave at peak_gbps (the
 * speed of the wire under the shaper), so after an idle moment up to
 * burst_bytes pass at the peak. burst_bytes 0: no shaper. In a .topo file:
 * `burst=BYTES peak=BW` after a link's bandwidth and latency. */
typedef struct weft_link_shaper {
    uint64_t burst_bytes;
    weft_rat peak_gbps;
} weft_link_shaper;
/* Gives the last `last` links added (1 after add_link, 2 after add_duplex)
 * the shaper s; WEFT_EINVAL unless burst_bytes > 0 and the peak exceeds
 * each link's bandwidth. A shaped link cannot have a parallel twin (build
 * fails with WEFT_ETOPO naming it). */
WEFT_API weft_err weft_topo_builder_shape_links(weft_topo_builder *b, uint32_t last,
                                                weft_link_shaper s);
/* Appends a line to the fabric's provenance note: what an importer assumed
 * or was told by flags ("NVLink bandwidth 300 GB/s per GPU (--nvlink-bw)").
 * The note is printed by `weft topo show` as comments. */
WEFT_API weft_err weft_topo_builder_note(weft_topo_builder *b, const char *line);
/* Appends a line to the note that is an assumption: a default the source
 * did not state and a flag could change ("no NVLink modelled ..."). It is
 * part of the note and also listed by weft_topo_assumptions, which the
 * command line prints on stderr for every command that answers from the
 * fabric, since the answer depends on it. */
WEFT_API weft_err weft_topo_builder_assume(weft_topo_builder *b, const char *line);
WEFT_API uint32_t weft_topo_builder_num_nodes(const weft_topo_builder *b);

/* Validates and builds. The builder is consumed (freed) whether or not the
 * build succeeds. Fails with WEFT_ETOPO when there is no compute node or
 * parallel links disagree on latency, naming them in d. */
WEFT_API weft_err weft_topo_build(weft_topo_builder *b, weft_topo **out, weft_diag *d);

WEFT_API void weft_topo_free(weft_topo *t);

/* ---- Reading ----------------------------------------------------------- */

WEFT_API uint32_t weft_topo_num_nodes(const weft_topo *t);
WEFT_API uint32_t weft_topo_num_links(const weft_topo *t);
WEFT_API uint32_t weft_topo_num_ranks(const weft_topo *t);
WEFT_API uint32_t weft_topo_num_hosts(const weft_topo *t);

WEFT_API const char *weft_topo_node_name(const weft_topo *t, weft_node_id n);
WEFT_API weft_node_kind weft_topo_node_kind(const weft_topo *t, weft_node_id n);
/* Host index (0 .. num_hosts-1, in order of first appearance) or
 * WEFT_NO_HOST. */
WEFT_API int32_t weft_topo_node_host(const weft_topo *t, weft_node_id n);
WEFT_API const char *weft_topo_host_name(const weft_topo *t, int32_t host);
/* The node's other attributes as "k=v k=v" (empty string if none). */
WEFT_API const char *weft_topo_node_attrs(const weft_topo *t, weft_node_id n);
/* The value of one attribute (host included), or NULL. */
WEFT_API const char *weft_topo_node_attr(const weft_topo *t, weft_node_id n, const char *key);
WEFT_API bool weft_topo_find_node(const weft_topo *t, const char *name, weft_node_id *out);

/* What a switch reduces in the network (reduce=, docs/topo-format.md):
 * nothing, NVLink SHARP (an NVSwitch inside a host: NCCL's NVLS) or SHARP
 * (a network switch: NCCL's CollNet). reduce=1, kept for compatibility,
 * means nvls on a switch with a host and sharp on one without. */
typedef enum weft_reduce_kind {
    WEFT_REDUCE_NONE = 0,
    WEFT_REDUCE_NVLS,
    WEFT_REDUCE_SHARP,
} weft_reduce_kind;
/* Node n's reduce= (NONE for every other node and for reduce=0). */
WEFT_API weft_reduce_kind weft_topo_node_reduce(const weft_topo *t, weft_node_id n);

/* Optical circuit switches (docs/topo-format.md, "ocs"). An ocs node's links
 * are its ports: each joins it to a compute, nic or switch node as a duplex
 * pair of equal bandwidth (weft_topo_build refuses anything else). At any
 * moment the OCS joins its ports in disjoint pairs (circuits) and data
 * crosses it only along a current circuit; a circuit that changes carries
 * nothing for the node's reconfiguration delay. This returns that delay in
 * ns: the node's reconfig= attribute, 0 when it has none (circuits change
 * instantly), or 0 for a node that is not an ocs. */
WEFT_API weft_rat weft_topo_ocs_reconfig_ns(const weft_topo *t, weft_node_id n);
/* True when t has an ocs node. */
WEFT_API bool weft_topo_has_ocs(const weft_topo *t);

WEFT_API weft_node_id weft_topo_rank_node(const weft_topo *t, weft_rank r);
/* The rank of a compute node; false for other kinds. */
WEFT_API bool weft_topo_node_rank(const weft_topo *t, weft_node_id n, weft_rank *out);

WEFT_API weft_node_id weft_topo_link_src(const weft_topo *t, weft_link_id l);
WEFT_API weft_node_id weft_topo_link_dst(const weft_topo *t, weft_link_id l);
WEFT_API weft_rat weft_topo_link_bw(const weft_topo *t, weft_link_id l);
WEFT_API weft_rat weft_topo_link_lat(const weft_topo *t, weft_link_id l);
/* The link's shaper (weft_topo_builder_shape_links); false, and *out zero,
 * for a link without one. */
WEFT_API bool weft_topo_link_shaper(const weft_topo *t, weft_link_id l, weft_link_shaper *out);

/* Out-links of n are link ids first .. first+count-1, sorted by destination. */
WEFT_API void weft_topo_out_links(const weft_topo *t, weft_node_id n, uint32_t *first,
                                  uint32_t *count);
/* In-links of n: *count link ids, sorted by source. The array belongs to t. */
WEFT_API const uint32_t *weft_topo_in_links(const weft_topo *t, weft_node_id n, uint32_t *count);
/* The link src->dst, if any (binary search, O(log degree)). */
WEFT_API bool weft_topo_find_link(const weft_topo *t, weft_node_id src, weft_node_id dst,
                                  weft_link_id *out);
/* The provenance note (lines separated by '\n'; empty string if none). */
WEFT_API const char *weft_topo_note(const weft_topo *t);
/* The note's assumption lines (weft_topo_builder_assume), in order,
 * separated by '\n'; empty string if none. */
WEFT_API const char *weft_topo_assumptions(const weft_topo *t);

/* True when a and b are the same graph: same nodes (names, kinds, hosts,
 * attributes) in the same order and the same links with equal bandwidth,
 * latency and shaper. The note is not compared. */
WEFT_API bool weft_topo_equal(const weft_topo *a, const weft_topo *b);

/* The fabric a group of ranks sees (a training step's TP or DP group): t
 * without its other compute nodes and their links; every switch, NIC and
 * OCS stays, with its links. Where that would leave a rank of the group
 * unable to reach another (the other ranks forward: a torus, a ring of
 * GPUs), the other compute nodes stay instead, as switches of the same
 * names and links, without their attributes. The group's ranks are
 * renumbered in t's order. The note is not kept. WEFT_EINVAL for no rank, a rank out of
 * range or given twice; the build's errors (WEFT_ETOPO). */
WEFT_API weft_err weft_topo_subset(const weft_topo *t, const uint32_t *ranks, uint32_t n,
                                   weft_topo **out, weft_diag *d);

/* ---- Summary ----------------------------------------------------------- */

typedef struct weft_topo_stats {
    uint32_t ranks, nodes, links, hosts;
    uint32_t nodes_by_kind[WEFT__NODE_KIND_COUNT];
    /* Per-rank sums of out-link (injection) and in-link (ejection)
     * bandwidth, GB/s: the smallest and largest over all ranks. */
    weft_rat min_injection, max_injection, min_ejection, max_ejection;
    /* Every switch/nic/ocs node has in-bandwidth == out-bandwidth. */
    bool switches_balanced;
    /* Name of one unbalanced forwarding node, or NULL. Belongs to t. */
    const char *first_unbalanced;
    /* Every node reaches every other node. */
    bool strongly_connected;
    /* Every rank reaches every other rank (through any nodes). */
    bool ranks_connected;
} weft_topo_stats;

/* Computes the summary in O(V + E). WEFT_EOVERFLOW if a bandwidth sum does
 * not fit in a rational. */
WEFT_API weft_err weft_topo_get_stats(const weft_topo *t, weft_topo_stats *out);

/* ---- Text format (.topo) ----------------------------------------------- */

/* Parses .topo text (docs/topo-format.md): text[0..len), which may hold any
 * bytes (it need not be NUL-terminated; NULL with len 0 is an empty text).
 * `name` is used in messages ("fab.topo:3:12: reason"; NULL gives
 * "<text>"). On any error nothing is returned and d says file:line:col (the
 * 1-based byte column of the offending token) and why. WEFT_EPARSE for
 * malformed text, WEFT_ETOPO for a well-formed text that is not a fabric (no
 * compute node, parallel links with different latencies), WEFT_ENOMEM. One
 * pass, O(len) plus the builder's O(V + E log E); no allocation per line. */
WEFT_API weft_err weft_topo_parse(const char *text, size_t len, const char *name, weft_topo **out,
                                  weft_diag *d);
/* Reads and parses a file; messages name it by path (WEFT_ENOENT when it
 * does not exist, WEFT_EIO when it cannot be read or is a directory,
 * WEFT_ELIMIT beyond WEFT_TOPO_MAX_FILE_BYTES: "PATH: larger than 256 MiB,
 * the limit for a .topo file", also for a pipe or /dev/zero, which are
 * read up to that point and no further). */
#define WEFT_TOPO_MAX_FILE_BYTES ((size_t)256 << 20) /* 5x bench_topo_load's 100,000 ranks */
WEFT_API weft_err weft_topo_load_file(const char *path, weft_topo **out, weft_diag *d);
/* Writes t in .topo format: the note as leading "# " comments, nodes in id
 * order, links in id order with opposite links of equal bandwidth and
 * latency folded into one duplex line. Parsing the output gives a graph
 * equal to t (weft_topo_equal). WEFT_EINVAL, with nothing written, when a
 * name cannot be written as a token (a blank, '#', an invalid byte) or a
 * node line would exceed 4096 bytes; WEFT_EIO when writing fails. */
WEFT_API weft_err weft_topo_write(const weft_topo *t, FILE *f);

/* ---- Units ------------------------------------------------------------- */

/* Parses a bandwidth written as in .topo files and on the command line: a
 * number (weft_rat_parse: "300", "12.5", "2400/7", "1e3") immediately
 * followed by one of the units GB/s (10^9 bytes/s), Gbps or Gb/s (10^9
 * bits/s), GiB/s (2^30 bytes/s), MB/s, MiB/s, Mbps, Mb/s, TB/s, Tbps. Units
 * are case-sensitive (Gb is bits, GB bytes). The whole string must be used.
 * Writes the exact value in GB/s (10^9 bytes/s) on success. WEFT_EPARSE for
 * malformed text (no number, missing or unknown unit, trailing bytes),
 * WEFT_EINVAL when the value is not > 0, WEFT_EOVERFLOW when it does not fit
 * in a weft_rat. */
WEFT_API weft_err weft_parse_bandwidth(const char *text, weft_rat *gbps);

/* The quantities of fabric text and flags, for weft_parse_quantity. */
typedef enum weft_quantity {
    WEFT_QTY_BANDWIDTH, /* in GB/s; must be > 0 */
    WEFT_QTY_LATENCY,   /* a time in ns (units ns, us, ms, s); must be >= 0 */
} weft_quantity;

/* The one reader of bandwidths and times that .topo files, presets and
 * every command-line flag share: NUMBER UNIT as weft_parse_bandwidth, or a
 * bare NUMBER taken in bare_unit (one of the quantity's units: presets and
 * --nic-bw take "GB/s", preset latencies "ns"); bare_unit
 * NULL requires a unit. Writes the exact value in GB/s or ns. On failure
 * *why (when why is not NULL) is a static reason for a message: "bad
 * number", "missing unit", "unknown unit", "must be > 0", "must be >= 0",
 * "too large" or "too small" (below the resolution of a fraction of 64-bit
 * integers, as 1e-30GB/s), with the codes of weft_parse_bandwidth. */
WEFT_API weft_err weft_parse_quantity(weft_quantity q, const char *text, const char *bare_unit,
                                      weft_rat *out, const char **why);
/* The unit names a quantity accepts, for messages: "GB/s, Gbps, ...". */
WEFT_API const char *weft_quantity_units(weft_quantity q);

/* ---- Presets ----------------------------------------------------------- */

typedef struct weft_preset_info {
    const char *name;    /* "ring" */
    const char *usage;   /* "ring:N[:BW[:LAT]]" */
    const char *summary; /* one paragraph: what it models, every parameter */
} weft_preset_info;

WEFT_API size_t weft_preset_count(void);
WEFT_API const weft_preset_info *weft_preset_get(size_t i);
/* Builds a preset from its spelling ("torus:4x4", "a100:2", "dgx1";
 * docs/presets.md). WEFT_ENOENT for an unknown preset name, WEFT_EINVAL for
 * bad parameters, WEFT_ELIMIT for a fabric beyond the preset size limits
 * (d says which and why). */
WEFT_API weft_err weft_topo_preset(const char *spec, weft_topo **out, weft_diag *d);

/* ---- Imports ----------------------------------------------------------- */

/* Imports turn other projects' descriptions of a machine into a weft fabric.
 * Whatever the source does not say is taken from options or from a
 * documented default, and every such assumption is written into the fabric's
 * note (weft_topo_note), so `weft topo show` says what was assumed.
 * docs/imports.md describes both formats, every rule and every default. */

/* NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE).
 *
 * GPUs (<pci> of class 0x03xxxx, or with a <gpu> child) become compute nodes
 * "gpu0".."gpuN-1" in PCI bus id order; NICs (class 0x02xxxx, or a <nic>
 * child) become nic nodes "nic0".. in bus id order; PCIe switches ("pcisw0"..)
 * and CPU sockets ("cpu0"..) become switch nodes in file order. PCIe links
 * get NCCL's own rate: link_width * per-lane rate of link_speed / 80 GB/s
 * (16 GT/s x16 = 24 GB/s). With hosts > 1 every name gets a "bH." prefix
 * ("b1.gpu3"); host= is set on every node of a box ("0" for one host).
 *
 * Zero rationals and NULL mean "use the documented default". */
typedef struct weft_nccl_import_opts {
    /* NVLink. When the file has no <nvlink> elements: > 0 adds one NVSwitch
     * node "nvsw0" per box joined to every GPU at this bandwidth each way;
     * 0 models no NVLink (the note says so). When the file has <nvlink>
     * elements: the bandwidth of ONE link (an element with count=C gives
     * C times this); 0 takes NCCL's per-link figure for the GPU's sm=
     * (e.g. 20 GB/s for sm 80, 20.6 for sm 90). GB/s. */
    weft_rat nvlink_bw_gbps;
    /* Each NIC to the network, each way. 0: the sum of the NIC's <net
     * speed=> (Mb/s, as NCCL: speed/8000 GB/s), else the NIC's own PCIe
     * link bandwidth. GB/s. */
    weft_rat nic_bw_gbps;
    /* Between two CPU sockets of a box, each way. 0: NCCL's figure for the
     * CPU's arch/vendor/model (e.g. 16 GB/s AMD Zen 1/2, 10 GB/s Intel
     * Skylake). GB/s. */
    weft_rat cpu_bw_gbps;
    /* Copies of the box, 1 to WEFT_NCCL_MAX_HOSTS. With 1 there is no
     * network beyond the NICs. */
    uint32_t hosts;
    /* How boxes are joined when hosts > 1: "rail" (NIC i of every box to
     * switch "rail<i>") or "switch" (every NIC to one switch "net0").
     * NULL means "rail". */
    const char *network;
} weft_nccl_import_opts;

/* The most copies of a box an NCCL import makes (weft_nccl_import_opts.hosts). */
#define WEFT_NCCL_MAX_HOSTS 1000000u

/* Sets every field to its default: zeros, hosts = 1, network = NULL. */
WEFT_API void weft_nccl_import_opts_init(weft_nccl_import_opts *o);
/* Imports an NCCL topology dump from a file (o may be NULL for defaults).
 * Errors say "FILE:LINE:COL: reason": WEFT_EPARSE for malformed XML or an
 * element NCCL would not accept (unknown link_speed, missing busid ...),
 * WEFT_ETOPO when there is no GPU, WEFT_EINVAL for bad options,
 * WEFT_ELIMIT when the copies would exceed 2^22 nodes or 2^23 links,
 * WEFT_ENOENT / WEFT_EIO when the file cannot be read. Nothing is returned
 * on failure. */
WEFT_API weft_err weft_topo_load_nccl_xml(const char *path, const weft_nccl_import_opts *o,
                                          weft_topo **out, weft_diag *d);
/* The same from memory; `name` is used in messages. */
WEFT_API weft_err weft_topo_parse_nccl_xml(const char *text, size_t len, const char *name,
                                           const weft_nccl_import_opts *o, weft_topo **out,
                                           weft_diag *d);

/* ASTRA-sim analytical network config (.yml): `topology: [Ring, Switch,
 * FullyConnected ...]` (one per dimension), `npus_count`, `bandwidth` (GB/s
 * with 1 GB = 2^30 bytes, converted exactly to weft GB/s) and `latency` (ns).
 * NPU i ("npu<i>") has mixed-radix coordinates with dimension 0 fastest;
 * each group of NPUs differing only in dimension d gets that dimension's
 * building block (Ring: bidirectional, a 2-NPU ring is one duplex link;
 * Switch: a switch "d<d>.sw<g>"; FullyConnected: every pair). host= is the
 * NPU's group in dimension 0. Errors say "FILE:LINE:COL: reason"
 * (WEFT_EPARSE; WEFT_ELIMIT beyond 2^20 NPUs or 2^23 links). */
WEFT_API weft_err weft_topo_load_astra_yml(const char *path, weft_topo **out, weft_diag *d);
/* The same from memory; `name` is used in messages. */
WEFT_API weft_err weft_topo_parse_astra_yml(const char *text, size_t len, const char *name,
                                            weft_topo **out, weft_diag *d);

/* Options for weft_topo_from_spec; the CLI fills them from flags
 * (--nvlink-bw, --nic-bw, --cpu-bw, --hosts, --net). They only affect
 * imports that need them (today: NCCL XML). */
typedef struct weft_spec_opts {
    weft_nccl_import_opts nccl;
} weft_spec_opts;

WEFT_API void weft_spec_opts_init(weft_spec_opts *o);
/* Any spec. When a file exists at `spec` it is imported by extension:
 * .xml -> NCCL XML, .yml/.yaml -> ASTRA-sim, anything else by content
 * (starts with '<': NCCL XML; a "topology:" key: ASTRA-sim; else .topo).
 * Otherwise `spec` is a preset ("a100:2"). Neither: WEFT_ENOENT with
 * "no such file or preset 'X' (see weft topo list)". opts may be NULL for
 * defaults. */
WEFT_API weft_err weft_topo_from_spec(const char *spec, const weft_spec_opts *opts, weft_topo **out,
                                      weft_diag *d);

/* What a spec names, decided exactly as weft_topo_from_spec decides it, so
 * a caller can tell before loading whether options such as the NCCL ones
 * apply. A name that is no file is a preset (or a host fabric, "host" and
 * "host:..."), whether or not such a preset exists; a directory counts as a
 * .topo file (loading it fails). */
typedef enum weft_spec_kind {
    WEFT_SPEC_PRESET,
    WEFT_SPEC_HOST,
    WEFT_SPEC_TOPO,
    WEFT_SPEC_NCCL_XML,
    WEFT_SPEC_ASTRA_YML,
} weft_spec_kind;
WEFT_API weft_spec_kind weft_spec_kind_of(const char *spec);
/* "a preset", "a host fabric", "a .topo file", "an NCCL topology XML",
 * "an ASTRA-sim config": for messages. */
WEFT_API const char *weft_spec_kind_name(weft_spec_kind kind);

#ifdef __cplusplus
}
#endif
#endif
