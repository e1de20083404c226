/* Checkpoints in peers' memory and rejoining (weft/ckpt.h) under
 * weft_launch with restarts (weft launch --restart).
 *
 * The program is its own job: without WEFT_RANK it is the driver, which
 * launches copies of itself (/proc/self/exe SCENARIO) and checks what they
 * wrote to a shared log; with WEFT_RANK it is a rank of SCENARIO (kill,
 * lost or misuse), configured by CKPT_TEST_LOG (the log, required),
 * CKPT_TEST_PLACEMENT and CKPT_TEST_TRIALS, as tests/cli/ckpt_launch.sh
 * also runs it under the weft launch command.
 *
 *  kill: 4 ranks run steps of an allreduce whose sum they accumulate, and
 *    save their state every step (two buffers: the sum, and a pattern of
 *    odd size, several chunks, whose every byte differs between versions,
 *    so a torn checkpoint cannot pass). After each join one rank (the
 *    victim of that generation) draws one of the next 4 steps and, when it
 *    starts it, arms a timer of a random length that kills it with SIGALRM
 *    at whatever it is doing then (an allreduce, a save in flight, its
 *    snapshot copy), or raises it after the last step when the timer did
 *    not fire. Each rank checks after every join that its buffers
 *    are byte for byte the version join restored, and at the end the sum
 *    of every step. 30 trials over shared memory with ring:2 placement, 20
 *    over TCP with group:1: 50 restarts, each a rank killed at a random
 *    moment.
 *  lost: ring:1 on 4 ranks; after version 5 is complete everywhere rank 2
 *    kills rank 1 and itself, so rank 1's only replica dies with it: join
 *    fails on every rank with the named error. The same with group:1,
 *    where rank 3 kills rank 2, its group's other member.
 *  misuse: 4 ranks, no restarts. A join that fails on every rank (rank 0
 *    asks for group placement, the others for ring) leaves no
 *    communicator, and save then refuses ("not joined") instead of
 *    posting a round to a helper thread that no longer runs (the next
 *    save or wait waited for it forever). After a good join and save 1,
 *    rank 0 saves version 1 again while the others save 2: every rank
 *    fails alike (rank 0 alone refusing left the others in the
 *    allreduce until the timeout). Ranks 1-3 then register a second,
 *    larger buffer on the same state and join again: the snapshots grow
 *    with it (they kept the first join's 512 bytes, and save wrote 4608
 *    into them).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "weft/ckpt.h"
#include "weft/comm.h"

enum { RANKS = 4, STEPS = 160, PATTERN_BYTES = 3 * 65536 + 13, CHUNK = 65536 };

static int log_fd = -1;

static void logf_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_line(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    (void)!write(log_fd, line, (size_t)n);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    return x;
}

/* Byte i of rank r's pattern at version v: consecutive versions differ by
 * 7 (mod 256) in every byte. */
static unsigned char pattern(uint32_t r, uint64_t v, size_t i)
{
    return (unsigned char)(v * 7 + r * 13 + i * 131);
}

static uint64_t triangle(uint64_t n)
{
    return n * (n + 1) / 2;
}

/* The sum after v steps: step s adds sum over ranks of (r+1)(s+1). */
static uint64_t acc_at(uint64_t v)
{
    return triangle(RANKS) * triangle(v);
}

typedef struct state {
    uint64_t acc[2]; /* the sum and the version it belongs to */
    unsigned char *pat;
} state;

static void fill(state *s, uint32_t r, uint64_t v)
{
    s->acc[0] = acc_at(v);
    s->acc[1] = v;
    for (size_t i = 0; i < PATTERN_BYTES; i++)
        s->pat[i] = pattern(r, v, i);
}

/* 0 when s is exactly version v of rank r. */
static size_t wrong_bytes(const state *s, uint32_t r, uint64_t v)
{
    size_t bad = (s->acc[0] != acc_at(v)) + (s->acc[1] != v);
    for (size_t i = 0; i < PATTERN_BYTES; i++)
        bad += s->pat[i] != pattern(r, v, i);
    return bad;
}

/* Arms a timer of 1 .. 3000 us (a step takes some hundreds of us to
 * milliseconds here: the timer fires in the allreduce, the save's copy,
 * the helper's sends or the next step) chosen from h. */
