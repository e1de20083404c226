/* weft_comm_alloc's segments and the shared-buffer control pages (see
 * region.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/comm_fail.h"
#include "run/comm_internal.h"
#include "run/liveness.h"
#include "run/p2p.h"
#include "run/transport/shm/bell.h"
#include "run/transport/shm/region.h"
#include "run/transport/shm/segname.h"

#define REGION_CHECK_NS 20000000LL
/* Polls of a wait before it starts yielding the CPU to other processes
 * (about 10 us of `pause`). A barrier waits for every rank, so a rank that
 * shares its core with another (mpirun binds ranks to a core only for 2
 * ranks, beyond that to the socket, and mpirun's own daemon or any other
 * process makes one more runnable task than cores) delays everyone until
 * the core's other task stops: with 4096 polls (about 200 us) an 8-byte
 * allgather on 16 ranks of a 16-core host averaged 53 us in one run and
 * 2.2 us in the next (OSU, issue 17). A yield with nobody else on the
 * core returns at once, so polling on between yields costs a system call
 * per poll and no latency. */
#define REGION_SPIN_POLLS 256u
/* With more ranks than CPUs, how long a wait yields before it sleeps on
 * the awaited peer's doorbell (wait_slow). */
#define REGION_YIELD_NS 100000LL
#define REGION_MAGIC 0x3130474552544657ULL /* "WFTREG01" */
#define CTL_ID 0u
/* The eager area of each of a rank's two slots (see eager_bytes). */
#define REGION_EAGER_MAX ((size_t)256 << 10)
#define REGION_EAGER_MIN ((size_t)4 << 10)
#define REGION_EAGER_TOTAL ((size_t)4 << 20)

enum { CTL_ALIVE = 1, CTL_CLOSED = 2, CTL_ABORTED = 3 };

/* A call's record as it sits in a control page: seq is stored last, with
 * release order, so a peer that reads seq with acquire order sees the rest
 * of the record and the eager bytes before it. Record and seq share one
 * cache line: a wait polls the line it then reads. */
typedef struct ctl_rec {
    _Atomic uint64_t seq;
    weft__region_rec rec; /* rec.seq unused */
} ctl_rec;

/* The control page's fixed head; the two slots follow at CTL_SLOTS_OFF,
 * each a record line and the slot's eager area (region.h). */
typedef struct ctl_page {
    uint64_t magic;
    _Atomic uint32_t state;
    uint32_t pid;
    /* Why this rank aborted (cause.h): written once, before state becomes
     * CTL_ABORTED (release), read only after state was seen aborted
     * (acquire). */
    weft__cause cause;
    _Alignas(64) _Atomic uint64_t done;
    /* Rung after this rank publishes a record or its done counter, or
     * changes state, when ranks outnumber CPUs (wait_slow). */
    weft__bell bell;
} ctl_page;

#define CTL_SLOTS_OFF 128u
#define CTL_REC_BYTES 64u
_Static_assert(sizeof(ctl_page) <= CTL_SLOTS_OFF, "control page head fits its lines");
_Static_assert(sizeof(ctl_rec) <= CTL_REC_BYTES, "a record fits its cache line");

/* One allocation: this rank's segment and the peers' (NULL where not
 * mapped: TCP peers), each with its size. */
typedef struct region_seg {
    uint32_t id;
    unsigned char **map; /* per rank; map[own rank] is the caller's memory */
    size_t *bytes;
    struct region_seg *next;
} region_seg;

struct weft__region {
    uint32_t rank, size;
    region_seg *ctl; /* the control pages */
    region_seg *segs;
    uint32_t next_id;
    uint32_t spin_polls; /* polls before a wait yields the CPU */
    uint32_t workers;    /* weft__region_workers */
    bool allocated;      /* weft_comm_alloc reached its allocation */
    size_t eager;        /* bytes of each slot's eager area */
    uint64_t seq, fast, small, cma, pipe;
    size_t tiny_off; /* where each control page's ring (coll_tiny.h) starts */
    weft__region_tiny_state tiny;
    unsigned char *work;
    weft__region_rec *recs; /* size records */
    unsigned char **ptrs;   /* 2 * size pointers */
};

