/* The bill of materials of a fabric and its price and power. See
 * weft/cost.h for the counting rules and docs/cost.md for the defaults and
 * their sources. */
#include "weft/cost.h"

#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/file.h"

static const char *const part_names[WEFT_COST_PARTS] = {
    "nic", "switch_port", "transceiver", "dac", "ocs_port", "fiber", "gpu_link",
};
static const char *const rate_names[WEFT_COST_RATES] = {"100g", "200g", "400g", "800g", ""};
/* Each class's rate in Gb/s per direction. */
static const int64_t rate_gbps[WEFT_COST_ANY] = {100, 200, 400, 800};

const char *weft_cost_part_name(weft_cost_part p)
{
    return (unsigned)p < WEFT_COST_PARTS ? part_names[p] : "?";
}

const char *weft_cost_rate_name(weft_cost_rate r)
{
    return (unsigned)r < WEFT_COST_RATES ? rate_names[r] : "?";
}

bool weft_cost_part_rated(weft_cost_part p)
{
    return p == WEFT_COST_NIC || p == WEFT_COST_SWITCH_PORT || p == WEFT_COST_TRANSCEIVER ||
           p == WEFT_COST_DAC;
}

/* ---- The table ------------------------------------------------------------ */

static void set(weft_cost_value *v, int64_t num, int64_t den)
{
    v->known = true;
    v->v.num = num;
    v->v.den = den;
}

void weft_cost_table_defaults(weft_cost_table *t)
{
    memset(t, 0, sizeof *t);
    for (int p = 0; p < WEFT_COST_PARTS; p++)
        for (int r = 0; r < WEFT_COST_RATES; r++)
            t->usd[p][r].v = t->watt[p][r].v = weft_rat_int(0);
    /* Optical transceivers, W (docs/cost.md): 100G QSFP28 short reach 3.0 W
     * (ProLabs, "Managing the Thirst for Power"); 200G: NVIDIA
     * MMS4X00-NS400 in its 2-channel 200G mode, 5 W max; 400G: the same
     * module at 400G, 9 W typical and max; 800G: a twin-port OSFP of
     * Class 8, 17 W (NVIDIA QM97xx user manual, Interfaces). */
    set(&t->watt[WEFT_COST_TRANSCEIVER][WEFT_COST_100G], 3, 1);
    set(&t->watt[WEFT_COST_TRANSCEIVER][WEFT_COST_200G], 5, 1);
    set(&t->watt[WEFT_COST_TRANSCEIVER][WEFT_COST_400G], 9, 1);
    set(&t->watt[WEFT_COST_TRANSCEIVER][WEFT_COST_800G], 17, 1);
    /* NICs, W: NVIDIA ConnectX-7 user manual, Specifications, typical
     * power with passive cables in PCIe Gen 5.0 x16: MCX75310AAS-NEAT
     * (one 400G OSFP port) 24.9 W, MCX75310AAS-HEAT (one 200G OSFP port)
     * 16.7 W. */
    set(&t->watt[WEFT_COST_NIC][WEFT_COST_200G], 167, 10);
    set(&t->watt[WEFT_COST_NIC][WEFT_COST_400G], 249, 10);
    /* Packet-switch ports, W: NVIDIA Spectrum-4 SN5600, typical power with
     * passive cables (ATIS) 940 W for 64 ports of 800GbE, or 128 of 400GbE
     * (SN5000 user manual, Data Interfaces): 940/64 and 940/128 W. */
    set(&t->watt[WEFT_COST_SWITCH_PORT][WEFT_COST_400G], 235, 32);
    set(&t->watt[WEFT_COST_SWITCH_PORT][WEFT_COST_800G], 235, 16);
    /* Prices, $: MixNet (Liao et al., SIGCOMM 2025), Appendix D.2,
     * Table 4 "cost of networking components" (100G and 200G NIC, switch
     * port and OCS port prices taken there from TopoOpt, NSDI 2023; 400G
     * and 800G added by MixNet). Its 800G NIC price is the paper's own
     * guess (1.5 x 400G, no product then), so it is not a default. */
    static const int64_t xcvr_usd[WEFT_COST_ANY] = {99, 239, 659, 1399};
    static const int64_t port_usd[WEFT_COST_ANY] = {187, 374, 1090, 1400};
    static const int64_t nic_usd[WEFT_COST_800G] = {659, 1079, 1499};
    for (int r = 0; r < WEFT_COST_ANY; r++) {
        set(&t->usd[WEFT_COST_TRANSCEIVER][r], xcvr_usd[r], 1);
        set(&t->usd[WEFT_COST_SWITCH_PORT][r], port_usd[r], 1);
        if (r < WEFT_COST_800G)
            set(&t->usd[WEFT_COST_NIC][r], nic_usd[r], 1);
    }
    set(&t->usd[WEFT_COST_OCS_PORT][WEFT_COST_ANY], 520, 1);
    /* Passive copper draws no power (NVIDIA MCP7Y00 DAC specification:
     * "near zero power consuming"); a fiber is glass. */
    for (int r = 0; r < WEFT_COST_ANY; r++)
        set(&t->watt[WEFT_COST_DAC][r], 0, 1);
    set(&t->watt[WEFT_COST_FIBER][WEFT_COST_ANY], 0, 1);
    /* GPU-side links are part of the server, not of the network: 0 $ and
     * 0 W by convention (the choice), overridable. */
    set(&t->usd[WEFT_COST_GPU_LINK][WEFT_COST_ANY], 0, 1);
    set(&t->watt[WEFT_COST_GPU_LINK][WEFT_COST_ANY], 0, 1);
}

