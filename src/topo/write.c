/* Writing a fabric as .topo text. See weft/topo.h for the contract and
 * docs/topo-format.md for the format.
 *
 * The output is canonical: the note as comments, nodes in id order, links in
 * id order with each pair of opposite links of equal bandwidth and latency
 * folded into one duplex line. Names are padded into columns (up to
 * NAME_PAD_MAX bytes, so one long name does not widen every line).
 *
 * Everything is checked before the first byte is written: a fabric built
 * through the API can hold names the format cannot (a blank, a '#', a line
 * over the limit); such a fabric gives WEFT_EINVAL and no output at all,
 * never a file that does not parse back. O(V + E log E) for the duplex
 * lookups, one fwrite per line.
 */
#include <stdio.h>
#include <string.h>

#include "topo/graph_internal.h"
#include "topo/parse.h"

#define NAME_PAD_MAX 24
/* Longest comment line written for the note ("# " included); longer note
 * lines continue on the next comment line. */
#define NOTE_CHUNK 1000
#define KIND_WIDTH 7 /* "compute" */

static const char *str(const weft_topo *t, uint32_t off)
{
    return t->strings + off;
}

/* The length of node v's line, or 0 when a name of it cannot be written. */
static size_t node_line_len(const weft_topo *t, uint32_t v, size_t pad)
{
    const char *name = str(t, t->node_name[v]);
    size_t n = strlen(name);
    if (!weft__topo_token_ok(name, n, false))
        return 0;
    size_t len = 5 + (n > pad ? n : pad) + 1 + KIND_WIDTH;
    if (t->node_host[v] != WEFT_NO_HOST) {
        const char *h = str(t, t->host_name[t->node_host[v]]);
        size_t hn = strlen(h);
        if (!weft__topo_token_ok(h, hn, false))
            return 0;
        len += 6 + hn;
    }
    for (uint32_t i = t->attr_start[v]; i < t->attr_start[v + 1]; i++) {
        const char *k = str(t, t->attr_key[i]), *val = str(t, t->attr_val[i]);
        size_t kn = strlen(k), vn = strlen(val);
        if (!weft__topo_token_ok(k, kn, true) || (vn && !weft__topo_token_ok(val, vn, false)))
            return 0;
        len += 1 + kn + 1 + vn;
    }
    return len;
}

static weft_err put(FILE *f, const char *s, size_t n)
{
    return fwrite(s, 1, n, f) == n ? WEFT_OK : WEFT_EIO;
}

/* Writes one line of the note as comment lines. Bytes a .topo line may not
 * hold (control bytes, invalid UTF-8) become '?': the note is for people,
 * and the output must parse. */
static weft_err write_note_line(FILE *f, const char *s, size_t n)
{
    char buf[NOTE_CHUNK + 8];
    size_t i = 0;
    do {
        size_t o = 0;
        buf[o++] = '#';
        if (n)
            buf[o++] = ' ';
        while (i < n && o < NOTE_CHUNK) {
            size_t w = n - i < NOTE_CHUNK - o ? n - i : NOTE_CHUNK - o;
            size_t good = weft__topo_check_bytes(s + i, w);
            memcpy(buf + o, s + i, good);
            o += good;
            if (good == w) {
                i += good;
                continue;
            }
            /* A sequence cut by the end of this chunk goes to the next. */
            if (w < n - i && good + 4 > w) {
                i += good;
                break;
            }
            buf[o++] = '?';
            i += good + 1;
        }
        buf[o++] = '\n';
        if (put(f, buf, o))
            return WEFT_EIO;
    } while (i < n);
    return WEFT_OK;
}

static size_t pad_to(char *buf, size_t o, const char *s, size_t width)
{
    size_t n = strlen(s);
    memcpy(buf + o, s, n);
    o += n;
    while (n < width) {
        buf[o++] = ' ';
        n++;
    }
    return o;
}

