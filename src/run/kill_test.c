/* Failure detection, with 16 ranks (oversubscribed on a 2-CPU host): a
 * rank killed in the middle of collectives makes every other rank return
 * WEFT_EPEER, over shared memory and over TCP; a rank that stops
 * (SIGSTOP) without dying makes the others return WEFT_ETIMEDOUT or
 * WEFT_EPEER, a timeout never before the configured time has passed in
 * the call. Nobody hangs and nobody reports success. Every survivor names
 * the killed rank (over shared memory with its pid), also those that only
 * saw a neighbour fail because of it ("... (reported by rank N)"): over
 * TCP the failing ranks pass the cause on in a notice frame (tcp.c).
 *
 * Deterministic under any load: no wall-clock bound decides a result. The
 * kill runs use a 10-minute timeout, longer than CTest's, so that only
 * detection can end them (a missed death hangs and fails, where "within
 * 4 s" failed on a busy machine); the ranks loop until they fail, the
 * parent strikes once every rank has finished one collective and lets a
 * stopped rank go only once the others gave up, and the timeout's lower
 * bound is measured from the start of the failing call, where the
 * inactivity timer starts (p2p.c). */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { RANKS = 16, VICTIM = 2, COUNT = 1 << 16, CODE_BASE = 50, MSG_BYTES = 256 };

/* Shared with the children: when each saw its error (CLOCK_MONOTONIC ms,
 * 0 before) and its message. */
typedef struct seen {
    volatile long failed_ms[RANKS];
    long call_ms[RANKS]; /* how long the failing call ran */
    char msg[RANKS][MSG_BYTES];
} seen;

typedef struct job {
    int ready[2]; /* children write one byte each after their first collective */
    int sig;
    long signal_ms;
    pid_t victim;
    seen *seen;
} job;

static int loop(weft_comm *c, void *arg)
{
    job *j = arg;
    int32_t *buf = malloc(COUNT * sizeof *buf);
    for (int i = 0; i < COUNT; i++)
        buf[i] = i;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = WEFT_OK;
    int64_t call = 0;
    for (int it = 0; !e; it++) { /* until the victim's fate ends it */
        call = weft__now_ns();
        e = weft_allreduce(c, buf, buf, COUNT, WEFT_INT32, WEFT_MAX, &d);
        if (it == 0 && !e) {
            char one = 1;
            if (write(j->ready[1], &one, 1) != 1)
                return 98;
        }
    }
    free(buf);
    if (e) {
        uint32_t me = weft_comm_rank(c);
        memcpy(j->seen->msg[me], d.msg, MSG_BYTES - 1);
        j->seen->call_ms[me] = (long)((weft__now_ns() - call) / 1000000);
        j->seen->failed_ms[me] = (long)(weft__now_ns() / 1000000);
        fprintf(stderr, "rank %u: %s: %s\n", weft_comm_rank(c), weft_err_name(e), d.msg);
        /* Every later call fails at once. */
        if (weft_allreduce(c, &d, &d, 0, WEFT_INT8, WEFT_SUM, NULL) != WEFT_EPEER ||
            weft_comm_barrier(c, NULL) != WEFT_EPEER)
            return 97;
    }
    return CODE_BASE + (int)e;
}

static int child(const weft_comm_config *cfg, void *arg)
{
    job *j = arg;
    close(j->ready[0]);
    return weft__test_with_comm(cfg, loop, arg);
}

static void strike(const pid_t *pids, uint32_t n, int port, void *arg)
{
    job *j = arg;
    close(j->ready[1]);
    char b;
    uint32_t got = 0;
    struct pollfd p = {.fd = j->ready[0], .events = POLLIN};
    while (got < n && poll(&p, 1, -1) > 0 && read(j->ready[0], &b, 1) == 1)
        got++;
    CHECK_INT(got, n);
    if (got < n)
        return; /* a rank could not start: nothing to strike */
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    j->signal_ms = (long)(weft__now_ns() / 1000000);
    j->victim = pids[VICTIM];
    kill(pids[VICTIM], j->sig);
    if (j->sig == SIGSTOP) {
        /* Leave it stopped until the others gave up, then end it. */
        for (;;) {
            uint32_t done = 0;
            for (uint32_t r = 0; r < n; r++)
                done += r != VICTIM && j->seen->failed_ms[r] != 0;
            if (done == n - 1)
                break;
            struct timespec tick = {0, 10000000};
            nanosleep(&tick, NULL);
        }
        kill(pids[VICTIM], SIGKILL);
    }
    (void)port;
}