/* "nic.400g.usd", "ocs_port.w" into buf. */
static void key_text(weft_cost_part p, weft_cost_rate r, bool usd, char *buf, size_t len)
{
    if (weft_cost_part_rated(p))
        snprintf(buf, len, "%s.%s.%s", part_names[p], rate_names[r], usd ? "usd" : "w");
    else
        snprintf(buf, len, "%s.%s", part_names[p], usd ? "usd" : "w");
}

static bool word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

#define KEYS_EXPECTED                                                                              \
    "expected PART.RATE.usd or PART.RATE.w with PART nic, switch_port, transceiver or dac and "    \
    "RATE 100g, 200g, 400g or 800g, or PART.usd or PART.w with PART ocs_port, fiber or gpu_link"

/* Parses key s[0..n) into (part, rate, usd); false with why filled. */
static bool parse_key(const char *s, size_t n, weft_cost_part *part, weft_cost_rate *rate,
                      bool *usd, char *why, size_t wlen)
{
    const char *dot1 = memchr(s, '.', n);
    if (!dot1) {
        snprintf(why, wlen, "unknown key '%.*s' (" KEYS_EXPECTED ")", (int)n, s);
        return false;
    }
    int p = -1;
    for (int i = 0; i < WEFT_COST_PARTS; i++)
        if (word_is(s, (size_t)(dot1 - s), part_names[i]))
            p = i;
    const char *rest = dot1 + 1;
    size_t rn = n - (size_t)(rest - s);
    const char *dot2 = memchr(rest, '.', rn);
    const char *unit = dot2 ? dot2 + 1 : rest;
    size_t un = n - (size_t)(unit - s);
    bool is_usd = word_is(unit, un, "usd"), is_w = word_is(unit, un, "w");
    if (p < 0 || !(is_usd || is_w)) {
        snprintf(why, wlen, "unknown key '%.*s' (" KEYS_EXPECTED ")", (int)n, s);
        return false;
    }
    int r = WEFT_COST_ANY;
    if (dot2) {
        r = -1;
        for (int i = 0; i < WEFT_COST_ANY; i++)
            if (word_is(rest, (size_t)(dot2 - rest), rate_names[i]))
                r = i;
        if (r < 0) {
            snprintf(why, wlen, "unknown rate '%.*s' in '%.*s' (expected 100g, 200g, 400g or 800g)",
                     (int)(dot2 - rest), rest, (int)n, s);
            return false;
        }
    }
    bool rated = weft_cost_part_rated((weft_cost_part)p);
    if (rated && r == WEFT_COST_ANY) {
        snprintf(why, wlen, "'%.*s' needs a rate: %s is priced per rate class (%s.400g.%s)", (int)n,
                 s, part_names[p], part_names[p], is_usd ? "usd" : "w");
        return false;
    }
    if (!rated && r != WEFT_COST_ANY) {
        snprintf(why, wlen, "'%.*s': %s has one figure for every rate (%s.%s)", (int)n, s,
                 part_names[p], part_names[p], is_usd ? "usd" : "w");
        return false;
    }
    *part = (weft_cost_part)p;
    *rate = (weft_cost_rate)r;
    *usd = is_usd;
    return true;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

weft_err weft_cost_table_parse(weft_cost_table *t, const char *text, size_t len, const char *name,
                               weft_diag *d)
{
    weft_cost_table work = *t;
    /* Lines set by this file, so a key given twice is caught. */
    uint32_t seen_usd[WEFT_COST_PARTS][WEFT_COST_RATES], seen_w[WEFT_COST_PARTS][WEFT_COST_RATES];
    memset(seen_usd, 0, sizeof seen_usd);
    memset(seen_w, 0, sizeof seen_w);
    uint32_t line = 0;
    size_t at = 0;
    char why[512];
    while (at < len) {
        line++;
        size_t start = at;
        while (at < len && text[at] != '\n')
            at++;
        size_t end = at;
        at += at < len; /* the newline */
        const char *hash = memchr(text + start, '#', end - start);
        if (hash)
            end = (size_t)(hash - text);
        size_t a = start;
        while (a < end && blank(text[a]))
            a++;
        while (end > a && blank(text[end - 1]))
            end--;
        if (a == end)
            continue;
        unsigned col = (unsigned)(a - start) + 1;
        const char *eq = memchr(text + a, '=', end - a);
        if (!eq)
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: expected KEY = VALUE, got '%.*s'", name,
                                 line, col, (int)(end - a), text + a);
        size_t ke = (size_t)(eq - text);
        while (ke > a && blank(text[ke - 1]))
            ke--;
        weft_cost_part part;
        weft_cost_rate rate;
        bool usd;
        if (!parse_key(text + a, ke - a, &part, &rate, &usd, why, sizeof why))
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: %s", name, line, col, why);
        size_t v = (size_t)(eq - text) + 1;
        while (v < end && blank(text[v]))
            v++;
        unsigned vcol = (unsigned)(v - start) + 1;
        weft_rat val;
        size_t used = 0;
        weft_err e = v < end ? weft_rat_parse(text + v, end - v, &val, &used) : WEFT_EPARSE;
        if (e || used != end - v || weft_rat_sign(val) < 0)
            return weft_diag_set(d, WEFT_EPARSE,
                                 "%s:%u:%u: '%.*s' needs a non-negative number (such as 1250 or "
                                 "8.5), not '%.*s'",
                                 name, line, vcol, (int)(ke - a), text + a, (int)(end - v),
                                 text + v);
        uint32_t *seen = usd ? &seen_usd[part][rate] : &seen_w[part][rate];
        if (*seen)
            return weft_diag_set(d, WEFT_EPARSE, "%s:%u:%u: '%.*s' is already given on line %u",
                                 name, line, col, (int)(ke - a), text + a, *seen);
        *seen = line;
        weft_cost_value *slot = usd ? &work.usd[part][rate] : &work.watt[part][rate];
        slot->known = true;
        slot->v = val;
        if (usd)
            work.usd_line[part][rate] = line;
        else
            work.watt_line[part][rate] = line;
    }
    *t = work;
    return WEFT_OK;
}