static size_t page_round(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (bytes == 0)
        bytes = 1;
    return (bytes + pg - 1) / pg * pg;
}

static void seg_free(region_seg *s, uint32_t n)
{
    if (!s)
        return;
    for (uint32_t q = 0; s->map && q < n; q++)
        if (s->map[q])
            munmap(s->map[q], s->bytes[q]);
    weft__free(s->map);
    weft__free(s->bytes);
    weft__free(s);
}

static ctl_page *ctl_of(const weft__region *g, uint32_t q)
{
    return (ctl_page *)(void *)g->ctl->map[q];
}

/* Rank q's slot of call seq: its record line, then its eager area. */
static unsigned char *slot_of(const weft__region *g, uint32_t q, uint64_t seq)
{
    return g->ctl->map[q] + CTL_SLOTS_OFF + (seq & 1) * (CTL_REC_BYTES + g->eager);
}

static ctl_rec *rec_of(const weft__region *g, uint32_t q, uint64_t seq)
{
    return (ctl_rec *)(void *)slot_of(g, q, seq);
}

/* Bytes of each slot's eager area for n ranks: REGION_EAGER_MAX, less for
 * many ranks so that the control pages every rank maps stay within about
 * REGION_EAGER_TOTAL bytes (n x 2 slots), never below REGION_EAGER_MIN.
 * A multiple of the cache line. */
static size_t eager_bytes(uint32_t n)
{
    size_t b = REGION_EAGER_TOTAL / 2 / (n ? n : 1);
    if (b > REGION_EAGER_MAX)
        b = REGION_EAGER_MAX;
    if (b < REGION_EAGER_MIN)
        b = REGION_EAGER_MIN;
    return b / 64 * 64;
}

void weft__region_abort(weft__region *g, const weft__cause *why)
{
    if (!g || !g->ctl || !g->ctl->map[g->rank])
        return;
    ctl_page *me = ctl_of(g, g->rank);
    /* Only this rank writes its state; the first abort's cause stays. */
    if (atomic_load_explicit(&me->state, memory_order_relaxed) != CTL_ALIVE)
        return;
    me->cause = *why;
    atomic_store_explicit(&me->state, CTL_ABORTED, memory_order_release);
    weft__bell_ring(&me->bell);
}

void weft__region_free(weft__region *g)
{
    if (!g)
        return;
    if (g->ctl && g->ctl->map[g->rank]) {
        uint32_t alive = CTL_ALIVE;
        atomic_compare_exchange_strong(&ctl_of(g, g->rank)->state, &alive, CTL_CLOSED);
        weft__bell_ring(&ctl_of(g, g->rank)->bell);
    }
    while (g->segs) {
        region_seg *s = g->segs;
        g->segs = s->next;
        seg_free(s, g->size);
    }
    seg_free(g->ctl, g->size);
    weft__free(g->work);
    weft__free(g->recs);
    weft__free(g->ptrs);
    weft__free(g->tiny.rings);
    weft__free(g);
}

/* Creates, sizes, reserves and maps this rank's segment of s. */
static weft_err seg_create(const weft_comm *c, region_seg *s, const char *name, size_t bytes,
                           weft_diag *d)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return weft_diag_set(d, WEFT_EIO, "comm_alloc: cannot create segment %s: %s", name,
                             strerror(errno));
    int err = ftruncate(fd, (off_t)bytes) < 0 ? errno : posix_fallocate(fd, 0, (off_t)bytes);
    if (err) {
        close(fd);
        shm_unlink(name);
        return weft_diag_set(
            d, err == ENOSPC || err == EFBIG || err == ENOMEM ? WEFT_ENOMEM : WEFT_EIO,
            "comm_alloc: cannot reserve %zu bytes for segment %s: %s", bytes, name, strerror(err));
    }
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    err = errno;
    close(fd);
    if (m == MAP_FAILED) {
        shm_unlink(name);
        return weft_diag_set(d, WEFT_ENOMEM, "comm_alloc: cannot map segment %s (%zu bytes): %s",
                             name, bytes, strerror(err));
    }
    s->map[c->rank] = m;
    s->bytes[c->rank] = bytes;
    return WEFT_OK;
}

