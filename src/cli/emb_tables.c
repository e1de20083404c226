/* The --tables grammar (cli/emb_tables.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/emb_tables.h"

/* A whole decimal number in [lo, hi] filling the len bytes at s; with
 * si, an optional K, M or G suffix (10^3, 10^6, 10^9). */
static bool parse_uint(const char *s, size_t len, bool si, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t mult = 1;
    if (si && len > 1) {
        char c = s[len - 1];
        mult = c == 'K' ? 1000 : c == 'M' ? 1000000 : c == 'G' ? 1000000000 : 1;
        if (mult != 1)
            len--;
    }
    if (len == 0 || len > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > hi / mult)
        return false;
    v *= mult;
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool cli_emb_milli_parse(const char *text, uint32_t *milli)
{
    const char *s = text;
    uint64_t whole = 0, frac = 0;
    unsigned digits = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        whole = whole * 10 + (uint64_t)(*s - '0');
        if (whole > 8)
            return false;
    }
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return false;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (++digits > 3)
                return false;
            frac = frac * 10 + (uint64_t)(*s - '0');
        }
    }
    for (; digits < 3; digits++)
        frac *= 10;
    uint64_t m = whole * 1000 + frac;
    if (*s || m > 8000)
        return false;
    *milli = (uint32_t)m;
    return true;
}