static void arm_kill(uint64_t h)
{
    struct itimerval it = {{0, 0}, {0, (suseconds_t)(h % 3000) + 1}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm(void)
{
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static int rank_kill(const weft_comm_config *cfg, const char *placement, uint64_t trials)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_ckpt_config cc;
    if (weft_ckpt_config_parse(placement, &cc, &d)) {
        logf_line("FAIL rank %u: %s", cfg->rank, d.msg);
        return 2;
    }
    cc.chunk_bytes = CHUNK;
    weft_ckpt *k;
    state s = {{0, 0}, malloc(PATTERN_BYTES)};
    if (!s.pat || weft_ckpt_new(&cc, &k, &d) || weft_ckpt_register(k, s.acc, sizeof s.acc, &d) ||
        weft_ckpt_register(k, s.pat, PATTERN_BYTES, &d)) {
        logf_line("FAIL rank %u: %s", cfg->rank, d.msg);
        return 2;
    }
    fill(&s, cfg->rank, 0);
    uint32_t r = cfg->rank;
    for (;;) {
        uint64_t v;
        int64_t t0 = weft__now_ns();
        weft_err e = weft_ckpt_join(k, cfg, &v, &d);
        if (e) {
            logf_line("FAIL rank %u restart %u: join: %s", r, cfg->restart, d.msg);
            return 3;
        }
        uint64_t gen = weft_ckpt_generation(k);
        size_t bad = v ? wrong_bytes(&s, r, v) : 0;
        if (bad)
            logf_line("FAIL rank %u generation %" PRIu64 ": %zu bytes differ from version %" PRIu64,
                      r, gen, bad, v);
        if (!v)
            fill(&s, r, 0);
        if (gen > 1)
            logf_line("restored rank %u generation %" PRIu64 " version %" PRIu64
                      " restart %u %s %.1f ms",
                      r, gen, v, cfg->restart, bad ? "WRONG" : "exact",
                      (double)(weft__now_ns() - t0) / 1e6);
        /* The victim of this generation dies in a step drawn from those
         * left, at a moment drawn within it. */
        uint64_t h = mix(gen * UINT64_C(0x9e3779b97f4a7c15));
        bool victim = gen <= trials && mix(gen) % RANKS == r;
        uint64_t kill_step = v + h % 4;
        weft_comm *c = weft_ckpt_comm(k);
        uint64_t step = v;
        for (; step < STEPS && !e; step++) {
            if (victim && step == kill_step)
                arm_kill(h >> 20);
            uint64_t x = (uint64_t)(r + 1) * (step + 1);
            e = weft_allreduce(c, &x, &x, 1, WEFT_UINT64, WEFT_SUM, &d);
            if (e)
                break;
            if (x != triangle(RANKS) * (step + 1))
                logf_line("FAIL rank %u step %" PRIu64 ": allreduce gave %" PRIu64, r, step, x);
            s.acc[0] += x;
            s.acc[1] = step + 1;
            for (size_t i = 0; i < PATTERN_BYTES; i++)
                s.pat[i] = pattern(r, step + 1, i);
            e = weft_ckpt_save(k, step + 1, &d);
        }
        if (!e && victim) {
            disarm();
            raise(SIGALRM); /* the timer was longer than the job */
        }
        if (!e)
            e = weft_ckpt_wait(k, &d);
        uint64_t sum = s.acc[0];
        if (!e)
            e = weft_allreduce(c, &sum, &sum, 1, WEFT_UINT64, WEFT_SUM, &d);
        if (e)
            continue; /* a peer failed: rejoin */
        if (sum != RANKS * acc_at(STEPS) || s.acc[0] != acc_at(STEPS))
            logf_line("FAIL rank %u: final sum %" PRIu64 ", own %" PRIu64, r, sum, s.acc[0]);
        logf_line("done rank %u generation %" PRIu64 " sum %" PRIu64, r, gen, sum);
        break;
    }
    weft_ckpt_free(k);
    free(s.pat);
    return 0;
}

static int rank_lost(const weft_comm_config *cfg, const char *placement, uint32_t owner,
                     uint32_t holder)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_ckpt_config cc;
    if (weft_ckpt_config_parse(placement, &cc, &d))
        return 2;
    weft_ckpt *k;
    uint64_t x[512];
    if (weft_ckpt_new(&cc, &k, &d) || weft_ckpt_register(k, x, sizeof x, &d))
        return 2;
    uint32_t r = cfg->rank;
    uint64_t v;
    for (;;) {
        if (weft_ckpt_join(k, cfg, &v, &d)) {
            logf_line("join failed on rank %u restart %u: %s", r, cfg->restart, d.msg);
            weft_ckpt_free(k);
            return 3;
        }
        weft_comm *c = weft_ckpt_comm(k);
        int32_t pids[RANKS], me = (int32_t)getpid();
        weft_err e = weft_allgather(c, &me, pids, 1, WEFT_INT32, &d);
        for (uint64_t s = v + 1; s <= 5 && !e; s++) {
            for (size_t i = 0; i < 512; i++)
                x[i] = s * 1000 + r;
            e = weft_ckpt_save(k, s, &d);
        }
        if (!e)
            e = weft_ckpt_wait(k, &d);
        if (!e && weft_ckpt_generation(k) == 1 && r == holder) {
            kill(pids[owner], SIGKILL);
            raise(SIGKILL);
        }
        while (!e) /* until the deaths reach this rank */
            e = weft_allreduce(c, x, x, 1, WEFT_UINT64, WEFT_SUM, &d);
    }
}

static int rank_misuse(const weft_comm_config *cfg)
{
    weft_diag d;
    weft_diag_clear(&d);
    uint32_t r = cfg->rank;
    uint64_t x[64] = {0}, v = 0;
    weft_ckpt_config cc;
    weft_ckpt *k;
    if (weft_ckpt_config_parse(r == 0 ? "group:1" : "ring:1", &cc, &d) ||
        weft_ckpt_new(&cc, &k, &d) || weft_ckpt_register(k, x, sizeof x, &d))
        return 2;
    weft_err e = weft_ckpt_join(k, cfg, &v, &d);
    logf_line("misuse rank %u join %d: %s", r, (int)e, d.msg);
    weft_diag_clear(&d);
    e = weft_ckpt_save(k, 1, &d);
    logf_line("misuse rank %u comm %s save %d: %s", r, weft_ckpt_comm(k) ? "set" : "none", (int)e,
              d.msg);
    /* Ranks 1-3 keep k (no join succeeded: they may still register) and
     * add a buffer 8 times larger; rank 0 starts over with ring. */
    static uint64_t y[512];
    for (size_t i = 0; i < 512; i++)
        y[i] = r * 1000 + i;
    if (r == 0) {
        weft_ckpt_free(k);
        if (weft_ckpt_config_parse("ring:1", &cc, &d) || weft_ckpt_new(&cc, &k, &d) ||
            weft_ckpt_register(k, x, sizeof x, &d))
            return 2;
    }
    if (weft_ckpt_register(k, y, sizeof y, &d) || weft_ckpt_join(k, cfg, &v, &d) ||
        weft_ckpt_save(k, 1, &d)) {
        logf_line("FAIL rank %u: %s", r, d.msg);
        weft_ckpt_free(k);
        return 2;
    }
    e = weft_ckpt_save(k, r == 0 ? 1 : 2, &d);
    logf_line("misuse rank %u resave %d: %s", r, (int)e, d.msg);
    if (!e)
        e = weft_ckpt_wait(k, &d);
    weft_ckpt_free(k);
    return 0;
}

static int rank_main(const char *scenario)
{
    const char *path = getenv("CKPT_TEST_LOG");
    log_fd = path ? open(path, O_WRONLY | O_APPEND) : -1;
    if (log_fd < 0)
        return 2;
    weft_comm_config cfg;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_comm_config_from_env(&cfg, &d)) {
        logf_line("FAIL config: %s", d.msg);
        return 2;
    }
    const char *placement = getenv("CKPT_TEST_PLACEMENT");
    if (strcmp(scenario, "lost") == 0) {
        /* ring:1: rank 1's holder is rank 2; group:1: rank 2's is rank 3. */
        bool group = placement && strncmp(placement, "group", 5) == 0;
        return rank_lost(&cfg, placement ? placement : "ring:1", group ? 2 : 1, group ? 3 : 2);
    }
    if (strcmp(scenario, "misuse") == 0)
        return rank_misuse(&cfg);
    const char *trials = getenv("CKPT_TEST_TRIALS");
    return rank_kill(&cfg, placement ? placement : "ring:2",
                     trials ? strtoull(trials, NULL, 10) : 0);
}