/* Maps rank q's segment of s, announced with `bytes`. */
static weft_err seg_attach(const weft_comm *c, region_seg *s, uint32_t q, size_t bytes,
                           weft_diag *d)
{
    char name[WEFT__SEG_NAME_MAX];
    weft__seg_name_region(name, sizeof name, c->job_tag, q, s->id);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return weft_diag_set(d, WEFT_EIO, "comm_alloc: cannot open rank %u's segment %s: %s", q,
                             name, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size != bytes) {
        close(fd);
        return weft_diag_set(d, WEFT_EPARSE,
                             "comm_alloc: rank %u's segment %s is not the %zu bytes it announced",
                             q, name, bytes);
    }
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    int err = errno;
    close(fd);
    if (m == MAP_FAILED)
        return weft_diag_set(d, WEFT_ENOMEM, "comm_alloc: cannot map rank %u's segment %s: %s", q,
                             name, strerror(err));
    s->map[q] = m;
    s->bytes[q] = bytes;
    return WEFT_OK;
}

typedef struct gather_card {
    uint64_t ok;
    uint64_t bytes;
} gather_card;

/* Allgathers (ok, bytes) over the bootstrap channel; fails the
 * communicator when the channel fails. */
static weft_err gather(weft_comm *c, bool ok, size_t bytes, gather_card *all, weft_diag *d)
{
    gather_card me = {.ok = ok, .bytes = bytes};
    weft_diag mine;
    weft_diag_clear(&mine);
    weft_err e = c->bops->allgather(c->boot, &me, sizeof me, all, weft__now_ns() + c->timeout_ns,
                                    d ? d : &mine);
    if (e)
        return weft__comm_fail(c, e, d ? d : &mine);
    return WEFT_OK;
}

/* The first rank other than this one whose card is not ok, or size. */
static uint32_t first_bad(const weft_comm *c, const gather_card *all)
{
    for (uint32_t q = 0; q < c->size; q++)
        if (!all[q].ok && q != c->rank)
            return q;
    return c->size;
}

/* The collective core of weft_comm_alloc: one segment of `bytes` (0 when
 * this rank could not even start: *local_err says why) per rank, mapped by
 * every shared-memory peer. On failure every rank frees its part. */
static weft_err alloc_seg(weft_comm *c, uint32_t id, size_t bytes, weft_err local_err,
                          region_seg **out, weft_diag *d)
{
    weft_err e = local_err;
    region_seg *s = NULL;
    gather_card *all = weft__calloc(c->size, sizeof *all);
    char name[WEFT__SEG_NAME_MAX];
    weft__seg_name_region(name, sizeof name, c->job_tag, c->rank, id);
    bool linked = false;
    if (!e && (!all || !(s = weft__calloc(1, sizeof *s)) ||
               !(s->map = weft__calloc(c->size, sizeof *s->map)) ||
               !(s->bytes = weft__calloc(c->size, sizeof *s->bytes))))
        e = weft_diag_code(d, WEFT_ENOMEM);
    if (s)
        s->id = id;
    if (!e) {
        e = seg_create(c, s, name, bytes, d);
        linked = !e;
    }
    if (!e && id == CTL_ID) {
        /* Alive before any peer can map it (after the first gather). */
        ctl_page *me = (ctl_page *)(void *)s->map[c->rank];
        me->magic = REGION_MAGIC;
        me->pid = (uint32_t)getpid();
        atomic_store(&me->state, CTL_ALIVE);
    }
    gather_card stack[1];
    gather_card *cards = all ? all : stack;
    if (!all) {
        /* Without room for the cards this rank cannot take part: it fails
         * the communicator, and the peers' gathers end with it. */
        e = weft__comm_fail(c, weft_diag_code(d, WEFT_ENOMEM), d);
        goto fail;
    }
    weft_err g = gather(c, !e, bytes, cards, d);
    if (g) {
        e = g;
        goto fail;
    }
    uint32_t bad = first_bad(c, cards);
    if (!e && bad < c->size)
        e = weft_diag_set(d, WEFT_EIO, "comm_alloc: rank %u could not allocate its segment", bad);
    for (uint32_t q = 0; !e && q < c->size; q++)
        if (q != c->rank && c->via[q] == WEFT__VIA_SHM)
            e = seg_attach(c, s, q, (size_t)cards[q].bytes, d);
    if ((g = gather(c, !e, 0, cards, d))) {
        e = g;
        goto fail;
    }
    bad = first_bad(c, cards);
    if (!e && bad < c->size)
        e = weft_diag_set(d, WEFT_EIO, "comm_alloc: rank %u could not map its peers' segments",
                          bad);
    if (e)
        goto fail;
    shm_unlink(name);
    weft__free(all);
    *out = s;
    return WEFT_OK;
fail:
    if (linked)
        shm_unlink(name);
    seg_free(s, c->size);
    weft__free(all);
    return e;
}

