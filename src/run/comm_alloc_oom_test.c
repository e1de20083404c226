/* weft_comm_alloc under injected allocation failures.
 *
 * Across forked ranks (3 ranks on shared memory): rank v makes its 1st,
 * 2nd, ... allocation inside weft_comm_alloc fail, for v the first and the
 * last rank, until the call succeeds. Every injected failure must fail the
 * call on every rank: rank v with WEFT_ENOMEM and a message, every other
 * rank with "comm_alloc: rank v could not allocate its segment" (WEFT_EIO)
 * or, when rank v could not even take part in the exchange of results
 * (no memory for the table of every rank's result: it then fails its
 * communicator, region.c), WEFT_EPEER. Afterwards nothing of the job is
 * left in /dev/shm and, once the communicator is freed, every block rank v
 * allocated is freed and no segment stays mapped (and, with the
 * sanitizers, LeakSanitizer finds nothing). weft_test_oom_sweep cannot drive this sweep: a
 * failure that fails the communicator leaves nothing to call again, and a
 * new communicator cannot be built under injection (its own allocations
 * would fail first), so each attempt builds a fresh communicator with
 * injection off and injects only around weft_comm_alloc; the checks are
 * weft_test_oom_sweep's (WEFT_ENOMEM, no live block) plus the peers'.
 *
 * On one rank, weft_test_oom_sweep covers the whole of weft_comm_init plus
 * two weft_comm_alloc calls (the first also creates the control pages,
 * which on several ranks on shared memory weft_comm_init makes),
 * with the same /dev/shm check after every failed attempt. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#endif
#endif

#include "base/alloc.h"
#include "base/testing.h"
#include "run/comm_internal.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { RANKS = 3 };

/* Names of job `tag`'s segments still in /dev/shm. */
static size_t left_in_shm(uint64_t tag)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "weft-%016llx-", (unsigned long long)tag);
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return 0;
    size_t left = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "left in /dev/shm: %s\n", e->d_name);
            left++;
        }
    closedir(dir);
    return left;
}

/* Mappings of job `tag`'s segments this process still has. */
static size_t still_mapped(uint64_t tag)
{
    char prefix[64], line[512];
    snprintf(prefix, sizeof prefix, "/weft-%016llx-", (unsigned long long)tag);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    size_t n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, prefix) != NULL;
    fclose(f);
    return n;
}

/* With the sanitizers: LeakSanitizer's verdict now (the forked ranks end
 * with _exit, which skips its check at exit); 0 without them. */
static int leaks_now(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return __lsan_do_recoverable_leak_check();
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return __lsan_do_recoverable_leak_check();
#endif
#endif
    return 0;
}

typedef struct sweep {
    uint32_t victim;
} sweep;

