/* Which schedule a collective call runs (see weft_comm_choose in
 * weft/comm.h and docs/run.md).
 *
 * Three modes, fixed at init by the configuration:
 *  - a forced plan (plan_file): loaded, verified and scheduled once at init;
 *    a call of another collective or root is an error;
 *  - a forced algorithm (algo): weft_synth_classic builds it per
 *    (collective, root) on the fabric (or on "switch:SIZE"); a collective it
 *    does not build is an error;
 *  - tuned (a fabric and a tuning table, nothing forced): the table's entry
 *    for the collective at the size class's lower bound lists candidates
 *    fastest first by simulation (weft tune computed it, outside the
 *    runtime); a call runs the first whose chunks divide its count. The
 *    candidates are built on first use only. A collective the table has no
 *    entry for is ranked as below, and the report says so;
 *  - ranked (a fabric, nothing forced): every classic algorithm that builds
 *    the collective is a candidate; the candidates are ranked by
 *    weft_plan_shared_time (link sharing, pipelined with the executor's
 *    slices) at the size class's lower bound (2^k bytes, so the
 *    ranking does not depend on which size of the class came first), and a
 *    call runs the best one whose chunks divide its count. Without a fabric,
 *    and when no candidate fits, the built-in schedules run, and the report
 *    says so.
 * Plans are built and prepared (verified, scheduled) once per (collective,
 * root); rankings are kept per size class. The run module never calls the
 * simulator: the shared-link estimate of the plan module, or a table the
 * simulator wrote, are the only costs used. (The plan module's alpha-beta
 * model was used before; it lets concurrent transfers each have their whole
 * path, so it ranked two rings over the same links twice as fast as one.)
 * Every rank sees the same configuration (checked at init) and the same
 * calls, so every rank decides alike without talking.
 */
#include "run/select.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "run/comm_internal.h"
#include "run/exec_plan.h"
#include "run/liveness.h"
#include "weft/log.h"
#include "weft/synth.h"
#include "weft/tuning.h"

#define NCLASS 65 /* size classes: 0 bytes, then [2^k, 2^(k+1)) for k < 64 */

typedef struct cand {
    char *name; /* heap: a choice's algo points to it while the array grows */
    weft_plan *plan;
    weft_comm_plan *cp; /* prepared at first use */
} cand;

typedef struct rank_class {
    bool ranked;
    uint32_t *order; /* candidates by estimate, fastest first */
    double *est;     /* per candidate, seconds (INFINITY when unknown) */
    int64_t logged;  /* candidate last logged, -1 builtin, -2 none */
} rank_class;

/* Candidates for one (collective, root). */
typedef struct cand_set {
    weft_coll coll;
    uint32_t root;
    bool tuned; /* candidates come from the tuning table, built on first use */
    cand *cands;
    uint32_t ncands;
    size_t cap;
    rank_class cls[NCLASS];
} cand_set;

struct weft__select {
    weft_topo *topo; /* NULL: no fabric (and no algorithm forced) */
    char *fabric;    /* its spec or path as given, for messages (NULL: none) */
    char *algo;      /* forced algorithm or NULL */
    weft_plan *plan; /* forced plan or NULL */
    weft_comm_plan *plan_cp;
    char *plan_name;     /* the plan's path as given (whole: messages name it) */
    weft_tuning *tuning; /* NULL: rank by the shared-link estimate */
    char *tuning_name;   /* the tuning table's path as given */
    cand_set *sets;
    size_t nsets, cap;
    int64_t logged[WEFT__COLL_COUNT][NCLASS]; /* builtin/forced plan: 1 once logged */
    bool logged_v;                            /* alltoallv's forced plan logged */
    /* Relayed broadcasts (config relay_min): the communicator's hosts as a
     * fabric, and per root the relay:auto plan, built on first use. */
    weft_topo *relay_topo;
    weft_plan **relay_plan;
    weft_comm_plan **relay_cp;
    uint32_t relay_n;
    /* Held by weft__select_pick and weft__select_alltoallv: the interposition
     * library decides a non-blocking call (weft_comm_choose) on the
     * program's thread while its progress thread runs an earlier call on
     * the same communicator, whose own pick reads and fills these caches. */
    pthread_mutex_t lock;
};