/* True when survivor self's message is `died` as it saw it itself, or
 * `died` followed by " (reported by rank N)" for another survivor N that
 * saw it first. */
static bool names_victim(const char *msg, const char *died, uint32_t self)
{
    size_t n = strlen(died);
    unsigned by = RANKS;
    int end = -1;
    bool ok = strncmp(msg, died, n) == 0;
    if (ok && msg[n]) {
        ok = sscanf(msg + n, " (reported by rank %u)%n", &by, &end) == 1 && end >= 0 &&
             msg[n + (size_t)end] == '\0' && by < RANKS && by != VICTIM && by != self;
    }
    if (!ok)
        fprintf(stderr, "rank %u: \"%s\" does not name the killed rank as \"%s\"\n", self, msg,
                died);
    return ok;
}

static void run(weft_transport_choice t, int sig, uint32_t timeout_ms, const char *what)
{
    job j = {.sig = sig};
    j.seen = mmap(NULL, sizeof *j.seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (j.seen == MAP_FAILED || pipe(j.ready) < 0)
        return;
    memset(j.seen, 0, sizeof *j.seen);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = t;
    cfg.timeout_ms = timeout_ms;
    int codes[RANKS];
    long ms[RANKS];
    CHECK_INT(weft__test_ranks(RANKS, &cfg, child, strike, &j, 1200000, codes, ms), 0);
    close(j.ready[0]);
    CHECK_INT(codes[VICTIM], 128 + SIGKILL);
    int timeouts = 0, named = 0;
    char died[64];
    if (t == WEFT_TRANSPORT_SHM)
        snprintf(died, sizeof died, "shm: rank %d (pid %d) died", VICTIM, (int)j.victim);
    else /* TCP does not know the peers' pids */
        snprintf(died, sizeof died, "tcp: rank %d died", VICTIM);
    for (uint32_t r = 0; r < RANKS; r++) {
        if (r == VICTIM)
            continue;
        long after = j.seen->failed_ms[r] - j.signal_ms;
        printf("%s: rank %u: exit code %d, error seen %ld ms after the signal, %ld ms into "
               "the call\n",
               what, r, codes[r], after, j.seen->call_ms[r]);
        if (sig == SIGKILL) {
            CHECK_INT(codes[r], CODE_BASE + WEFT_EPEER); /* detection: no timeout can end it */
            CHECK(names_victim(j.seen->msg[r], died, r));
            named += strncmp(j.seen->msg[r], died, strlen(died)) == 0;
        } else {
            CHECK(codes[r] == CODE_BASE + WEFT_EPEER || codes[r] == CODE_BASE + WEFT_ETIMEDOUT);
            if (codes[r] == CODE_BASE + WEFT_ETIMEDOUT) {
                timeouts++;
                CHECK(j.seen->call_ms[r] >= (long)timeout_ms);
            }
        }
    }
    if (sig == SIGSTOP)
        CHECK(timeouts >= 1);
    if (sig == SIGKILL)
        CHECK(named == RANKS - 1);
    (void)ms;
    munmap(j.seen, sizeof *j.seen);
}

int main(void)
{
    run(WEFT_TRANSPORT_SHM, SIGKILL, 600000, "shm kill");
    run(WEFT_TRANSPORT_TCP, SIGKILL, 600000, "tcp kill");
    /* The timeout also bounds the setup, which 16 oversubscribed ranks
     * under the suite's load did not finish within 1 s. */
    run(WEFT_TRANSPORT_SHM, SIGSTOP, 10000, "shm stop");
    run(WEFT_TRANSPORT_TCP, SIGSTOP, 10000, "tcp stop");
    return weft_test_done();
}
