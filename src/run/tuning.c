/* Tuning tables: storage, lookup and the fabric check (weft/tuning.h). The
 * text format is read and written in tuning_text.c; this file never
 * simulates (the run module must not: `weft tune` in the CLI does). */
#include "run/tuning_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "run/liveness.h"
#include "weft/synth.h"

/* ---- Candidates ---------------------------------------------------------- */

/* The candidates are the schedule registry's runtime list
 * (weft_sched_candidates, WEFT_SCHED_FOR_RUNTIME): rows with no parameter
 * to guess (rings:K only as rings:auto, the channel count the fabric
 * decides) and no composite (nccl builds one of the others, chosen for
 * 1 GiB whatever the size class), then optimal. Here they are
 * one list over every collective, in registry order. */
static size_t candidates(const char *list[64])
{
    size_t m = 0;
    for (size_t i = 0; i < weft_sched_count() && m < 64; i++) {
        weft_sched_info in;
        weft_sched_get(i, &in);
        /* rings:K is ranked as rings:auto, the fabric's channel count. */
        const char *name = strcmp(in.name, "rings:K") == 0 ? "rings:auto" : in.name;
        for (int c = 0; c < WEFT__COLL_COUNT; c++) {
            if (weft_tuning_candidate_supports(name, (weft_coll)c)) {
                list[m++] = name;
                break;
            }
        }
    }
    return m;
}

size_t weft_tuning_candidate_count(void)
{
    const char *list[64];
    return candidates(list);
}

const char *weft_tuning_candidate(size_t i)
{
    const char *list[64];
    size_t n = candidates(list);
    return i < n ? list[i] : NULL;
}

bool weft_tuning_candidate_supports(const char *name, weft_coll coll)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return false;
    const char *got[64];
    size_t k = weft_sched_candidates(coll, false, WEFT_SCHED_FOR_RUNTIME, got, 64);
    for (size_t q = 0; q < k; q++)
        if (strcmp(got[q], name) == 0)
            return true;
    return false;
}

/* A candidate is a name the runtime ranks for some collective. */
static bool is_candidate(const char *name)
{
    for (int c = 0; c < WEFT__COLL_COUNT; c++)
        if (weft_tuning_candidate_supports(name, (weft_coll)c))
            return true;
    return false;
}

weft_err weft_tuning_build(const weft_topo *t, const char *name, weft_coll coll, weft_rank root,
                           weft_plan **out, weft_diag *d)
{
    if (!is_candidate(name))
        return weft_diag_set(d, WEFT_ENOENT, "'%s' is not a tuning candidate", name);
    weft_sched_args a;
    weft_sched_args_init(&a, coll);
    a.root = root;
    return weft_sched_build(t, name, &a, out, d);
}

weft_err weft__tuning_text_hash(const void *obj, weft__tuning_writer w, uint64_t *out, weft_diag *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_err e = w(obj, f);
    if (fclose(f) != 0 && !e)
        e = WEFT_ENOMEM;
    if (!e)
        *out = weft__fnv64(WEFT__FNV_INIT, buf, len);
    free(buf); /* open_memstream's buffer comes from malloc */
    return e ? weft_diag_code(d, e) : WEFT_OK;
}

static weft_err write_topo(const void *t, FILE *f)
{
    return weft_topo_write(t, f);
}

weft_err weft_tuning_fabric_hash(const weft_topo *t, uint64_t *out, weft_diag *d)
{
    return weft__tuning_text_hash(t, write_topo, out, d);
}

/* ---- Tables ------------------------------------------------------------------ */

weft_err weft__tuning_alloc(const char *fabric, const char *sim, const char *name,
                            weft_tuning **out)
{
    weft_tuning *tt = weft__calloc(1, sizeof *tt);
    if (!tt)
        return WEFT_ENOMEM;
    tt->fabric = weft__strdup(fabric ? fabric : "-");
    tt->sim = weft__strdup(sim ? sim : "");
    tt->name = weft__strdup(name ? name : "<table>");
    if (!tt->fabric || !tt->sim || !tt->name) {
        weft_tuning_free(tt);
        return WEFT_ENOMEM;
    }
    tt->info.version = WEFT_TUNING_VERSION;
    tt->info.fabric = tt->fabric;
    tt->info.sim = tt->sim;
    tt->info.name = tt->name;
    *out = tt;
    return WEFT_OK;
}

