/* The shared-memory transport: pipelined slots per ordered pair of ranks.
 *
 * Each rank creates one POSIX shared segment holding its *inbound* rings, one
 * per possible sender; senders map the receiver's segment and write into
 * their ring there. A ring is SHM_SLOTS slots of SHM_SLOT_BYTES bytes plus
 * two counters on their own cache lines: head (slots filled, written only by
 * the sender, release order after the slot's bytes) and tail (slots
 * consumed, written only by the receiver). A message is cut into slots; each
 * slot records its length and the message's length, which the receiver
 * checks against what it expects. The receiver copies or reduces straight
 * out of the slot, so a reduction costs one pass over the data.
 *
 * Segment names are random and are unlinked as soon as every rank has mapped
 * them (ready), so a job that dies later leaves nothing in /dev/shm. Every
 * mapping is populated when it is made: a first touch of a slot page costs a
 * page fault on each side (tens of microseconds in a virtual machine), which
 * would otherwise land on the first messages of a job.
 *
 * Failure detection: each segment header has a state word (alive, closed,
 * aborted) and the owner's pid. A rank waiting on peer p (data from p, or
 * room in p's ring) checks every SHM_CHECK_NS that p's state is alive and
 * that p's process exists and is not a zombie (liveness.h); otherwise the
 * wait ends with WEFT_EPEER. Data p wrote before closing is still delivered.
 * A rank that aborts records in its header why (cause.h: the rank that
 * originally failed, how, and who saw it) before it publishes the aborted
 * state, and a peer that sees the abort passes that cause on, so every rank
 * of a job names the rank that failed, not the neighbour that failed
 * because of it.
 *
 * Waiting polls first and sleeps only when polling stops paying. The poll
 * phase lasts up to the endpoint's spin budget: between polls it pauses the
 * CPU, or, when more ranks share this host than it has CPUs (oversubscribed),
 * calls sched_yield so that a peer waiting for our core gets it. The budget
 * adapts between SHM_SPIN_MIN_NS and SHM_SPIN_MAX_NS: it halves when a wait
 * had to sleep and grows by a quarter when polling found work, so a rank
 * whose peers answer in microseconds keeps polling and one whose peers are
 * descheduled for milliseconds quickly stops burning its time slice. Then
 * it sleeps on the rank's doorbell (bell.h) in its own segment header,
 * which a peer rings after it moved a head or tail or changed state; the
 * bell's re-check is "could any ring move now". Sleeps last at most
 * SHM_CHECK_NS, so peer liveness is still checked while nothing rings; the
 * poll phase checks it on the same period.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/copy_nt.h"
#include "run/liveness.h"
#include "run/transport/shm/bell.h"
#include "run/transport/shm/segname.h"
#include "run/transport/xport.h"

#define SHM_SLOTS 8u
#define SHM_SLOT_BYTES (128u * 1024u)
#define SHM_SLOT_HDR 64u
/* Piece of a combined receive with a base (deliver): a multiple of every
 * element size, small enough that the piece and the slot's part stay in a
 * 32 KiB first-level cache. */
#define SHM_FUSE_BYTES (8u * 1024u)
#define SHM_SLOT_STRIDE (SHM_SLOT_HDR + SHM_SLOT_BYTES)
#define SHM_CTL_BYTES 128u
#define SHM_HDR_BYTES 64u
#define SHM_CHECK_NS 20000000LL
#define SHM_SPIN_MIN_NS 20000LL
#define SHM_SPIN_START_NS 50000LL
#define SHM_SPIN_MAX_NS 200000LL
#define SHM_MAGIC 0x31304d4853544657ULL /* "WFTSHM01" */

enum { SEG_ALIVE = 1, SEG_CLOSED = 2, SEG_ABORTED = 3 };