static void set_fini(cand_set *s)
{
    for (uint32_t i = 0; i < s->ncands; i++) {
        weft__free(s->cands[i].name);
        weft_comm_plan_free(s->cands[i].cp);
        weft_plan_free(s->cands[i].plan);
    }
    weft__free(s->cands);
    for (int k = 0; k < NCLASS; k++) {
        weft__free(s->cls[k].order);
        weft__free(s->cls[k].est);
    }
}

void weft__select_free(weft__select *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nsets; i++)
        set_fini(&s->sets[i]);
    weft__free(s->sets);
    for (uint32_t r = 0; r < s->relay_n; r++) {
        weft_comm_plan_free(s->relay_cp[r]);
        weft_plan_free(s->relay_plan[r]);
    }
    weft__free(s->relay_cp);
    weft__free(s->relay_plan);
    weft_topo_free(s->relay_topo);
    weft_comm_plan_free(s->plan_cp);
    weft_plan_free(s->plan);
    weft_topo_free(s->topo);
    weft_tuning_free(s->tuning);
    weft__free(s->algo);
    weft__free(s->fabric);
    weft__free(s->plan_name);
    weft__free(s->tuning_name);
    pthread_mutex_destroy(&s->lock);
    weft__free(s);
}

/* A heap copy of name in *dst, the whole of it (messages name whole paths);
 * WEFT_ENOMEM, with *dst NULL, when it cannot be allocated. */
static weft_err copy_name(char **dst, const char *name, weft_diag *d)
{
    if (!(*dst = weft__strdup(name)))
        return weft_diag_code(d, WEFT_ENOMEM);
    return WEFT_OK;
}

/* Hash input for the agreement: the canonical text of what f writes. */
typedef weft_err (*writer)(const void *obj, FILE *f);
static weft_err write_topo(const void *t, FILE *f)
{
    return weft_topo_write(t, f);
}
static weft_err write_plan(const void *p, FILE *f)
{
    return weft_plan_write(p, f);
}
static weft_err write_tuning(const void *tt, FILE *f)
{
    return weft_tuning_write(tt, f);
}