weft_err weft_tuning_new(const weft_topo *t, const char *fabric, const char *sim, weft_tuning **out,
                         weft_diag *d)
{
    if ((fabric && strpbrk(fabric, "\r\n")) || (sim && strpbrk(sim, "\r\n")))
        return weft_diag_set(d, WEFT_EINVAL, "tuning: the fabric and sim notes must be one line");
    uint64_t h;
    weft_err e = weft_tuning_fabric_hash(t, &h, d);
    if (e)
        return e;
    weft_tuning *tt;
    if ((e = weft__tuning_alloc(fabric, sim, NULL, &tt)))
        return weft_diag_code(d, e);
    tt->info.ranks = weft_topo_num_ranks(t);
    tt->info.fabric_hash = h;
    *out = tt;
    return WEFT_OK;
}

static void entry_fini(tuning_entry *x)
{
    for (uint32_t i = 0; x->names && i < x->pub.n; i++)
        weft__free(x->names[i]);
    weft__free(x->names);
    weft__free(x->times);
}

void weft_tuning_free(weft_tuning *tt)
{
    if (!tt)
        return;
    for (uint32_t i = 0; i < tt->info.entries; i++)
        entry_fini(&tt->entries[i]);
    weft__free(tt->entries);
    weft__free(tt->fabric);
    weft__free(tt->sim);
    weft__free(tt->name);
    weft__free(tt);
}

/* The last entry of coll, or NULL. Entries are kept grouped by collective
 * (weft_coll order) and by size within one. */
static const tuning_entry *last_of(const weft_tuning *tt, weft_coll coll)
{
    const tuning_entry *last = NULL;
    for (uint32_t i = 0; i < tt->info.entries; i++)
        if (tt->entries[i].pub.coll == coll)
            last = &tt->entries[i];
    return last;
}

weft_err weft__tuning_check_entry(const weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                                  const char *const *names, const double *times, char *why,
                                  size_t cap)
{
    if ((unsigned)coll >= WEFT__COLL_COUNT) {
        snprintf(why, cap, "invalid collective %d", (int)coll);
        return WEFT_EINVAL;
    }
    if (bytes == 0 || (bytes & (bytes - 1))) {
        snprintf(why, cap, "size %llu is not a power of two", (unsigned long long)bytes);
        return WEFT_EINVAL;
    }
    const tuning_entry *last = last_of(tt, coll);
    if (last && last->pub.bytes >= bytes) {
        snprintf(why, cap, "size %llu of %s is not above the previous one, %llu",
                 (unsigned long long)bytes, weft_coll_name(coll),
                 (unsigned long long)last->pub.bytes);
        return WEFT_EINVAL;
    }
    if (n == 0) {
        snprintf(why, cap, "no candidate for %s at %llu B", weft_coll_name(coll),
                 (unsigned long long)bytes);
        return WEFT_EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!is_candidate(names[i])) {
            snprintf(why, cap, "unknown algorithm '%s'", names[i]);
            return WEFT_EINVAL;
        }
        if (!weft_tuning_candidate_supports(names[i], coll)) {
            snprintf(why, cap, "algorithm '%s' does not build %s", names[i], weft_coll_name(coll));
            return WEFT_EINVAL;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) {
                snprintf(why, cap, "algorithm '%s' appears twice", names[i]);
                return WEFT_EINVAL;
            }
        if (!isfinite(times[i]) || times[i] < 0) {
            snprintf(why, cap, "time of '%s' must be a finite number of seconds >= 0", names[i]);
            return WEFT_EINVAL;
        }
    }
    return WEFT_OK;
}