/* One rank of the sweep; exit code 0 when every check passed. */
static int sweep_rank(const weft_comm_config *cfg, void *arg)
{
    const sweep *s = arg;
    uint32_t me = cfg->rank, v = s->victim;
    long attempts = 0;
    uint64_t prev = 0;
    for (long k = 0;; k++) {
        long base = weft__alloc_live();
        weft_comm *c;
        weft_diag d;
        weft_diag_clear(&d);
        if (weft_comm_init(cfg, &c, &d)) {
            fprintf(stderr, "rank %u: init: %s\n", me, d.msg);
            return 90;
        }
        /* Every rank has finished the previous attempt (and its cleanup)
         * once the new communicator is up. */
        if (k)
            CHECK_INT(left_in_shm(prev), 0);
        prev = c->job_tag;
        void *p = (void *)1;
        if (me == v)
            weft__alloc_fail_after(k);
        weft_err e = weft_comm_alloc(c, 8192, &p, &d);
        if (me == v)
            weft__alloc_fail_after(-1);
        bool failed = weft_comm_failed(c);
        if (e == WEFT_OK) {
            /* Every rank succeeds at the same attempt; the memory works. */
            CHECK(p != NULL && ((unsigned char *)p)[8191] == 0);
            /* Own and peers' control pages and segments (the check below
             * sees mappings). */
            CHECK_INT(still_mapped(prev), 2 * RANKS);
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
        } else if (me == v) {
            CHECK_ERR(e, WEFT_ENOMEM);
            CHECK(d.msg[0] != '\0');
            CHECK(p == NULL);
        } else if (failed) {
            CHECK_ERR(e, WEFT_EPEER);
        } else {
            char want[96];
            snprintf(want, sizeof want, "comm_alloc: rank %u could not allocate its segment", v);
            CHECK_ERR(e, WEFT_EIO);
            CHECK_STR(d.msg, want);
            CHECK(p == NULL);
        }
        /* A failed call leaves the communicator usable unless it failed. */
        if (e && !failed)
            CHECK_ERR(weft_comm_barrier(c, NULL), WEFT_OK);
        if (e == WEFT_OK)
            CHECK_INT(left_in_shm(prev), 0); /* after the barrier */
        weft_comm_free(c);
        CHECK_INT(weft__alloc_live(), base);
        CHECK_INT(still_mapped(prev), 0);
        attempts = k;
        if (e == WEFT_OK)
            break;
        if (k > 1000)
            return 91;
    }
    CHECK_INT(leaks_now(), 0);
    if (me == v)
        printf("rank %u of %u: %ld injected failures\n", me, cfg->size, attempts);
    /* At least the segment's allocations were hit (on shared memory the
     * control pages are made at setup, weft__region_init; the 1-rank sweep
     * below makes them in weft_comm_alloc). */
    if (me == v && attempts < 4) {
        fprintf(stderr, "rank %u: only %ld injected failures\n", me, attempts);
        return 92;
    }
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

typedef struct one {
    const weft_comm_config *cfg;
    weft_comm *c;
    uint64_t tag;
} one;

/* A single-rank communicator with two allocations. */
static weft_err one_ctor(void *arg)
{
    one *o = arg;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_comm_init(o->cfg, &o->c, &d);
    if (e)
        return e;
    o->tag = o->c->job_tag;
    void *p = NULL, *q = NULL;
    e = weft_comm_alloc(o->c, 100, &p, &d);
    if (!e)
        e = weft_comm_alloc(o->c, 70000, &q, &d);
    if (e) {
        CHECK(d.msg[0] != '\0');
        weft_comm_free(o->c);
        CHECK_INT(left_in_shm(o->tag), 0);
        CHECK_INT(still_mapped(o->tag), 0);
        return e;
    }
    CHECK(p && q && ((unsigned char *)q)[69999] == 0);
    return WEFT_OK;
}

static void one_dtor(void *arg)
{
    one *o = arg;
    weft_comm_free(o->c);
    CHECK_INT(left_in_shm(o->tag), 0);
    CHECK_INT(still_mapped(o->tag), 0);
}

static int one_rank(const weft_comm_config *cfg, void *arg)
{
    (void)arg;
    one o = {.cfg = cfg};
    long n =
        weft_test_oom_sweep("weft_comm_init + weft_comm_alloc x2, 1 rank", one_ctor, one_dtor, &o);
    if (n < 10)
        fprintf(stderr, "1 rank: only %ld injected failures\n", n);
    CHECK_INT(leaks_now(), 0);
    printf("1 rank: %ld injected failures\n", n);
    CHECK(n >= 10);
    return weft__test_failed > 89 ? 89 : weft__test_failed;
}

int main(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_SHM;
    cfg.timeout_ms = 10000;
    sweep first = {.victim = 0}, last = {.victim = RANKS - 1};
    weft__test_ranks_ok(RANKS, &cfg, sweep_rank, &first, 120000, "comm_alloc sweep, rank 0");
    weft__test_ranks_ok(RANKS, &cfg, sweep_rank, &last, 120000, "comm_alloc sweep, last rank");
    weft__test_ranks_ok(1, &cfg, one_rank, NULL, 120000, "comm_alloc sweep, 1 rank");
    return weft_test_done();
}