/* Creates the region and its control pages (collective; see
 * weft__region_init). */
static weft_err region_start(weft_comm *c, weft_err local_err, weft_diag *d)
{
    weft_err e = local_err;
    weft__region *g = NULL;
    if (!e && (!(g = weft__calloc(1, sizeof *g)) || !(g->work = weft__malloc(WEFT__REGION_WORK)) ||
               !(g->recs = weft__calloc(c->size, sizeof *g->recs)) ||
               !(g->ptrs = weft__calloc(2 * (size_t)c->size, sizeof *g->ptrs)) ||
               !(g->tiny.rings = weft__calloc(c->size, sizeof *g->tiny.rings))))
        e = weft_diag_code(d, WEFT_ENOMEM);
    region_seg *ctl = NULL;
    size_t eager = eager_bytes(c->size);
    /* The small-call ring (coll_tiny.h) follows the two slots. */
    size_t tiny_off = CTL_SLOTS_OFF + 2 * (CTL_REC_BYTES + eager);
    weft_err g_e = alloc_seg(c, CTL_ID, page_round(tiny_off + WEFT__REGION_TINY_BYTES), e, &ctl, d);
    if (g_e) {
        weft__region_free(g);
        return g_e;
    }
    g->rank = c->rank;
    g->size = c->size;
    g->ctl = ctl;
    g->eager = eager;
    g->tiny_off = tiny_off;
    for (uint32_t q = 0; q < c->size; q++)
        g->tiny.rings[q] = ctl->map[q] ? ctl->map[q] + tiny_off : NULL;
    c->tiny = &g->tiny;
    /* With more ranks than CPUs a spinning rank holds the CPU a peer it
     * waits for needs: yield at once then. */
    uint32_t cpus = c->host_cpus ? c->host_cpus : 1;
    g->spin_polls = c->size > cpus ? 0 : REGION_SPIN_POLLS;
    g->workers = c->size > cpus ? cpus : c->size;
    g->next_id = CTL_ID + 1;
    c->region = g;
    c->region_abort = weft__region_abort;
    return WEFT_OK;
}

weft_err weft__region_init(weft_comm *c, weft_diag *d)
{
    return region_start(c, WEFT_OK, d);
}

weft_err weft_comm_alloc(weft_comm *c, size_t bytes, void **out, weft_diag *d)
{
    if (!c)
        return weft_diag_set(d, WEFT_EINVAL, "comm_alloc: no communicator");
    if (c->failed)
        return weft_diag_set(d, WEFT_EPEER, "comm: failed earlier: %s", c->fail_msg);
    weft_err local = WEFT_OK;
    if (!out)
        local = weft_diag_set(d, WEFT_EINVAL, "comm_alloc: out is NULL");
    else
        *out = NULL;
    size_t rounded = 0;
    if (!local && bytes > (size_t)INT64_MAX / 2)
        local = weft_diag_set(d, WEFT_ENOMEM, "comm_alloc: %zu bytes is too large", bytes);
    else
        rounded = page_round(bytes);
    weft_err e;
    if (!c->region && (e = region_start(c, local, d)))
        return e;
    weft__region *g = c->region;
    g->allocated = true; /* reached by every rank alike: region_start agreed */
    region_seg *s = NULL;
    uint32_t id = g->next_id++;
    if ((e = alloc_seg(c, id, rounded, local, &s, d)))
        return e;
    s->next = g->segs;
    g->segs = s;
    *out = s->map[c->rank];
    return WEFT_OK;
}