weft_err weft_cost_table_load(weft_cost_table *t, const char *path, weft_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    weft_err e = weft__file_read(path, (size_t)1 << 20, "a cost file", &text, &len, d);
    if (e)
        return e;
    e = weft_cost_table_parse(t, text, len, path, d);
    weft__free(text);
    return e;
}

/* ---- Counting ------------------------------------------------------------- */

/* Which side of the server a node is on. */
typedef enum side { S_RANK, S_HOSTSW, S_NIC, S_SWITCH, S_OCS } side;

static side side_of(const weft_topo *t, weft_node_id n)
{
    switch (weft_topo_node_kind(t, n)) {
    case WEFT_NODE_COMPUTE:
        return S_RANK;
    case WEFT_NODE_NIC:
        return S_NIC;
    case WEFT_NODE_OCS:
        return S_OCS;
    default:
        return weft_topo_node_host(t, n) >= 0 ? S_HOSTSW : S_SWITCH;
    }
}

static weft_err add(weft_cost_bom *b, weft_cost_part p, weft_cost_rate r, uint64_t n)
{
    uint64_t *c = &b->count[p][weft_cost_part_rated(p) ? r : WEFT_COST_ANY];
    if (*c > UINT64_MAX - n)
        return WEFT_EOVERFLOW;
    *c += n;
    return WEFT_OK;
}