static weft_err text_hash(const void *obj, writer w, uint64_t *out, weft_diag *d)
{
    *out = 0;
    if (!obj)
        return WEFT_OK;
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

/* Loads what cfg names; no communication. */
static weft_err load(weft__select *s, weft_comm *c, const weft_comm_config *cfg, weft_diag *d)
{
    weft_err e;
    bool has_fabric = cfg->fabric && *cfg->fabric, has_algo = cfg->algo && *cfg->algo;
    bool has_plan = cfg->plan_file && *cfg->plan_file;
    if (has_algo && has_plan)
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: both an algorithm (WEFT_ALGO=%s) and a plan (WEFT_PLAN=%s) are "
                             "forced; give one",
                             cfg->algo, cfg->plan_file);
    if (has_fabric) {
        e = weft_topo_from_spec(cfg->fabric, NULL, &s->topo, d);
        if (!e)
            e = copy_name(&s->fabric, cfg->fabric, d);
        if (e)
            return e;
    } else if (has_algo) {
        char spec[32];
        snprintf(spec, sizeof spec, "switch:%u", c->size);
        e = weft_topo_preset(spec, &s->topo, d);
        if (!e)
            e = copy_name(&s->fabric, spec, d);
        if (e)
            return e;
    }
    if (s->topo && weft_topo_num_ranks(s->topo) != c->size)
        return weft_diag_set(d, WEFT_EINVAL,
                             "comm: the fabric %s (WEFT_FABRIC) has %u ranks, the communicator %u",
                             s->fabric, weft_topo_num_ranks(s->topo), c->size);
    if (has_algo) {
        /* A misspelt name fails init, not the first call (which a program
         * may reach after minutes of other work). */
        bool known = false;
        for (int k = 0; k < WEFT__COLL_COUNT; k++)
            known = known || weft_classic_supports(cfg->algo, (weft_coll)k);
        if (!known)
            return weft_diag_set(d, WEFT_ENOENT,
                                 "comm: unknown algorithm '%s' (WEFT_ALGO; weft plan --list lists "
                                 "them)",
                                 cfg->algo);
        if (!(s->algo = weft__strdup(cfg->algo)))
            return weft_diag_code(d, WEFT_ENOMEM);
    }
    if (has_plan) {
        e = copy_name(&s->plan_name, cfg->plan_file, d);
        if (!e)
            e = weft_plan_load_file(cfg->plan_file, &s->plan, d);
        if (e)
            return e;
        const weft_plan_info *info = weft_plan_get_info(s->plan);
        if (info->nranks != c->size)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: the plan %s (WEFT_PLAN) is for %u ranks, the communicator "
                                 "has %u",
                                 s->plan_name, info->nranks, c->size);
        e = weft_comm_plan_new(c, s->plan, &s->plan_cp, d);
        if (e)
            return e;
    }
    if (cfg->tuning && *cfg->tuning) {
        if (has_algo || has_plan)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: a tuning table (WEFT_TUNING=%s) and a forced %s (%s=%s) "
                                 "exclude each other; give one",
                                 cfg->tuning, has_algo ? "algorithm" : "plan",
                                 has_algo ? "WEFT_ALGO" : "WEFT_PLAN",
                                 has_algo ? cfg->algo : cfg->plan_file);
        if (!has_fabric)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: the tuning table %s (WEFT_TUNING) needs the fabric it was "
                                 "made for (WEFT_FABRIC)",
                                 cfg->tuning);
        e = copy_name(&s->tuning_name, cfg->tuning, d);
        if (!e)
            e = weft_tuning_load_file(cfg->tuning, &s->tuning, d);
        if (!e)
            e = weft_tuning_check(s->tuning, s->topo, s->fabric, d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

weft_err weft__select_init(weft_comm *c, const weft_comm_config *cfg, weft_diag *d)
{
    weft__select *s = weft__calloc(1, sizeof *s);
    if (!s)
        return weft_diag_code(d, WEFT_ENOMEM);
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        weft__free(s);
        return weft_diag_set(d, WEFT_ENOMEM, "comm: cannot make the selection's lock");
    }
    weft_err e = load(s, c, cfg, d);
    /* Agreement even when this rank failed to load would leave the others
     * waiting until it closes its bootstrap; they then fail with EPEER. */
    uint64_t h[4];
    if (!e)
        e = text_hash(cfg->fabric && *cfg->fabric ? s->topo : NULL, write_topo, &h[0], d);
    if (!e)
        e = text_hash(s->plan, write_plan, &h[2], d);
    if (!e)
        e = text_hash(s->tuning, write_tuning, &h[3], d);
    h[1] = s->algo ? weft__fnv64(WEFT__FNV_INIT, s->algo, strlen(s->algo) + 1) : 0;
    if (!e)
        e = weft_comm_agree(c, "the fabric (WEFT_FABRIC)", &h[0], sizeof h[0], d);
    if (!e)
        e = weft_comm_agree(c, "the algorithm (WEFT_ALGO)", &h[1], sizeof h[1], d);
    if (!e)
        e = weft_comm_agree(c, "the plan (WEFT_PLAN)", &h[2], sizeof h[2], d);
    if (!e)
        e = weft_comm_agree(c, "the tuning table (WEFT_TUNING)", &h[3], sizeof h[3], d);
    if (e) {
        weft__select_free(s);
        return e;
    }
    c->sel = s;
    return WEFT_OK;
}

/* The size in bytes of a call (DESIGN.md: allgather the total output,
 * reducescatter the total input, alltoall one rank's input). */
static uint64_t call_bytes(weft_comm *c, weft_coll coll, size_t count, size_t es)
{
    uint64_t b = (uint64_t)count * es;
    if (coll == WEFT_COLL_ALLGATHER || coll == WEFT_COLL_REDUCESCATTER ||
        coll == WEFT_COLL_ALLTOALL)
        b *= c->size;
    return b;
}

static int size_class(uint64_t bytes)
{
    return bytes ? 64 - __builtin_clzll(bytes) : 0;
}

/* Builds the candidates of (coll, root): the forced algorithm alone, or
 * every classic algorithm (without parameters) that builds coll on the
 * fabric. A forced algorithm that cannot be built is an error; a ranked
 * candidate that cannot is left out. */