typedef struct seg_hdr {
    uint64_t magic;
    _Atomic uint32_t state;
    uint32_t pid;
    uint32_t nranks;
    uint32_t slots;
    uint32_t slot_bytes;
    /* The owner's doorbell: rung by whoever does something the owner may
     * wait for (data into its rings, room in a ring it writes, a state
     * change). */
    weft__bell bell;
    /* Why the owner aborted: written once, before state becomes
     * SEG_ABORTED (release), read only after state was seen aborted
     * (acquire). */
    weft__cause cause;
} seg_hdr;

typedef struct ring_ctl {
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t tail;
} ring_ctl;

typedef struct slot_hdr {
    uint64_t len;
    uint64_t msg_len;
} slot_hdr;

_Static_assert(sizeof(ring_ctl) == SHM_CTL_BYTES, "ring control is two cache lines");
_Static_assert(sizeof(seg_hdr) <= SHM_HDR_BYTES, "segment header fits");

typedef struct shm_addr {
    char name[48];
    uint32_t pid;
} shm_addr;

typedef struct shm_peer {
    unsigned char *seg; /* the peer's segment, mapped; NULL if not served */
    pid_t pid;
    weft__xreq *sq, *sq_tail; /* sends to the peer, oldest first */
    weft__xreq *rq, *rq_tail; /* receives from the peer */
} shm_peer;

struct weft__xport {
    uint32_t rank, size;
    unsigned char *mine;
    size_t seg_bytes;
    char name[WEFT__SEG_NAME_MAX];
    bool linked; /* name still exists in /dev/shm */
    shm_peer *peers;
    uint32_t busy_peers;
    int64_t next_check; /* when check_peers runs next */
    int64_t spin_ns;    /* current poll budget of a wait (see the top) */
    bool oversub;       /* more ranks on this host than CPUs: yield while polling */
    uint32_t host_cpus; /* CPUs of this host (weft__xport_params) */
    bool has_cause;     /* progress failed because of a peer: */
    weft__cause cause;  /* what it saw (shm_cause) */
};

static size_t seg_size(uint32_t n)
{
    return SHM_HDR_BYTES + (size_t)n * SHM_CTL_BYTES + (size_t)n * SHM_SLOTS * SHM_SLOT_STRIDE;
}

static seg_hdr *hdr_of(unsigned char *seg)
{
    return (seg_hdr *)seg;
}

/* Rings the doorbell of the segment's owner after this rank published a
 * head, a tail or a state. */
static void ring_bell(unsigned char *seg)
{
    weft__bell_ring(&hdr_of(seg)->bell);
}

static ring_ctl *ctl_of(unsigned char *seg, uint32_t sender)
{
    return (ring_ctl *)(seg + SHM_HDR_BYTES + (size_t)sender * SHM_CTL_BYTES);
}

static unsigned char *slot_of(unsigned char *seg, uint32_t n, uint32_t sender, uint64_t idx)
{
    return seg + SHM_HDR_BYTES + (size_t)n * SHM_CTL_BYTES +
           ((size_t)sender * SHM_SLOTS + (size_t)(idx % SHM_SLOTS)) * SHM_SLOT_STRIDE;
}

static void ring_peers(weft__xport *x)
{
    for (uint32_t q = 0; x->peers && q < x->size; q++)
        if (x->peers[q].seg)
            ring_bell(x->peers[q].seg);
}

static void shm_close(weft__xport *x)
{
    if (!x)
        return;
    if (x->mine) {
        uint32_t alive = SEG_ALIVE;
        atomic_compare_exchange_strong(&hdr_of(x->mine)->state, &alive, SEG_CLOSED);
        ring_peers(x); /* before unmapping their segments */
    }
    for (uint32_t p = 0; x->peers && p < x->size; p++) {
        if (x->peers[p].seg)
            munmap(x->peers[p].seg, x->seg_bytes);
    }
    if (x->mine)
        munmap(x->mine, x->seg_bytes);
    if (x->linked)
        shm_unlink(x->name);
    weft__free(x->peers);
    weft__free(x);
}