/* The class and lane count of a connection of gbs GB/s per direction. */
static weft_err classify(weft_rat gbs, weft_cost_rate *rate, uint64_t *lanes)
{
    weft_rat gbits;
    weft_err e = weft_rat_mul(gbs, weft_rat_int(8), &gbits);
    if (e)
        return e;
    for (int r = 0; r < WEFT_COST_ANY; r++) {
        if (weft_rat_cmp(gbits, weft_rat_int(rate_gbps[r])) <= 0) {
            *rate = (weft_cost_rate)r;
            *lanes = 1;
            return WEFT_OK;
        }
    }
    /* ceil(gbits / 800) lanes of 800G. */
    weft_rat q;
    e = weft_rat_div(gbits, weft_rat_int(rate_gbps[WEFT_COST_800G]), &q);
    if (e)
        return e;
    *rate = WEFT_COST_800G;
    *lanes = (uint64_t)(q.num / q.den) + (q.num % q.den != 0);
    return WEFT_OK;
}

/* Counts one connection between a and b (sides sa <= sb after the swap)
 * of L lanes of class r. */
static weft_err count_pair(const weft_topo *t, weft_node_id a, weft_node_id b, weft_cost_rate r,
                           uint64_t L, weft_cost_bom *out)
{
    side sa = side_of(t, a), sb = side_of(t, b);
    if (sa > sb) {
        side s = sa;
        sa = sb;
        sb = s;
        weft_node_id n = a;
        a = b;
        b = n;
    }
    int32_t ha = weft_topo_node_host(t, a), hb = weft_topo_node_host(t, b);
    bool same_host = ha >= 0 && ha == hb;
    bool host_a = sa == S_RANK || sa == S_HOSTSW, host_b = sb == S_RANK || sb == S_HOSTSW;
    weft_err e = WEFT_OK;
    if (host_a && host_b && same_host)
        return add(out, WEFT_COST_GPU_LINK, WEFT_COST_ANY, 1);
    if (host_a && sb == S_NIC)
        return WEFT_OK; /* PCIe inside the server */
    /* A rank (or a host switch) facing the network has its own NIC(s). */
    uint64_t nics = (host_a ? L : 0) + (host_b ? L : 0);
    if (nics && (e = add(out, WEFT_COST_NIC, r, nics)))
        return e;
    /* Host-side endpoints act as NICs from here on. */
    bool nic_a = host_a || sa == S_NIC, nic_b = host_b || sb == S_NIC;
    if (nic_a && nic_b) { /* direct between hosts: optical */
        if (!(e = add(out, WEFT_COST_TRANSCEIVER, r, 2 * L)))
            e = add(out, WEFT_COST_FIBER, r, L);
        return e;
    }
    if (nic_a && sb == S_SWITCH) { /* in the rack: copper */
        if (!(e = add(out, WEFT_COST_SWITCH_PORT, r, L)))
            e = add(out, WEFT_COST_DAC, r, L);
        return e;
    }
    if (nic_a && sb == S_OCS) {
        if (!(e = add(out, WEFT_COST_OCS_PORT, r, L)) &&
            !(e = add(out, WEFT_COST_TRANSCEIVER, r, L)))
            e = add(out, WEFT_COST_FIBER, r, L);
        return e;
    }
    if (sa == S_SWITCH && sb == S_SWITCH) { /* between tiers: optical */
        if (!(e = add(out, WEFT_COST_SWITCH_PORT, r, 2 * L)) &&
            !(e = add(out, WEFT_COST_TRANSCEIVER, r, 2 * L)))
            e = add(out, WEFT_COST_FIBER, r, L);
        return e;
    }
    if (sa == S_SWITCH && sb == S_OCS) {
        if (!(e = add(out, WEFT_COST_SWITCH_PORT, r, L)) &&
            !(e = add(out, WEFT_COST_OCS_PORT, r, L)) &&
            !(e = add(out, WEFT_COST_TRANSCEIVER, r, L)))
            e = add(out, WEFT_COST_FIBER, r, L);
        return e;
    }
    /* OCS <-> OCS */
    if (!(e = add(out, WEFT_COST_OCS_PORT, r, 2 * L)))
        e = add(out, WEFT_COST_FIBER, r, L);
    return e;
}