void weft_comm_free_mem(weft_comm *c, void *p)
{
    if (!c || !p || !c->region)
        return;
    for (region_seg **at = &c->region->segs; *at; at = &(*at)->next) {
        if ((*at)->map[c->rank] == p) {
            region_seg *s = *at;
            *at = s->next;
            seg_free(s, c->size);
            return;
        }
    }
}

bool weft__region_records(const weft_comm *c)
{
    if (!c->region || c->size < 2)
        return false;
    for (uint32_t q = 0; q < c->size; q++)
        if (q != c->rank && c->via[q] != WEFT__VIA_SHM)
            return false;
    return true;
}

bool weft__region_oversubscribed(const weft_comm *c)
{
    return c->region && c->region->spin_polls == 0;
}

uint32_t weft__region_workers(const weft_comm *c)
{
    return c->region ? c->region->workers : c->size;
}

bool weft__region_usable(const weft_comm *c)
{
    return weft__region_records(c) && c->region->allocated;
}

size_t weft__region_eager_bytes(const weft_comm *c)
{
    return weft__region_records(c) ? c->region->eager : 0;
}

weft__region_tiny_state *weft__region_tiny_own(const weft_comm *c)
{
    return &c->region->tiny;
}

unsigned char *weft__region_eager(const weft_comm *c, uint32_t q, uint64_t seq)
{
    return slot_of(c->region, q, seq) + CTL_REC_BYTES;
}

bool weft__region_find(const weft_comm *c, const void *p, size_t len, uint32_t *id, uint64_t *off)
{
    uintptr_t a = (uintptr_t)p;
    for (const region_seg *s = c->region ? c->region->segs : NULL; s; s = s->next) {
        uintptr_t base = (uintptr_t)s->map[c->rank];
        size_t bytes = s->bytes[c->rank];
        if (a >= base && a - base <= bytes && len <= bytes - (a - base)) {
            *id = s->id;
            *off = a - base;
            return true;
        }
    }
    return false;
}

unsigned char *weft__region_peer(const weft_comm *c, uint32_t id, uint32_t q)
{
    for (const region_seg *s = c->region ? c->region->segs : NULL; s; s = s->next)
        if (s->id == id)
            return s->map[q];
    return NULL;
}

unsigned char *weft__region_work(const weft_comm *c)
{
    return c->region->work;
}

weft__region_rec *weft__region_recs(const weft_comm *c)
{
    return c->region->recs;
}

unsigned char **weft__region_ptrs(const weft_comm *c)
{
    return c->region->ptrs;
}

uint64_t weft__region_fast_calls(const weft_comm *c)
{
    return c->region ? c->region->fast : 0;
}

uint64_t weft__region_small_calls(const weft_comm *c)
{
    return c->region ? c->region->small : 0;
}

void weft__region_count_small(weft_comm *c)
{
    c->region->small++;
}

uint64_t weft__region_cma_calls(const weft_comm *c)
{
    return c->region ? c->region->cma : 0;
}

void weft__region_count_cma(weft_comm *c)
{
    c->region->cma++;
}

uint64_t weft__region_pipe_calls(const weft_comm *c)
{
    return c->region ? c->region->pipe : 0;
}

void weft__region_count_pipe(weft_comm *c)
{
    c->region->pipe++;
}

uint32_t weft__region_pid(const weft_comm *c, uint32_t q)
{
    return ctl_of(c->region, q)->pid;
}

void weft__region_count_fast(weft_comm *c)
{
    c->region->fast++;
}

uint64_t weft__region_next_seq(weft_comm *c)
{
    return ++c->region->seq;
}

/* Rank q's counter for a wait: its record of call seq (posted) or its
 * done counter. */