/* The driver: runs SCENARIO under weft_launch with `restarts`; returns the
 * log's text (malloc'd) and the result. */
static char *run_job(const char *scenario, uint32_t restarts, weft_launch_result *res)
{
    char path[] = "/tmp/weft_ckpt_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return NULL;
    setenv("CKPT_TEST_LOG", path, 1);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n > 0 ? n : 0] = '\0';
    char *argv[] = {self, (char *)scenario, NULL};
    weft_launch_opts o = {.ranks = RANKS, .argv = argv, .restarts = restarts, .grace_ms = 2000};
    weft_diag d;
    weft_diag_clear(&d);
    int64_t t0 = weft__now_ns();
    CHECK_ERR(weft_launch(&o, res, &d), WEFT_OK);
    printf("%s: %u restarts in %.1f s, status %d %s\n", scenario, res->restarted,
           (double)(weft__now_ns() - t0) / 1e9, res->status, res->message);
    off_t len = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)len + 1);
    if (text && len > 0)
        (void)!pread(fd, text, (size_t)len, 0);
    close(fd);
    unlink(path);
    return text;
}

static size_t count(const char *text, const char *what)
{
    size_t k = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        k++;
    return k;
}

static void kill_trials(const char *placement, const char *transport, uint32_t trials)
{
    char t[16];
    snprintf(t, sizeof t, "%u", trials);
    setenv("CKPT_TEST_PLACEMENT", placement, 1);
    setenv("CKPT_TEST_TRIALS", t, 1);
    setenv("WEFT_TRANSPORT", transport, 1);
    weft_launch_result res;
    char *text = run_job("kill", trials, &res);
    CHECK_INT(res.status, 0);
    CHECK_INT(res.restarted, trials);
    CHECK_INT(count(text, "FAIL"), 0);
    CHECK_INT(count(text, "WRONG"), 0);
    CHECK_INT(count(text, "done rank"), RANKS);
    char want[64];
    snprintf(want, sizeof want, "sum %" PRIu64 "\n", RANKS * acc_at(STEPS));
    CHECK_INT(count(text, want), RANKS);
    /* Every generation after the first restored every rank, the
     * restarted one included (restart >= 1 in its line). */
    CHECK(count(text, "restored rank") >= (size_t)trials * RANKS);
    if (count(text, "FAIL") || res.status || getenv("CKPT_TEST_SHOW"))
        fputs(text ? text : "", stderr);
    free(text);
}