weft_err weft__tuning_append(weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                             const char *const *names, const double *times, uint32_t line)
{
    size_t cap = tt->cap;
    if (weft__grow((void **)&tt->entries, &cap, (size_t)tt->info.entries + 1, sizeof *tt->entries))
        return WEFT_ENOMEM;
    tt->cap = cap;
    tuning_entry x;
    memset(&x, 0, sizeof x);
    x.names = weft__calloc(n, sizeof *x.names);
    x.times = weft__malloc(n * sizeof *x.times);
    if (!x.names || !x.times)
        goto free_entry;
    x.pub.n = n;
    for (uint32_t i = 0; i < n; i++) {
        if (!(x.names[i] = weft__strdup(names[i])))
            goto free_entry;
        x.times[i] = times[i];
    }
    x.pub.coll = coll;
    x.pub.bytes = bytes;
    x.pub.line = line;
    /* Insert after the last entry of a collective <= coll. */
    uint32_t at = tt->info.entries;
    while (at > 0 && tt->entries[at - 1].pub.coll > coll)
        at--;
    memmove(&tt->entries[at + 1], &tt->entries[at], (tt->info.entries - at) * sizeof *tt->entries);
    tt->entries[at] = x;
    tt->info.entries++;
    /* Moving entries moved the arrays' owners: refresh every public view. */
    for (uint32_t i = 0; i < tt->info.entries; i++) {
        tt->entries[i].pub.names = (const char *const *)tt->entries[i].names;
        tt->entries[i].pub.times_s = tt->entries[i].times;
    }
    return WEFT_OK;
free_entry:
    entry_fini(&x);
    return WEFT_ENOMEM;
}

weft_err weft_tuning_add(weft_tuning *tt, weft_coll coll, uint64_t bytes, uint32_t n,
                         const char *const *names, const double *times_s, weft_diag *d)
{
    char why[160];
    if (weft__tuning_check_entry(tt, coll, bytes, n, names, times_s, why, sizeof why))
        return weft_diag_set(d, WEFT_EINVAL, "tuning: %s", why);
    /* Fastest first; a stable insertion sort keeps ties in the given order. */
    uint32_t *order = weft__malloc(n * sizeof *order);
    const char **sn = weft__malloc(n * sizeof *sn);
    double *st = weft__malloc(n * sizeof *st);
    weft_err e = WEFT_ENOMEM;
    if (!order || !sn || !st)
        goto free_sort;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;
        while (j > 0 && times_s[order[j - 1]] > times_s[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    for (uint32_t i = 0; i < n; i++) {
        sn[i] = names[order[i]];
        st[i] = times_s[order[i]];
    }
    e = weft__tuning_append(tt, coll, bytes, n, sn, st, 0);
free_sort:
    weft__free(order);
    weft__free(sn);
    weft__free(st);
    return e ? weft_diag_code(d, e) : WEFT_OK;
}

const weft_tuning_info *weft_tuning_get_info(const weft_tuning *tt)
{
    return &tt->info;
}

const weft_tuning_entry *weft_tuning_entry_get(const weft_tuning *tt, uint32_t i)
{
    return i < tt->info.entries ? &tt->entries[i].pub : NULL;
}

const weft_tuning_entry *weft_tuning_lookup(const weft_tuning *tt, weft_coll coll, uint64_t bytes)
{
    const weft_tuning_entry *best = NULL, *first = NULL;
    for (uint32_t i = 0; i < tt->info.entries; i++) {
        const weft_tuning_entry *x = &tt->entries[i].pub;
        if (x->coll != coll)
            continue;
        if (!first)
            first = x;
        if (x->bytes <= bytes)
            best = x;
    }
    return best ? best : first;
}

weft_err weft_tuning_check(const weft_tuning *tt, const weft_topo *t, const char *spec,
                           weft_diag *d)
{
    uint64_t h;
    weft_err e = weft_tuning_fabric_hash(t, &h, d);
    if (e)
        return e;
    uint32_t r = weft_topo_num_ranks(t);
    if (h == tt->info.fabric_hash && r == tt->info.ranks)
        return WEFT_OK;
    return weft_diag_set(d, WEFT_EINVAL,
                         "%s: the tuning table is for fabric %s (hash %016llx, %u ranks); %s has "
                         "hash %016llx (%u ranks); run weft tune %s",
                         tt->name, tt->fabric, (unsigned long long)tt->info.fabric_hash,
                         tt->info.ranks, spec ? spec : "the fabric", (unsigned long long)h, r,
                         spec ? spec : "on it");
}