static _Atomic uint64_t *counter_of(const weft__region *g, uint32_t q, bool done, uint64_t seq)
{
    return done ? &ctl_of(g, q)->done : &rec_of(g, q, seq)->seq;
}

/* Advances *q past every rank whose counter reached seq; true when all
 * have. */
static bool reached(const weft__region *g, uint32_t *q, bool done, uint64_t seq)
{
    for (; *q < g->size; ++*q)
        if (*q != g->rank &&
            atomic_load_explicit(counter_of(g, *q, done, seq), memory_order_acquire) < seq)
            return false;
    return true;
}

/* What a sleeping wait re-checks: whether the peer whose bell it sleeps
 * on reached the call (any other unfinished peer has a bell of its own). */
typedef struct awaited {
    const weft__region *g;
    uint32_t q;
    bool done;
    uint64_t seq;
} awaited;

static bool peer_reached(void *arg)
{
    const awaited *w = arg;
    return atomic_load_explicit(counter_of(w->g, w->q, w->done, w->seq), memory_order_acquire) >=
           w->seq;
}

/* True when rank q's control page says it aborted or closed, or its
 * process is gone; *why is then the failure to report: q's death or close
 * as this rank sees it, or the cause q recorded when it aborted.
 *
 * The process is looked at before the state word, as the transport's
 * peer_gone does (transport/shm/shm.c): a rank records its abort or close
 * before it exits, so a rank found gone shows its final state. Read the
 * other way round, a witness that aborted and exited between the two
 * reads read as alive, then as dead: coll_shared_test's run_kill failed
 * about once in six runs under load, a survivor reporting "shm: rank 1
 * (pid N) died" instead of the death rank 1 had recorded ("rank 2 died
 * (reported by rank 1)"). */
static bool peer_gone(const weft__region *g, uint32_t q, weft__cause *why)
{
    ctl_page *p = ctl_of(g, q);
    weft__cause seen = {.rank = q, .pid = p->pid, .witness = g->rank};
    bool alive = weft__pid_alive((pid_t)p->pid);
    uint32_t st = atomic_load_explicit(&p->state, memory_order_acquire);
    if (st == CTL_ABORTED) {
        *why = p->cause;
        if (!weft__cause_valid(why, g->size)) {
            seen.kind = WEFT__CAUSE_ABORTED;
            *why = seen;
        }
        return true;
    }
    seen.kind = st != CTL_ALIVE ? WEFT__CAUSE_CLOSED : WEFT__CAUSE_DIED;
    *why = seen;
    return st != CTL_ALIVE || !alive;
}

bool weft__region_peer_gone(const weft_comm *c, uint32_t q, weft__cause *why)
{
    return peer_gone(c->region, q, why);
}

/* Tells sleeping peers that this rank published (see wait_slow). */
static void ring(const weft__region *g)
{
    if (g->spin_polls == 0)
        weft__bell_ring(&ctl_of(g, g->rank)->bell);
}

/* The rest of wait_all once polling stopped paying: yields the CPU between
 * polls, checks the waited-on peer's liveness every REGION_CHECK_NS and the
 * timeout. With more ranks than CPUs it yields for REGION_YIELD_NS only
 * and then sleeps on the awaited peer's doorbell (bell.h), which the peer
 * rings when it publishes: a yielding rank keeps its CPU busy whenever the
 * rank it waits for is queued on the other CPU (the scheduler balances
 * runnable ranks onto idle CPUs, and a yielding one never idles), so with
 * 4 ranks on 2 cores a long call ran on about one core. */