static weft_err shm_open_ep(const weft__xport_params *p, weft__xport **out,
                            unsigned char addr[WEFT__XPORT_ADDR_BYTES], weft_diag *d)
{
    weft_err e = WEFT_ENOMEM;
    weft__xport *x = weft__calloc(1, sizeof *x);
    if (!x)
        return weft_diag_code(d, e);
    x->rank = p->rank;
    x->size = p->size;
    x->host_cpus = p->host_cpus ? p->host_cpus : 1;
    x->spin_ns = SHM_SPIN_START_NS;
    x->seg_bytes = seg_size(p->size);
    x->peers = weft__calloc(p->size, sizeof *x->peers);
    if (!x->peers) {
        weft_diag_code(d, e);
        goto close_xport;
    }
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint64_t)weft__now_ns();
    weft__seg_name_xport(x->name, sizeof x->name, getpid(), rnd);
    int fd = shm_open(x->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        e = weft_diag_set(d, WEFT_EIO, "shm: cannot create segment %s: %s", x->name,
                          strerror(errno));
        goto close_xport;
    }
    x->linked = true;
    if (ftruncate(fd, (off_t)x->seg_bytes) < 0) {
        e = weft_diag_set(d, WEFT_EIO, "shm: cannot size segment %s to %zu bytes: %s", x->name,
                          x->seg_bytes, strerror(errno));
        close(fd);
        goto close_xport;
    }
    void *m = mmap(NULL, x->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        e = weft_diag_set(d, WEFT_EIO, "shm: cannot map segment %s: %s", x->name, strerror(errno));
        goto close_xport;
    }
    x->mine = m;
    seg_hdr *h = hdr_of(x->mine);
    h->magic = SHM_MAGIC;
    h->pid = (uint32_t)getpid();
    h->nranks = p->size;
    h->slots = SHM_SLOTS;
    h->slot_bytes = SHM_SLOT_BYTES;
    atomic_store(&h->state, SEG_ALIVE);

    shm_addr a;
    memset(&a, 0, sizeof a);
    memcpy(a.name, x->name, sizeof a.name);
    a.pid = (uint32_t)getpid();
    memset(addr, 0, WEFT__XPORT_ADDR_BYTES);
    memcpy(addr, &a, sizeof a);
    *out = x;
    return WEFT_OK;
close_xport:
    shm_close(x);
    return e;
}

static weft_err shm_connect(weft__xport *x, const bool *serve, const unsigned char *addrs,
                            int64_t deadline, weft_diag *d)
{
    uint32_t local = 1;
    for (uint32_t p = 0; p < x->size; p++)
        local += serve[p] && p != x->rank;
    x->oversub = local > x->host_cpus;
    for (uint32_t p = 0; p < x->size; p++) {
        if (!serve[p] || p == x->rank)
            continue;
        shm_addr a;
        memcpy(&a, addrs + (size_t)p * WEFT__XPORT_ADDR_BYTES, sizeof a);
        a.name[sizeof a.name - 1] = '\0';
        int fd = shm_open(a.name, O_RDWR, 0);
        if (fd < 0)
            return weft_diag_set(d, WEFT_EIO,
                                 "shm: cannot open rank %u's segment %s: %s (is it on another "
                                 "host? try WEFT_TRANSPORT=tcp)",
                                 p, a.name, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) < 0 || (size_t)st.st_size != x->seg_bytes) {
            close(fd);
            return weft_diag_set(d, WEFT_EPARSE, "shm: rank %u's segment %s has the wrong size", p,
                                 a.name);
        }
        void *m =
            mmap(NULL, x->seg_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
            return weft_diag_set(d, WEFT_EIO, "shm: cannot map rank %u's segment: %s", p,
                                 strerror(errno));
        x->peers[p].seg = m;
        x->peers[p].pid = (pid_t)a.pid;
        seg_hdr *h = hdr_of(m);
        if (h->magic != SHM_MAGIC || h->nranks != x->size || h->slots != SHM_SLOTS ||
            h->slot_bytes != SHM_SLOT_BYTES || h->pid != a.pid)
            return weft_diag_set(d, WEFT_EPARSE, "shm: rank %u's segment %s is not compatible", p,
                                 a.name);
    }
    (void)deadline;
    return WEFT_OK;
}