weft_err weft_topo_write(const weft_topo *t, FILE *f)
{
    size_t pad = 0;
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        size_t n = strlen(str(t, t->node_name[v]));
        if (n > pad)
            pad = n;
    }
    if (pad > NAME_PAD_MAX)
        pad = NAME_PAD_MAX;
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        size_t len = node_line_len(t, v, pad);
        if (len == 0 || len > WEFT__TOPO_LINE_MAX)
            return WEFT_EINVAL;
    }
    /* Node lines are at most WEFT__TOPO_LINE_MAX; link lines hold two names
     * and two numbers of at most ~45 bytes each. */
    char buf[WEFT__TOPO_LINE_MAX + 2];
    for (const char *s = t->note; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (write_note_line(f, s, n))
            return WEFT_EIO;
        s += n + (nl != NULL);
    }
    for (uint32_t v = 0; v < t->n_nodes; v++) {
        size_t o = 0;
        bool more = t->node_host[v] != WEFT_NO_HOST || t->attr_start[v] < t->attr_start[v + 1];
        memcpy(buf, "node ", 5);
        o = pad_to(buf, 5, str(t, t->node_name[v]), pad);
        buf[o++] = ' ';
        o = pad_to(buf, o, weft_node_kind_name((weft_node_kind)t->node_kind[v]),
                   more ? KIND_WIDTH : 0);
        if (t->node_host[v] != WEFT_NO_HOST) {
            memcpy(buf + o, " host=", 6);
            o = pad_to(buf, o + 6, str(t, t->host_name[t->node_host[v]]), 0);
        }
        for (uint32_t i = t->attr_start[v]; i < t->attr_start[v + 1]; i++) {
            buf[o++] = ' ';
            o = pad_to(buf, o, str(t, t->attr_key[i]), 0);
            buf[o++] = '=';
            o = pad_to(buf, o, str(t, t->attr_val[i]), 0);
        }
        buf[o++] = '\n';
        if (put(f, buf, o))
            return WEFT_EIO;
    }
    for (uint32_t l = 0; l < t->n_links; l++) {
        weft_node_id src = {t->link_src[l]}, dst = {t->link_dst[l]};
        weft_link_id r;
        bool twin =
            weft_topo_find_link(t, dst, src, &r) && weft_rat_eq(t->link_bw[r.v], t->link_bw[l]) &&
            weft_rat_eq(t->link_lat[r.v], t->link_lat[l]) && weft__topo_same_shaper(t, r.v, t, l);
        if (twin && src.v > dst.v)
            continue; /* written as the duplex of its twin */
        size_t o = pad_to(buf, 0, twin ? "duplex" : "link", 6);
        buf[o++] = ' ';
        o = pad_to(buf, o, str(t, t->node_name[src.v]), pad);
        buf[o++] = ' ';
        o = pad_to(buf, o, str(t, t->node_name[dst.v]), pad);
        buf[o++] = ' ';
        o += (size_t)weft_rat_format_exact(t->link_bw[l], buf + o, 64);
        memcpy(buf + o, "GB/s", 4);
        o += 4;
        if (!weft_rat_is_zero(t->link_lat[l])) {
            buf[o++] = ' ';
            o += (size_t)weft_rat_format_exact(t->link_lat[l], buf + o, 64);
            memcpy(buf + o, "ns", 2);
            o += 2;
        }
        weft_link_shaper sh;
        if (weft_topo_link_shaper(t, (weft_link_id){l}, &sh)) {
            o += (size_t)snprintf(buf + o, 40,
                                  " burst=%llu peak=", (unsigned long long)sh.burst_bytes);
            o += (size_t)weft_rat_format_exact(sh.peak_gbps, buf + o, 64);
            memcpy(buf + o, "GB/s", 4);
            o += 4;
        }
        buf[o++] = '\n';
        if (put(f, buf, o))
            return WEFT_EIO;
    }
    if (fflush(f) != 0 || ferror(f))
        return WEFT_EIO;
    return WEFT_OK;
}