static weft_err wait_slow(weft_comm *c, bool done, uint64_t seq, uint32_t q, weft_diag *d)
{
    weft__region *g = c->region;
    int64_t start = weft__now_ns(), next_check = start + REGION_CHECK_NS, now = start;
    bool may_sleep = g->spin_polls == 0;
    for (unsigned polls = 1;; polls++) {
        bool sleeping = may_sleep && now - start >= REGION_YIELD_NS;
        if (sleeping) {
            int64_t nap = next_check - now;
            if (nap > start + c->timeout_ns - now)
                nap = start + c->timeout_ns - now;
            if (nap < 1000)
                nap = 1000;
            awaited w = {g, q, done, seq};
            weft__bell_sleep(&ctl_of(g, q)->bell, peer_reached, &w, nap);
        } else {
            sched_yield();
        }
        if (reached(g, &q, done, seq))
            return WEFT_OK;
        if (!sleeping && polls % 16)
            continue;
        now = weft__now_ns();
        if (now >= next_check) {
            next_check = now + REGION_CHECK_NS;
            weft__cause why;
            uint32_t w = q;
            if (peer_gone(g, w, &why)) {
                /* A peer that finished this call and then closed or exited
                 * published its counter first: look again before failing. */
                if (reached(g, &q, done, seq))
                    return WEFT_OK;
                if (q == w)
                    return weft__comm_fail_cause(c, weft__cause_diag(d, "shm", &why, g->rank), &why,
                                                 d);
            }
        }
        if (now - start >= c->timeout_ns)
            return weft__comm_stalled(c, q, d);
    }
}

/* Waits until every peer's counter (posted or done) reaches seq. A record
 * slot holds call seq or seq - 2 while this rank waits for seq: no peer
 * can publish seq + 2 before this rank published seq + 1. The poll phase
 * reads no clock (a clock read costs as much as a cache-line transfer
 * between the cores here), so the timeout counts from its end. */
static weft_err wait_all(weft_comm *c, bool done, uint64_t seq, weft_diag *d)
{
    weft__region *g = c->region;
    uint32_t q = 0;
    for (unsigned polls = 0;; polls++) {
        if (reached(g, &q, done, seq))
            return WEFT_OK;
        if (polls >= g->spin_polls)
            break;
        weft__poll_pause();
    }
    return wait_slow(c, done, seq, q, d);
}

void weft__region_publish(weft_comm *c, const weft__region_rec *rec)
{
    weft__region *g = c->region;
    ctl_rec *me = rec_of(g, g->rank, rec->seq);
    me->rec = *rec;
    atomic_store_explicit(&me->seq, rec->seq, memory_order_release);
    ring(g);
}

weft_err weft__region_gather(weft_comm *c, uint64_t seq, weft__region_rec *recs, weft_diag *d)
{
    weft__region *g = c->region;
    weft_err e = wait_all(c, false, seq, d);
    if (e)
        return e;
    for (uint32_t q = 0; q < g->size; q++) {
        const ctl_rec *p = rec_of(g, q, seq);
        uint64_t got = atomic_load_explicit(&p->seq, memory_order_acquire);
        recs[q] = p->rec;
        recs[q].seq = got;
        if (got != seq) {
            weft_diag_set(d, WEFT_EPARSE, "shm: rank %u published call %llu, rank %u expected %llu",
                          q, (unsigned long long)got, g->rank, (unsigned long long)seq);
            return weft__comm_fail(c, WEFT_EPARSE, d);
        }
    }
    return WEFT_OK;
}

weft_err weft__region_post(weft_comm *c, const weft__region_rec *rec, weft__region_rec *recs,
                           weft_diag *d)
{
    weft__region_publish(c, rec);
    return weft__region_gather(c, rec->seq, recs, d);
}

void weft__region_done_signal(weft_comm *c, uint64_t seq)
{
    weft__region *g = c->region;
    /* Release order: every read of a peer's buffer and write into one
     * (streaming stores are fenced by their writer) happens before a peer
     * that sees the counter goes on. */
    atomic_store_explicit(&ctl_of(g, g->rank)->done, seq, memory_order_release);
    ring(g);
}

weft_err weft__region_done(weft_comm *c, uint64_t seq, weft_diag *d)
{
    weft__region_done_signal(c, seq);
    return wait_all(c, true, seq, d);
}

void weft__region_ring(const weft_comm *c)
{
    ring(c->region);
}

void weft__region_sleep(const weft_comm *c, uint32_t q, bool (*ready)(void *arg), void *arg,
                        int64_t nap_ns)
{
    weft__bell_sleep(&ctl_of(c->region, q)->bell, ready, arg, nap_ns);
}