/* Whether a NIC node's connection to a peer of side s is network side. */
static bool network_side(side s)
{
    return s == S_NIC || s == S_SWITCH || s == S_OCS;
}

weft_err weft_cost_count(const weft_topo *t, weft_cost_bom *out, weft_diag *d)
{
    uint32_t n = weft_topo_num_nodes(t);
    weft_rat *fwd = weft__calloc(n ? n : 1, sizeof *fwd);
    weft_rat *rev = weft__calloc(n ? n : 1, sizeof *rev);
    uint32_t *touched = weft__calloc(n ? n : 1, sizeof *touched);
    bool *mark = weft__calloc(n ? n : 1, sizeof *mark);
    weft_err e = WEFT_OK;
    if (!fwd || !rev || !touched || !mark) {
        e = weft_diag_set(d, WEFT_ENOMEM,
                          "out of memory counting the parts of a fabric of %u "
                          "nodes",
                          n);
        goto out_free;
    }
    weft_cost_bom b;
    memset(&b, 0, sizeof b);
    b.ranks = weft_topo_num_ranks(t);
    /* Each unordered pair once, at its smaller node a: the links a -> b
     * (a's out-links) and b -> a (a's in-links) for b > a. */
    for (uint32_t a = 0; a < n && !e; a++) {
        weft_node_id na = {a};
        uint32_t nt = 0;
        /* dir 0: a's out-links into fwd; dir 1: a's in-links into rev. */
        for (int dir = 0; dir < 2 && !e; dir++) {
            uint32_t first = 0, count;
            const uint32_t *ins = NULL;
            if (dir == 0)
                weft_topo_out_links(t, na, &first, &count);
            else
                ins = weft_topo_in_links(t, na, &count);
            weft_rat *sum = dir == 0 ? fwd : rev;
            for (uint32_t i = 0; i < count && !e; i++) {
                weft_link_id l = {ins ? ins[i] : first + i};
                uint32_t peer = dir == 0 ? weft_topo_link_dst(t, l).v : weft_topo_link_src(t, l).v;
                if (peer <= a)
                    continue;
                if (!mark[peer]) {
                    mark[peer] = true;
                    fwd[peer] = rev[peer] = weft_rat_int(0);
                    touched[nt++] = peer;
                }
                e = weft_rat_add(sum[peer], weft_topo_link_bw(t, l), &sum[peer]);
            }
        }
        for (uint32_t k = 0; k < nt; k++) {
            uint32_t peer = touched[k];
            mark[peer] = false;
            if (e)
                continue;
            weft_rat R = weft_rat_cmp(fwd[peer], rev[peer]) >= 0 ? fwd[peer] : rev[peer];
            weft_cost_rate r = WEFT_COST_100G;
            uint64_t lanes = 0;
            weft_node_id np = {peer};
            if (!(e = classify(R, &r, &lanes)))
                e = count_pair(t, na, np, r, lanes, &b);
            /* A NIC node counts one NIC per lane of its network side. */
            side sa = side_of(t, na), sp = side_of(t, np);
            if (!e && sa == S_NIC && network_side(sp))
                e = add(&b, WEFT_COST_NIC, r, lanes);
            if (!e && sp == S_NIC && network_side(sa))
                e = add(&b, WEFT_COST_NIC, r, lanes);
        }
    }
    if (e)
        e = weft_diag_set(d, e, "counting the parts of the fabric: %s", weft_strerror(e));
    else
        *out = b;
out_free:
    weft__free(fwd);
    weft__free(rev);
    weft__free(touched);
    weft__free(mark);
    return e;
}