static weft_err get_set(weft__select *s, weft_coll coll, uint32_t root, cand_set **out,
                        weft_diag *d)
{
    for (size_t i = 0; i < s->nsets; i++)
        if (s->sets[i].coll == coll && s->sets[i].root == root) {
            *out = &s->sets[i];
            return WEFT_OK;
        }
    if (weft__grow((void **)&s->sets, &s->cap, s->nsets + 1, sizeof *s->sets))
        return weft_diag_code(d, WEFT_ENOMEM);
    cand_set *set = &s->sets[s->nsets];
    memset(set, 0, sizeof *set);
    set->coll = coll;
    set->root = root;
    if (s->tuning && weft_tuning_lookup(s->tuning, coll, 0)) {
        set->tuned = true;
        goto done;
    }
    /* The registry's runtime candidates (weft_sched_candidates), but
     * optimal: its tree packing takes seconds on large fabrics, too long
     * for a communicator's first call; weft tune ranks it into a table. */
    const char *names[64];
    size_t n = s->algo ? 1 : weft_sched_candidates(coll, false, WEFT_SCHED_FOR_RUNTIME, names, 64);
    weft_err e = WEFT_OK;
    if (!(set->cands = weft__calloc(n ? n : 1, sizeof *set->cands)))
        return weft_diag_code(d, WEFT_ENOMEM);
    set->cap = n;
    for (size_t i = 0; i < n && !e; i++) {
        const char *name = s->algo ? s->algo : names[i];
        if (!s->algo && strcmp(name, "optimal") == 0)
            continue;
        weft_diag ld;
        weft_diag_clear(&ld);
        weft_plan *p = NULL;
        weft_err be = weft_synth_classic(s->topo, name, coll, (weft_rank){root}, &p, &ld);
        if (be == WEFT_ENOMEM) {
            e = weft_diag_code(d, be);
        } else if (be && s->algo) {
            e = weft_diag_set(d, be, "comm: algorithm %s (WEFT_ALGO) for %s on %s: %s", name,
                              weft_coll_name(coll), s->fabric, ld.msg);
        } else if (!be) {
            cand *k = &set->cands[set->ncands];
            if ((e = copy_name(&k->name, name, d))) {
                weft_plan_free(p);
                break;
            }
            set->ncands++;
            k->plan = p;
        }
    }
    if (e) {
        set_fini(set);
        return e;
    }
done:
    s->nsets++;
    for (int k = 0; k < NCLASS; k++)
        set->cls[k].logged = -2;
    *out = set;
    return WEFT_OK;
}

/* Orders the candidates by their shared-link estimate at `bytes`
 * (weft_plan_shared_time with the slices the executor would cut each
 * plan's chunks into; weft_plan_shared_before's order, then the classic
 * list's). A candidate the estimate fails on goes last. */
static weft_err rank_set(weft__select *s, cand_set *set, rank_class *rc, uint64_t bytes,
                         weft_diag *d)
{
    rc->order = weft__malloc(((size_t)set->ncands + 1) * sizeof *rc->order);
    rc->est = weft__malloc(((size_t)set->ncands + 1) * sizeof *rc->est);
    weft_plan_shared *est = weft__malloc(((size_t)set->ncands + 1) * sizeof *est);
    weft_err e = WEFT_OK;
    if (!rc->order || !rc->est || !est) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto fail;
    }
    for (uint32_t i = 0; i < set->ncands; i++) {
        const weft_plan *p = set->cands[i].plan;
        weft_plan_shared_opts o;
        weft_plan_shared_opts_exec(&o, p, (double)bytes);
        e = weft_plan_shared_time(p, s->topo, (double)bytes, &o, &est[i], NULL);
        if (e == WEFT_ENOMEM) {
            e = weft_diag_code(d, e);
            goto fail;
        }
        if (e) {
            memset(&est[i], 0, sizeof est[i]);
            est[i].seconds = INFINITY;
            est[i].steps = UINT32_MAX;
            e = WEFT_OK;
        }
        rc->est[i] = est[i].seconds;
        /* Insertion sort, stable: equal keys keep the classic list's order. */
        uint32_t j = i;
        while (j > 0 && weft_plan_shared_before(&est[i], &est[rc->order[j - 1]])) {
            rc->order[j] = rc->order[j - 1];
            j--;
        }
        rc->order[j] = i;
    }
    weft__free(est);
    rc->ranked = true;
    return WEFT_OK;
fail:
    weft__free(est);
    weft__free(rc->order);
    weft__free(rc->est);
    rc->order = NULL;
    rc->est = NULL;
    return e;
}

