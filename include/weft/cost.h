/* weft/cost.h: the network bill of materials of a fabric, and its price
 * and power.
 *
 * A fabric (weft/topo.h) knows nodes of four kinds and links with rates;
 * this module turns them into the parts a buyer counts: NIC ports, packet
 * switch ports, OCS ports, optical transceivers, copper DACs, fibers and
 * GPU-side links (NVLink), each optical or electrical part by its rate
 * class (100G, 200G, 400G or 800G per direction). Prices ($) and powers
 * (W) per part come from a weft_cost_table: a few defaults with public
 * sources (docs/cost.md names each), overridden by a key=value file
 * (--cost FILE). A figure no public source gave is unknown until the file
 * gives it, and a total that needs an unknown figure is unknown, never
 * guessed.
 *
 * Counting (docs/cost.md has the table): the links between two nodes, both
 * ways, are one connection whose rate R is the larger direction's sum; R is
 * bucketed to the smallest class that carries it, or, above 800G, to
 * ceil(R / 800G) lanes of 800G (a preset's aggregated leaf-spine link is
 * several cables). A node is on the host side when it is a compute node or
 * a switch of a host (host=H: an NVSwitch), network side otherwise; a NIC
 * is a NIC. Then per connection (L lanes):
 *   rank or host switch <-> same host's rank or host switch: 1 GPU-side link
 *   rank or host switch <-> NIC: PCIe inside the server, nothing counted
 *   NIC <-> packet switch: L switch ports, L DACs (in the rack)
 *   packet switch <-> packet switch: 2L switch ports, 2L transceivers, L fibers
 *   NIC <-> OCS: L OCS ports, L transceivers (the OCS is transparent optics), L fibers
 *   packet switch <-> OCS: L switch ports, L OCS ports, L transceivers, L fibers
 *   OCS <-> OCS: 2L OCS ports, L fibers
 *   NIC <-> NIC, or ranks of different hosts joined directly (torus, ring):
 *     2L transceivers and L fibers (optical between hosts)
 * and a rank on the network side of such a connection (no NIC node in the
 * fabric: switch:N, torus, fattree) has its own NIC of that class, L per
 * connection; each NIC node counts one NIC per lane of its network-side
 * connections. Counting is O(nodes + links).
 */
#ifndef WEFT_COST_H
#define WEFT_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"
#include "weft/rat.h"
#include "weft/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum weft_cost_part {
    WEFT_COST_NIC,         /* one NIC port (a single-port NIC), by rate */
    WEFT_COST_SWITCH_PORT, /* one packet-switch port, by rate (its share of the switch) */
    WEFT_COST_TRANSCEIVER, /* one optical transceiver, by rate */
    WEFT_COST_DAC,         /* one copper direct-attach cable, by rate */
    WEFT_COST_OCS_PORT,    /* one optical circuit switch port (rate agnostic) */
    WEFT_COST_FIBER,       /* one fiber cable (rate agnostic) */
    WEFT_COST_GPU_LINK,    /* one GPU-side link: NVLink to a peer or an NVSwitch */
    WEFT_COST_PARTS
} weft_cost_part;

/* Rate classes per direction; WEFT_COST_ANY for the rate-agnostic parts. */
typedef enum weft_cost_rate {
    WEFT_COST_100G,
    WEFT_COST_200G,
    WEFT_COST_400G,
    WEFT_COST_800G,
    WEFT_COST_ANY,
    WEFT_COST_RATES
} weft_cost_rate;

/* "nic", "switch_port", "transceiver", "dac", "ocs_port", "fiber",
 * "gpu_link" (the keys of a cost file). */
WEFT_API const char *weft_cost_part_name(weft_cost_part p);
/* "100g" .. "800g", "" for WEFT_COST_ANY. */
WEFT_API const char *weft_cost_rate_name(weft_cost_rate r);
/* Whether part p is priced by rate class (nic, switch_port, transceiver,
 * dac) rather than once (WEFT_COST_ANY). */
WEFT_API bool weft_cost_part_rated(weft_cost_part p);

/* A figure that is known (v, exact, >= 0) or not. */
typedef struct weft_cost_value {
    bool known;
    weft_rat v;
} weft_cost_value;

/* $ and W of one part of each rate; for a rate-agnostic part only
 * [p][WEFT_COST_ANY] is used, for a rated part all but that. */
typedef struct weft_cost_table {
    weft_cost_value usd[WEFT_COST_PARTS][WEFT_COST_RATES];
    weft_cost_value watt[WEFT_COST_PARTS][WEFT_COST_RATES];
    /* The file line that set each figure (0: a default), for messages. */
    uint32_t usd_line[WEFT_COST_PARTS][WEFT_COST_RATES];
    uint32_t watt_line[WEFT_COST_PARTS][WEFT_COST_RATES];
} weft_cost_table;

/* Fills t with the defaults of docs/cost.md (known figures with a public
 * source, or a stated convention; everything else unknown). */
WEFT_API void weft_cost_table_defaults(weft_cost_table *t);

/* Applies a cost file's text to t (overriding what it names). Lines are
 * "KEY = VALUE" (blanks optional), '#' starts a comment, blank lines are
 * skipped. KEY is PART.RATE.usd or PART.RATE.w for a rated part
 * (nic.400g.usd), PART.usd or PART.w otherwise (ocs_port.w); VALUE a
 * non-negative decimal number (1250, 8.5), read exactly. Errors
 * (WEFT_EPARSE, nothing of t changed) name "NAME:LINE:COL: reason": a line
 * without '=', an unknown key (with the keys expected), a rate on a
 * rate-agnostic part or none on a rated one, a bad or negative number, a
 * key given twice (and the line of the first). */
WEFT_API weft_err weft_cost_table_parse(weft_cost_table *t, const char *text, size_t len,
                                        const char *name, weft_diag *d);
/* The same for the file at path (at most 1 MiB). */
WEFT_API weft_err weft_cost_table_load(weft_cost_table *t, const char *path, weft_diag *d);

/* How many of each part a fabric has. */
typedef struct weft_cost_bom {
    uint64_t count[WEFT_COST_PARTS][WEFT_COST_RATES];
    uint32_t ranks;
} weft_cost_bom;

/* Counts the parts of fabric t into *out (the rules above). WEFT_ENOMEM
 * or WEFT_EOVERFLOW (a count past 2^64) with d set; *out is written only
 * on success. */
WEFT_API weft_err weft_cost_count(const weft_topo *t, weft_cost_bom *out, weft_diag *d);

/* Totals of a bill: $ and W, each exact, or unknown when a part the bill
 * has (count > 0) has no figure; then missing lists the first such keys
 * ("nic.400g.usd, switch_port.400g.usd"), truncated to fit, and v is the
 * sum of the parts that have one (a lower bound of the total). */
typedef struct weft_cost_totals {
    weft_cost_value usd, watt;
    char missing_usd[256], missing_watt[256];
} weft_cost_totals;

/* Prices bill b with table c. WEFT_EOVERFLOW (d set) when a total does not
 * fit an exact 64-bit fraction. */
WEFT_API weft_err weft_cost_price(const weft_cost_bom *b, const weft_cost_table *c,
                                  weft_cost_totals *out, weft_diag *d);

#ifdef __cplusplus
}
#endif

#endif