/* ---- Pricing -------------------------------------------------------------- */

static void note_missing(char *buf, size_t len, const char *key)
{
    size_t used = strlen(buf);
    if (used + strlen(key) + 6 >= len) {
        if (used + 5 < len && !strstr(buf, ", ..."))
            snprintf(buf + used, len - used, ", ...");
        return;
    }
    snprintf(buf + used, len - used, "%s%s", used ? ", " : "", key);
}

static weft_err total(const weft_cost_bom *b, const weft_cost_table *c, bool usd,
                      weft_cost_value *out, char *missing, size_t mlen)
{
    weft_rat sum = weft_rat_int(0);
    bool known = true;
    missing[0] = '\0';
    for (int p = 0; p < WEFT_COST_PARTS; p++) {
        for (int r = 0; r < WEFT_COST_RATES; r++) {
            uint64_t n = b->count[p][r];
            if (n == 0)
                continue;
            const weft_cost_value *v = usd ? &c->usd[p][r] : &c->watt[p][r];
            if (!v->known) {
                char key[64];
                key_text((weft_cost_part)p, (weft_cost_rate)r, usd, key, sizeof key);
                note_missing(missing, mlen, key);
                known = false;
                continue;
            }
            if (n > INT64_MAX)
                return WEFT_EOVERFLOW;
            weft_rat term;
            weft_err e = weft_rat_mul(v->v, weft_rat_int((int64_t)n), &term);
            if (!e)
                e = weft_rat_add(sum, term, &sum);
            if (e)
                return e;
        }
    }
    out->known = known;
    out->v = sum; /* unknown: the priced parts' sum, a lower bound */
    return WEFT_OK;
}

weft_err weft_cost_price(const weft_cost_bom *b, const weft_cost_table *c, weft_cost_totals *out,
                         weft_diag *d)
{
    weft_cost_totals r;
    memset(&r, 0, sizeof r);
    weft_err e = total(b, c, true, &r.usd, r.missing_usd, sizeof r.missing_usd);
    if (!e)
        e = total(b, c, false, &r.watt, r.missing_watt, sizeof r.missing_watt);
    if (e)
        return weft_diag_set(d, e, "the cost of the fabric does not fit an exact 64-bit fraction");
    *out = r;
    return WEFT_OK;
}