static void fill_choice(weft_comm_choice *ch, weft_choice_source src, const char *algo, double est,
                        uint64_t bytes)
{
    ch->source = src;
    ch->algo = algo;
    ch->estimate_s = est;
    ch->bytes = bytes;
    ch->reason[0] = '\0';
}

static void log_choice(weft_coll coll, const weft_comm_choice *ch)
{
    weft_log(WEFT_LOG_INFO, "run", "%s %llu B: %s (%s)", weft_coll_name(coll),
             (unsigned long long)ch->bytes, ch->algo, ch->reason);
}

static weft_err prepare(weft_comm *c, cand *k, weft_comm_plan **cp, weft_diag *d)
{
    if (!k->cp) {
        weft_err e = weft_comm_plan_new(c, k->plan, &k->cp, d);
        if (e)
            return e;
    }
    *cp = k->cp;
    return WEFT_OK;
}

/* The candidate `name` of a tuned set, built on first use. The table was
 * made for this very fabric (checked at init), so a candidate it lists
 * that does not build is an error, never skipped. */
static weft_err tuned_cand(weft__select *s, cand_set *set, const weft_tuning_entry *x,
                           const char *name, uint32_t *out, weft_diag *d)
{
    for (uint32_t i = 0; i < set->ncands; i++)
        if (strcmp(set->cands[i].name, name) == 0) {
            *out = i;
            return WEFT_OK;
        }
    if (weft__grow((void **)&set->cands, &set->cap, (size_t)set->ncands + 1, sizeof *set->cands))
        return weft_diag_code(d, WEFT_ENOMEM);
    weft_diag ld;
    weft_diag_clear(&ld);
    weft_plan *p = NULL;
    weft_err e = weft_tuning_build(s->topo, name, set->coll, (weft_rank){set->root}, &p, &ld);
    if (e == WEFT_ENOMEM)
        return weft_diag_code(d, e);
    if (e)
        return weft_diag_set(d, e, "comm: %s of the tuning table %s:%u for %s (root %u) on %s: %s",
                             name, s->tuning_name, x->line, weft_coll_name(set->coll), set->root,
                             s->fabric, ld.msg);
    cand *k = &set->cands[set->ncands];
    memset(k, 0, sizeof *k);
    if ((e = copy_name(&k->name, name, d))) {
        weft_plan_free(p);
        return e;
    }
    k->plan = p;
    *out = set->ncands++;
    return WEFT_OK;
}

/* A call of a collective the tuning table ranks: the table's fastest
 * candidate whose chunks divide count. */
static weft_err pick_tuned(weft_comm *c, weft__select *s, cand_set *set, size_t count,
                           uint64_t bytes, int k, weft_comm_choice *ch, weft_comm_plan **cp,
                           weft_diag *d)
{
    uint64_t at = k ? 1ull << (k - 1) : 0;
    const weft_tuning_entry *x = weft_tuning_lookup(s->tuning, set->coll, at);
    int64_t pick = -1;
    uint32_t pos = 0, idx = 0;
    for (; pos < x->n; pos++) {
        weft_err e = tuned_cand(s, set, x, x->names[pos], &idx, d);
        if (e)
            return e;
        if (count % weft_plan_get_info(set->cands[idx].plan)->chunks == 0) {
            pick = idx;
            break;
        }
    }
    if (pick < 0) {
        fill_choice(ch, WEFT_CHOICE_BUILTIN, "builtin", 0, bytes);
        snprintf(ch->reason, sizeof ch->reason,
                 "count %zu is not a multiple of the chunks of any of the %u plans of the "
                 "tuning table %s:%u; built-in schedule",
                 count, x->n, s->tuning_name, x->line);
    } else {
        fill_choice(ch, WEFT_CHOICE_TUNED, set->cands[pick].name, x->times_s[pos], bytes);
        int len = snprintf(ch->reason, sizeof ch->reason,
                           "fastest of %u by simulation (table %s:%u) on %s at %llu B: %.3g us",
                           x->n, s->tuning_name, x->line, s->fabric, (unsigned long long)x->bytes,
                           x->times_s[pos] * 1e6);
        if (pos > 0 && len > 0 && (size_t)len < sizeof ch->reason)
            len += snprintf(ch->reason + len, sizeof ch->reason - (size_t)len,
                            "; %u faster ones do not divide count %zu", pos, count);
        if (pos + 1 < x->n && len > 0 && (size_t)len < sizeof ch->reason)
            snprintf(ch->reason + len, sizeof ch->reason - (size_t)len, "; next %s %.3g us",
                     x->names[pos + 1], x->times_s[pos + 1] * 1e6);
    }
    rank_class *rc = &set->cls[k];
    if (rc->logged != pick)
        log_choice(set->coll, ch);
    rc->logged = pick;
    if (pick >= 0)
        return prepare(c, &set->cands[pick], cp, d);
    return WEFT_OK;
}