bool cli_emb_dtype_parse(const char *text, uint32_t *bytes)
{
    static const struct {
        const char *name;
        uint32_t bytes;
    } names[] = {{"fp32", 4}, {"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(text, names[i].name) == 0) {
            *bytes = names[i].bytes;
            return true;
        }
    uint64_t v;
    if (!parse_uint(text, strlen(text), false, 1, 8, &v))
        return false;
    *bytes = (uint32_t)v;
    return true;
}

bool cli_emb_sharding_parse(const char *text, weft_emb_table *t)
{
    static const struct {
        const char *name;
        weft_emb_sharding s;
    } names[] = {{"tw", WEFT_EMB_TW}, {"rw", WEFT_EMB_RW}, {"dp", WEFT_EMB_DP}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(text, names[i].name) == 0) {
            t->sharding = names[i].s;
            return true;
        }
    uint64_t k;
    if (strncmp(text, "cw:", 3) != 0 ||
        !parse_uint(text + 3, strlen(text + 3), false, 1, WEFT_EMB_MAX_DIM, &k))
        return false;
    t->sharding = WEFT_EMB_CW;
    t->col_shards = (uint32_t)k;
    return true;
}

/* One KEY=VALUE of a group (NUL-terminated copy). */
static bool parse_key(char *kv, weft_emb_table *t, char *why, size_t why_size)
{
    char *eq = strchr(kv, '=');
    if (!eq) {
        snprintf(why, why_size, "'%s' is not KEY=VALUE (pool, dtype, zipf or shard)", kv);
        return false;
    }
    *eq = 0;
    const char *v = eq + 1;
    uint64_t n;
    bool ok;
    if (strcmp(kv, "pool") == 0) {
        ok = parse_uint(v, strlen(v), false, 0, WEFT_EMB_MAX_POOLING, &n);
        if (ok)
            t->pooling = (uint32_t)n;
        else
            snprintf(why, why_size, "pool=%s: expected a whole number from 0 to %u", v,
                     WEFT_EMB_MAX_POOLING);
    } else if (strcmp(kv, "dtype") == 0) {
        ok = cli_emb_dtype_parse(v, &t->dtype_bytes);
        if (!ok)
            snprintf(why, why_size,
                     "dtype=%s: expected fp32, fp16, bf16, fp8, int8 or 1 to 8 "
                     "bytes",
                     v);
    } else if (strcmp(kv, "zipf") == 0) {
        ok = cli_emb_milli_parse(v, &t->zipf_milli);
        if (!ok)
            snprintf(why, why_size,
                     "zipf=%s: expected S from 0 to 8 with at most 3 decimals "
                     "(0: uniform)",
                     v);
    } else if (strcmp(kv, "shard") == 0) {
        ok = cli_emb_sharding_parse(v, t);
        if (!ok)
            snprintf(why, why_size, "shard=%s: expected tw, rw, dp or cw:K (K column shards)", v);
    } else {
        snprintf(why, why_size, "unknown key '%s' (pool, dtype, zipf or shard)", kv);
        ok = false;
    }
    return ok;
}

/* One group "[C*]ROWSxDIM{/K=V}" (a NUL-terminated copy) into t and *count. */
static bool parse_group(char *g, weft_emb_table *t, uint64_t *count, char *why, size_t why_size)
{
    char *slash = strchr(g, '/');
    char *keys = NULL;
    if (slash) {
        *slash = 0;
        keys = slash + 1;
    }
    char *star = strchr(g, '*'), *head = g;
    *count = 1;
    if (star) {
        *star = 0;
        if (!parse_uint(g, strlen(g), false, 1, WEFT_EMB_MAX_TABLES, count)) {
            snprintf(why, why_size, "count '%s': expected a whole number from 1 to %u", g,
                     WEFT_EMB_MAX_TABLES);
            return false;
        }
        head = star + 1;
    }
    char *x = strchr(head, 'x');
    if (!x) {
        snprintf(why, why_size, "'%s' is not ROWSxDIM", head);
        return false;
    }
    *x = 0;
    uint64_t rows, dim;
    if (!parse_uint(head, strlen(head), true, 1, WEFT_EMB_MAX_ROWS, &rows)) {
        snprintf(why, why_size,
                 "rows '%s': expected a whole number from 1 to 2^40 (K, M, G: "
                 "10^3, 10^6, 10^9)",
                 head);
        return false;
    }
    if (!parse_uint(x + 1, strlen(x + 1), false, 1, WEFT_EMB_MAX_DIM, &dim)) {
        snprintf(why, why_size, "dim '%s': expected a whole number from 1 to %u", x + 1,
                 WEFT_EMB_MAX_DIM);
        return false;
    }
    t->rows = rows;
    t->dim = (uint32_t)dim;
    while (keys) {
        char *next = strchr(keys, '/');
        if (next)
            *next++ = 0;
        if (!parse_key(keys, t, why, why_size))
            return false;
        keys = next;
    }
    return true;
}

bool cli_emb_tables_parse(const char *text, const weft_emb_table *def, weft_emb_table **out,
                          uint32_t *count, char *why, size_t why_size)
{
    char *copy = strdup(text);
    weft_emb_table *tabs = NULL;
    uint64_t n = 0;
    bool ok = copy != NULL;
    if (!ok)
        snprintf(why, why_size, "out of memory");
    char *g = copy;
    for (unsigned gi = 1; ok && g; gi++) {
        char *comma = strchr(g, ',');
        if (comma)
            *comma++ = 0;
        char shown[64];
        snprintf(shown, sizeof shown, "%s", g);
        weft_emb_table t = *def;
        uint64_t c;
        char reason[256];
        ok = parse_group(g, &t, &c, reason, sizeof reason);
        if (!ok) {
            snprintf(why, why_size, "group %u ('%s'): %s", gi, shown, reason);
            break;
        }
        if (n + c > WEFT_EMB_MAX_TABLES) {
            snprintf(why, why_size, "more than %u tables", WEFT_EMB_MAX_TABLES);
            ok = false;
            break;
        }
        weft_emb_table *grown = realloc(tabs, (size_t)(n + c) * sizeof *tabs);
        if (!grown) {
            snprintf(why, why_size, "out of memory");
            ok = false;
            break;
        }
        tabs = grown;
        for (uint64_t i = 0; i < c; i++)
            tabs[n++] = t;
        g = comma;
    }
    free(copy);
    if (!ok) {
        free(tabs);
        return false;
    }
    *out = tabs;
    *count = (uint32_t)n;
    return true;
}