/* Both holders of nothing: the owner and its only holder die at once. */
static void lost(const char *placement, const char *want)
{
    setenv("CKPT_TEST_PLACEMENT", placement, 1);
    weft_launch_result res;
    char *text = run_job("lost", 2, &res);
    CHECK_INT(res.restarted, 2);
    CHECK_INT(res.status, 3);
    CHECK(count(text, want) >= 1);
    if (!count(text, want))
        fputs(text ? text : "", stderr);
    free(text);
}

/* A failed join and ranks disagreeing on a version: errors, no hang. */
static void misuse(void)
{
    weft_launch_result res;
    char *text = run_job("misuse", 0, &res);
    CHECK_INT(res.status, 0);
    CHECK_INT(count(text, "FAIL"), 0);
    /* rank 0's view of the placement against rank 1's. */
    CHECK_INT(count(text, "join 2: ckpt: ranks disagree on the placement: rank "), RANKS);
    CHECK_INT(count(text, "comm none save 2: ckpt: not joined (call weft_ckpt_join)\n"), RANKS);
    CHECK_INT(count(text, "resave 2: ckpt: ranks disagree on the version to save: 1 .. 2\n"),
              RANKS);
    if (count(text, "resave 2: ckpt: ranks disagree") != RANKS)
        fputs(text ? text : "", stderr);
    free(text);
}

int main(int argc, char **argv)
{
    if (getenv("WEFT_RANK"))
        return rank_main(argc > 1 ? argv[1] : "kill");
    /* A hang guard far beyond the job's seconds: the ranks die with the
     * driver (weft_launch's parent-death signal). */
    alarm(240);
    setenv("WEFT_TIMEOUT", "20", 1);
    misuse();
    kill_trials("ring:2", "auto", 30);
    kill_trials("group:1", "tcp", 20);

    unsetenv("WEFT_TRANSPORT");
    lost("ring:1", "ckpt: the checkpoint of rank 1 (version 5) is lost: rank 1 restarted and so "
                   "did its holder rank 2 (1 replica, ring placement)");
    lost("group:1", "ckpt: the checkpoint of rank 2 (version 5) is lost: rank 2 restarted and so "
                    "did its holder rank 3 (1 replica, group placement)");

    weft_ckpt_config cc;
    weft_diag d;
    CHECK_ERR(weft_ckpt_config_parse("group:3", &cc, &d), WEFT_OK);
    CHECK_INT(cc.replicas, 3);
    CHECK_INT(cc.placement, WEFT_CKPT_PLACE_GROUP);
    CHECK_ERR(weft_ckpt_config_parse("ring:0", &cc, &d), WEFT_EINVAL);
    CHECK(strcmp(d.msg, "ckpt: replicas in 'ring:0': expected 1 .. 8") == 0);
    CHECK_ERR(weft_ckpt_config_parse("star", &cc, &d), WEFT_EINVAL);
    CHECK(strcmp(d.msg, "ckpt: placement 'star': expected ring or group, optionally with "
                        ":REPLICAS (ring:2)") == 0);
    return weft_test_done();
}