/* True when a broadcast of `bytes` from root relays (config relay_min):
 * its ranks span several hosts and the root has a host-mate. */
static bool relay_applies(const weft_comm *c, uint32_t root, uint64_t bytes)
{
    if (!c->relay_min || bytes < c->relay_min)
        return false;
    bool mate = false, other = false;
    for (uint32_t r = 0; r < c->size; r++) {
        if (r == root)
            continue;
        if (c->host_first[r] == c->host_first[root])
            mate = true;
        else
            other = true;
    }
    return mate && other;
}

/* The communicator's hosts as a fabric for the synthesiser: rank r on host
 * host_first[r], every rank on one switch (relay:auto needs only the
 * hosts). */
static weft_err relay_topo(weft_comm *c, weft_topo **out, weft_diag *d)
{
    size_t cap = (size_t)c->size * 64 + 32, at = 0;
    char *text = weft__malloc(cap);
    if (!text)
        return weft_diag_code(d, WEFT_ENOMEM);
    for (uint32_t r = 0; r < c->size; r++)
        at += (size_t)snprintf(text + at, cap - at, "node r%u compute host=%u\n", r,
                               c->host_first[r]);
    at += (size_t)snprintf(text + at, cap - at, "node sw switch\n");
    for (uint32_t r = 0; r < c->size; r++)
        at += (size_t)snprintf(text + at, cap - at, "duplex r%u sw 1GB/s\n", r);
    weft_err e = weft_topo_parse(text, at, "the communicator's hosts", out, d);
    weft__free(text);
    return e;
}

/* A broadcast that relays (relay_applies): relay:auto for its root, built
 * and prepared on first use; *cp stays NULL (the built-in chain) when the
 * count is not a multiple of the plan's chunks. */
static weft_err relay_pick(weft_comm *c, weft__select *s, uint32_t root, size_t count,
                           uint64_t bytes, weft_comm_choice *ch, weft_comm_plan **cp, weft_diag *d)
{
    weft_err e;
    if (!s->relay_topo && (e = relay_topo(c, &s->relay_topo, d)))
        return e;
    if (!s->relay_plan) {
        s->relay_plan = weft__calloc(c->size, sizeof *s->relay_plan);
        s->relay_cp = weft__calloc(c->size, sizeof *s->relay_cp);
        if (!s->relay_plan || !s->relay_cp) {
            weft__free(s->relay_plan);
            weft__free(s->relay_cp);
            s->relay_plan = NULL;
            s->relay_cp = NULL;
            return weft_diag_code(d, WEFT_ENOMEM);
        }
        s->relay_n = c->size;
    }
    if (!s->relay_plan[root] &&
        (e = weft_synth_classic(s->relay_topo, "relay:auto", WEFT_COLL_BROADCAST, (weft_rank){root},
                                &s->relay_plan[root], d)))
        return e;
    uint32_t chunks = weft_plan_get_info(s->relay_plan[root])->chunks;
    if (count % chunks) {
        fill_choice(ch, WEFT_CHOICE_BUILTIN, "builtin", 0, bytes);
        snprintf(ch->reason, sizeof ch->reason,
                 "count %zu is not a multiple of the %u chunks of relay:auto (WEFT_RELAY); "
                 "built-in schedule",
                 count, chunks);
        return WEFT_OK;
    }
    if (!s->relay_cp[root] &&
        (e = weft_comm_plan_new(c, s->relay_plan[root], &s->relay_cp[root], d)))
        return e;
    fill_choice(ch, WEFT_CHOICE_RELAY, "relay:auto", 0, bytes);
    snprintf(ch->reason, sizeof ch->reason,
             "relayed through the root's host-mates: %u ranks, at least %llu B (WEFT_RELAY)",
             chunks, (unsigned long long)c->relay_min);
    *cp = s->relay_cp[root];
    return WEFT_OK;
}