static void shm_ready(weft__xport *x)
{
    if (x->linked) {
        shm_unlink(x->name);
        x->linked = false;
    }
}

static weft_err shm_post(weft__xport *x, weft__xreq *r, weft_diag *d)
{
    shm_peer *p = &x->peers[r->peer];
    r->next = NULL;
    r->done = 0;
    r->complete = false;
    if (!p->sq && !p->rq)
        x->busy_peers++;
    weft__xreq **head = r->is_send ? &p->sq : &p->rq;
    weft__xreq **tail = r->is_send ? &p->sq_tail : &p->rq_tail;
    if (*head)
        (*tail)->next = r;
    else
        *head = r;
    *tail = r;
    (void)d;
    return WEFT_OK;
}

static bool shm_busy(const weft__xport *x)
{
    return x->busy_peers > 0;
}

static void pop(weft__xport *x, shm_peer *p, weft__xreq **head)
{
    weft__xreq *r = *head;
    r->complete = true;
    *head = r->next;
    r->next = NULL;
    if (!p->sq && !p->rq)
        x->busy_peers--;
}

/* Fills free slots of our ring in peer's segment. */
static bool push_sends(weft__xport *x, shm_peer *p)
{
    bool moved = false;
    ring_ctl *c = ctl_of(p->seg, x->rank);
    while (p->sq) {
        weft__xreq *r = p->sq;
        uint64_t head = atomic_load_explicit(&c->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&c->tail, memory_order_acquire);
        if (head - tail >= SHM_SLOTS)
            break;
        unsigned char *slot = slot_of(p->seg, x->size, x->rank, head);
        size_t n = r->len - r->done;
        if (n > SHM_SLOT_BYTES)
            n = SHM_SLOT_BYTES;
        slot_hdr sh = {.len = n, .msg_len = r->len};
        memcpy(slot, &sh, sizeof sh);
        memcpy(slot + SHM_SLOT_HDR, r->buf + r->done, n);
        atomic_store_explicit(&c->head, head + 1, memory_order_release);
        r->done += n;
        moved = true;
        if (r->done == r->len)
            pop(x, p, &p->sq);
    }
    if (moved)
        ring_bell(p->seg);
    return moved;
}

/* Stores or combines the n bytes of a slot at the receive's current
 * position. With a base, base and slot are combined piece by piece, each
 * piece copied to buf and reduced while it is in the first-level cache, so
 * the result costs one pass over memory instead of a copy and a reduce. */