/* weft__select_pick under s->lock. */
static weft_err pick_locked(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                            uint32_t root, weft_comm_choice *out, weft_comm_plan **cp, weft_diag *d)
{
    weft__select *s = c->sel;
    weft_comm_choice tmp, *ch = out ? out : &tmp;
    size_t es = weft_dtype_size(dtype);
    *cp = NULL;
    if ((unsigned)coll >= WEFT__COLL_COUNT)
        return weft_diag_set(d, WEFT_EINVAL, "comm: invalid collective %d", (int)coll);
    if (!es)
        return weft_diag_set(d, WEFT_EINVAL, "comm: invalid dtype %d", (int)dtype);
    if (!weft_coll_has_root(coll))
        root = 0;
    if (root >= c->size)
        return weft_diag_set(d, WEFT_EINVAL, "comm: root %u is not in 0 .. %u", root, c->size - 1);
    uint64_t bytes = call_bytes(c, coll, count, es);
    int k = size_class(bytes);
    if (s->plan) {
        const weft_plan_info *info = weft_plan_get_info(s->plan);
        if (info->coll != coll)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: the plan %s (WEFT_PLAN) is for %s; it cannot run %s",
                                 s->plan_name, weft_coll_name(info->coll), weft_coll_name(coll));
        if (info->root.v != root)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: the plan %s (WEFT_PLAN) has root %u; the call's root is %u",
                                 s->plan_name, info->root.v, root);
        if (weft_plan_traffic(s->plan))
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: the plan %s (WEFT_PLAN) is an alltoallv plan (a traffic "
                                 "matrix): it runs alltoallv calls, not alltoall",
                                 s->plan_name);
        if (count % info->chunks)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: count %zu is not a multiple of the %u chunks of the plan "
                                 "%s (WEFT_PLAN)",
                                 count, info->chunks, s->plan_name);
        fill_choice(ch, WEFT_CHOICE_PLAN, s->plan_name, 0, bytes);
        snprintf(ch->reason, sizeof ch->reason, "forced by WEFT_PLAN");
        if (!s->logged[coll][k])
            log_choice(coll, ch);
        s->logged[coll][k] = 1;
        *cp = s->plan_cp;
        return WEFT_OK;
    }
    if (!s->topo && coll == WEFT_COLL_BROADCAST && relay_applies(c, root, bytes)) {
        weft_err e = relay_pick(c, s, root, count, bytes, ch, cp, d);
        if (e)
            return e;
        /* Logged once per size class and outcome (relayed or built-in). */
        int64_t mark = *cp ? 2 : 3;
        if (s->logged[coll][k] != mark)
            log_choice(coll, ch);
        s->logged[coll][k] = mark;
        return WEFT_OK;
    }
    if (!s->topo) {
        fill_choice(ch, WEFT_CHOICE_BUILTIN, "builtin", 0, bytes);
        snprintf(ch->reason, sizeof ch->reason, "no fabric configured (WEFT_FABRIC)");
        if (!s->logged[coll][k])
            log_choice(coll, ch);
        s->logged[coll][k] = 1;
        return WEFT_OK;
    }
    cand_set *set = NULL;
    weft_err e = get_set(s, coll, root, &set, d);
    if (e)
        return e;
    if (set->tuned)
        return pick_tuned(c, s, set, count, bytes, k, ch, cp, d);
    rank_class *rc = &set->cls[k];
    uint64_t at = k ? 1ull << (k - 1) : 0; /* the class's lower bound */
    if (!rc->ranked && (e = rank_set(s, set, rc, at, d)))
        return e;
    int64_t pick = -1;
    uint32_t pos = 0;
    for (; pos < set->ncands; pos++) {
        const weft_plan_info *info = weft_plan_get_info(set->cands[rc->order[pos]].plan);
        if (count % info->chunks == 0) {
            pick = rc->order[pos];
            break;
        }
    }
    if (s->algo) {
        const weft_plan_info *info = weft_plan_get_info(set->cands[0].plan);
        if (pick < 0)
            return weft_diag_set(d, WEFT_EINVAL,
                                 "comm: count %zu is not a multiple of the %u chunks of "
                                 "algorithm %s (WEFT_ALGO) for %s on %s",
                                 count, info->chunks, s->algo, weft_coll_name(coll), s->fabric);
        fill_choice(ch, WEFT_CHOICE_ALGO, s->algo, rc->est[0], bytes);
        snprintf(ch->reason, sizeof ch->reason, "forced by WEFT_ALGO, on %s", s->fabric);
    } else if (pick < 0) {
        fill_choice(ch, WEFT_CHOICE_BUILTIN, "builtin", 0, bytes);
        if (set->ncands == 0)
            snprintf(ch->reason, sizeof ch->reason,
                     "no classic algorithm builds %s on %s; built-in schedule",
                     weft_coll_name(coll), s->fabric);
        else
            snprintf(ch->reason, sizeof ch->reason,
                     "count %zu is not a multiple of the chunks of any of the %u classic plans "
                     "on %s; built-in schedule",
                     count, set->ncands, s->fabric);
    } else {
        cand *best = &set->cands[pick];
        fill_choice(ch, WEFT_CHOICE_RANKED, best->name, rc->est[pick], bytes);
        int len = snprintf(ch->reason, sizeof ch->reason,
                           "%sfastest of %u by the shared-link estimate on %s at %llu B: %.3g us",
                           s->tuning ? "not in the tuning table; " : "", set->ncands, s->fabric,
                           (unsigned long long)at, rc->est[pick] * 1e6);
        if (pos > 0 && len > 0 && (size_t)len < sizeof ch->reason)
            len += snprintf(ch->reason + len, sizeof ch->reason - (size_t)len,
                            "; %u faster ones do not divide count %zu", pos, count);
        if (pos + 1 < set->ncands && len > 0 && (size_t)len < sizeof ch->reason) {
            uint32_t nx = rc->order[pos + 1];
            snprintf(ch->reason + len, sizeof ch->reason - (size_t)len, "; next %s %.3g us",
                     set->cands[nx].name, rc->est[nx] * 1e6);
        }
    }
    if (rc->logged != pick)
        log_choice(coll, ch);
    rc->logged = pick;
    if (pick >= 0)
        return prepare(c, &set->cands[pick], cp, d);
    return WEFT_OK;
}