static void deliver(const weft__xreq *r, const unsigned char *src, size_t n)
{
    unsigned char *dst = r->buf + r->done;
    if (r->reduce && r->base) {
        const unsigned char *b = r->base + r->done;
        for (size_t o = 0; o < n; o += SHM_FUSE_BYTES) {
            size_t k = n - o < SHM_FUSE_BYTES ? n - o : SHM_FUSE_BYTES;
            if (b != dst)
                memcpy(dst + o, b + o, k);
            r->reduce(dst + o, src + o, k / r->esize);
        }
    } else if (r->reduce) {
        r->reduce(dst, src, n / r->esize);
    } else if (r->nt) {
        weft__copy_nt(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}

/* Consumes filled slots of peer's ring in our segment. */
static weft_err pull_recvs(weft__xport *x, uint32_t peer, shm_peer *p, bool *moved, weft_diag *d)
{
    ring_ctl *c = ctl_of(x->mine, peer);
    bool freed = false;
    while (p->rq) {
        weft__xreq *r = p->rq;
        uint64_t tail = atomic_load_explicit(&c->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&c->head, memory_order_acquire);
        if (head == tail)
            break;
        unsigned char *slot = slot_of(x->mine, x->size, peer, tail);
        slot_hdr sh;
        memcpy(&sh, slot, sizeof sh);
        size_t want = r->len - r->done;
        if (want > SHM_SLOT_BYTES)
            want = SHM_SLOT_BYTES;
        if (sh.msg_len != r->len || sh.len != want)
            return weft_diag_set(d, WEFT_EPARSE,
                                 "shm: rank %u sent a %llu-byte message, rank %u expected %zu "
                                 "bytes",
                                 peer, (unsigned long long)sh.msg_len, x->rank, r->len);
        deliver(r, slot + SHM_SLOT_HDR, want);
        atomic_store_explicit(&c->tail, tail + 1, memory_order_release);
        freed = true;
        r->done += want;
        *moved = true;
        if (r->done == r->len)
            pop(x, p, &p->rq);
    }
    if (freed)
        ring_bell(p->seg);
    return WEFT_OK;
}

/* True when peer q, which this rank waits on, is gone; *why is then the
 * failure to report: q's death or close as this rank sees it, or the
 * cause q recorded when it aborted.
 *
 * The process is looked at before the state word: a peer publishes its
 * close before it exits, so a peer found gone shows its final state. Read
 * the other way round, a peer that closed and exited between the two reads
 * (its part done, the data it sent still in our ring) read as alive, then
 * as dead: reduce_alltoall_test failed so about once in ten runs under load
 * ("shm: rank 1 (pid N) died" while rank 0 still had rank 1's data to
 * read). */
static bool peer_gone(weft__xport *x, uint32_t q, weft__cause *why)
{
    shm_peer *p = &x->peers[q];
    seg_hdr *h = hdr_of(p->seg);
    weft__cause seen = {.rank = q, .pid = (uint32_t)p->pid, .witness = x->rank};
    bool alive = weft__pid_alive(p->pid);
    uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);
    if (st == SEG_ABORTED) {
        *why = h->cause;
        if (!weft__cause_valid(why, x->size)) {
            seen.kind = WEFT__CAUSE_ABORTED;
            *why = seen;
        }
        return true;
    }
    if (st == SEG_CLOSED) {
        ring_ctl *c = ctl_of(x->mine, q);
        bool pending_data = atomic_load_explicit(&c->head, memory_order_acquire) !=
                            atomic_load_explicit(&c->tail, memory_order_relaxed);
        seen.kind = WEFT__CAUSE_CLOSED;
        *why = seen;
        return p->sq || !pending_data;
    }
    seen.kind = WEFT__CAUSE_DIED;
    *why = seen;
    return !alive;
}

/* WEFT_EPEER when a peer we wait on is gone, naming the rank that failed
 * first (cause.h); x->cause keeps it for the abort that follows. Data a
 * closed peer left in our ring is consumed first (pull_recvs ran just
 * before). */
static weft_err check_peers(weft__xport *x, weft_diag *d)
{
    for (uint32_t q = 0; q < x->size; q++) {
        shm_peer *p = &x->peers[q];
        if (!p->sq && !p->rq)
            continue;
        weft__cause why;
        if (!peer_gone(x, q, &why))
            continue;
        x->cause = why;
        x->has_cause = true;
        return weft__cause_diag(d, "shm", &why, x->rank);
    }
    return WEFT_OK;
}

static bool shm_cause(const weft__xport *x, weft__cause *out)
{
    if (!x->has_cause)
        return false;
    *out = x->cause;
    return true;
}

/* True when peer q's queues could move now: data waits in our ring from q,
 * or our ring in q's segment has room, or q changed state. */
static bool can_move(weft__xport *x, uint32_t q)
{
    shm_peer *p = &x->peers[q];
    if (p->rq) {
        ring_ctl *c = ctl_of(x->mine, q);
        if (atomic_load(&c->head) != atomic_load(&c->tail))
            return true;
    }
    if (p->sq) {
        ring_ctl *c = ctl_of(p->seg, x->rank);
        if (atomic_load(&c->head) - atomic_load(&c->tail) < SHM_SLOTS)
            return true;
    }
    return (p->sq || p->rq) && atomic_load(&hdr_of(p->seg)->state) != SEG_ALIVE;
}

/* One pass over every busy peer: fills free slots, drains full ones. */
static weft_err poll_once(weft__xport *x, bool *any, weft_diag *d)
{
    for (uint32_t q = 0; q < x->size && x->busy_peers; q++) {
        shm_peer *p = &x->peers[q];
        if (p->sq && push_sends(x, p))
            *any = true;
        if (p->rq) {
            weft_err e = pull_recvs(x, q, p, any, d);
            if (e)
                return e;
        }
    }
    return WEFT_OK;
}

/* The bell's re-check: could any peer's ring move now. */
static bool any_can_move(void *arg)
{
    weft__xport *x = arg;
    for (uint32_t q = 0; q < x->size; q++)
        if (can_move(x, q))
            return true;
    return false;
}

/* Sleeps on our doorbell unless a ring can move. */
static void sleep_on_bell(weft__xport *x, int64_t nap)
{
    weft__bell_sleep(&hdr_of(x->mine)->bell, any_can_move, x, nap);
}

static weft_err shm_progress(weft__xport *x, int64_t wait_ns, bool *moved, weft_diag *d)
{
    int64_t start = 0, now = 0;
    bool slept = false;
    for (unsigned polls = 0;; polls++) {
        bool any = false;
        weft_err e = poll_once(x, &any, d);
        if (e)
            return e;
        if (any) {
            *moved = true;
            /* Adapt the budget only on waits that polled. */
            if (polls && !slept) {
                x->spin_ns += x->spin_ns / 4;
                if (x->spin_ns > SHM_SPIN_MAX_NS)
                    x->spin_ns = SHM_SPIN_MAX_NS;
            }
            return WEFT_OK;
        }
        if (!x->busy_peers)
            return WEFT_OK;
        /* The clock is read every 8 polls while polling is cheap. */
        if (polls % 8 == 0 || x->oversub || slept) {
            now = weft__now_ns();
            if (!start)
                start = now;
            if (now >= x->next_check) {
                e = check_peers(x, d);
                if (e)
                    return e;
                x->next_check = now + SHM_CHECK_NS;
            }
            if (now - start >= wait_ns)
                return WEFT_OK;
        }
        if (!slept && now - start < x->spin_ns) {
            if (x->oversub && polls >= 4)
                sched_yield();
            else
                for (int i = 0; i < 8; i++)
                    weft__poll_pause();
            continue;
        }
        if (!slept) {
            x->spin_ns /= 2;
            if (x->spin_ns < SHM_SPIN_MIN_NS)
                x->spin_ns = SHM_SPIN_MIN_NS;
        }
        slept = true;
        int64_t nap = wait_ns - (now - start);
        if (nap > SHM_CHECK_NS)
            nap = SHM_CHECK_NS;
        sleep_on_bell(x, nap);
    }
}

static void shm_abort(weft__xport *x, const weft__cause *why)
{
    if (!x || !x->mine)
        return;
    seg_hdr *h = hdr_of(x->mine);
    /* Only the owner writes its state, so alive cannot change under us;
     * the first abort's cause stays. */
    if (atomic_load_explicit(&h->state, memory_order_relaxed) != SEG_ALIVE)
        return;
    h->cause = *why;
    atomic_store_explicit(&h->state, SEG_ABORTED, memory_order_release);
    ring_peers(x);
}

const weft__xport_ops weft__xport_shm = {
    .name = "shm",
    .open = shm_open_ep,
    .connect = shm_connect,
    .ready = shm_ready,
    .post = shm_post,
    .busy = shm_busy,
    .progress = shm_progress,
    .cause = shm_cause,
    .abort = shm_abort,
    .close = shm_close,
};