bool weft__select_takes_all(const weft_comm *c)
{
    const weft__select *s = c->sel;
    return !s->plan && !s->algo && !s->tuning;
}

weft_err weft__select_pick(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                           uint32_t root, weft_comm_choice *out, weft_comm_plan **cp, weft_diag *d)
{
    pthread_mutex_lock(&c->sel->lock);
    weft_err e = pick_locked(c, coll, count, dtype, root, out, cp, d);
    pthread_mutex_unlock(&c->sel->lock);
    return e;
}

weft_comm_plan *weft__select_alltoallv(weft_comm *c, const weft_plan **plan, const char **name)
{
    weft__select *s = c->sel;
    if (!s->plan || !weft_plan_traffic(s->plan))
        return NULL;
    pthread_mutex_lock(&s->lock);
    if (!s->logged_v && c->rank == 0) /* every rank runs it alike: rank 0 says so */
        weft_log(WEFT_LOG_INFO, "run",
                 "alltoallv: %s (forced by WEFT_PLAN; the call's counts must be its traffic "
                 "matrix)",
                 s->plan_name);
    s->logged_v = true;
    pthread_mutex_unlock(&s->lock);
    *plan = s->plan;
    *name = s->plan_name;
    return s->plan_cp;
}

weft_err weft_comm_choose(weft_comm *c, weft_coll coll, size_t count, weft_dtype dtype,
                          uint32_t root, weft_comm_choice *out, weft_diag *d)
{
    weft_comm_plan *cp;
    return weft__select_pick(c, coll, count, dtype, root, out, &cp, d);
}

weft_err weft__select_run(weft_comm *c, weft_comm_plan *cp, weft_coll coll, const void *sendbuf,
                          void *recvbuf, size_t count, weft_dtype dtype, weft_redop op,
                          weft_diag *d)
{
    void *scratch = NULL;
    if (coll == WEFT_COLL_REDUCE && !recvbuf && count) {
        if (!(scratch = weft__malloc(count * weft_dtype_size(dtype))))
            return weft_diag_code(d, WEFT_ENOMEM);
        recvbuf = scratch;
    }
    (void)c;
    weft_err e = weft__comm_plan_run(cp, sendbuf, recvbuf, count, dtype, op, d);
    weft__free(scratch);
    return e;
}
