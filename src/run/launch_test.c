/* weft_launch: ranks get their environment and join a communicator through
 * weft_comm_init_env (this program runs itself as the ranks); a failing rank
 * stops the others quickly with its status, and what the stopped ranks
 * left in /dev/shm is removed; a command that cannot run is reported; bad
 * options are refused. Also weft_comm_config_from_env. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/clock.h"
#include "run/comm_internal.h"
#include "run/liveness.h"
#include "run/transport/shm/leftovers.h"
#include "weft/comm.h"

/* The rank body when run as "launch_test rank": joins, checks an
 * allreduce, and exits 0 only if everything is right. */
static int rank_main(void)
{
    weft_comm *c;
    weft_diag d;
    weft_err e = weft_comm_init_env(&c, &d);
    if (e) {
        fprintf(stderr, "rank: %s: %s\n", weft_err_name(e), d.msg);
        return 10;
    }
    uint32_t n = weft_comm_size(c), me = weft_comm_rank(c);
    int64_t v[1000], want = 0;
    for (int i = 0; i < 1000; i++)
        v[i] = (int64_t)me * 1000 + i;
    for (uint32_t k = 0; k < n; k++)
        want += (int64_t)k * 1000 + 999;
    e = weft_allreduce(c, v, v, 1000, WEFT_INT64, WEFT_SUM, &d);
    int rc = (e || v[999] != want) ? 11 : 0;
    if (rc)
        fprintf(stderr, "rank %u: %s %s\n", me, weft_err_name(e), d.msg);
    printf("rank %u of %u ok\n", me, n);
    weft_comm_free(c);
    return rc;
}

/* How many /dev/shm names start with "weft-<tag>-". */
static int names_of_job(unsigned long long tag)
{
    char prefix[40];
    snprintf(prefix, sizeof prefix, "weft-%016llx-", tag);
    int found = 0;
    DIR *dir = opendir("/dev/shm");
    struct dirent *ent;
    while (dir && (ent = readdir(dir)) != NULL)
        found += strncmp(ent->d_name, prefix, strlen(prefix)) == 0;
    if (dir)
        closedir(dir);
    return found;
}

/* The rank body of "launch_test leak": rank 1 writes its pid to
 * $WEFT_TEST_TAG_FILE.pid and starts a weft_comm_alloc that rank 0 never
 * joins, so it has created a segment name and waits for the others'. Rank
 * 0, once it sees that name, writes the job tag to $WEFT_TEST_TAG_FILE and
 * kills rank 1 (a rank that dies in the middle of an allocation), then
 * waits to be stopped by weft launch. */
static int rank_leak(void)
{
    weft_comm *c;
    weft_diag d;
    if (weft_comm_init_env(&c, &d))
        return 10;
    unsigned long long tag = c->job_tag;
    char pid_file[600];
    snprintf(pid_file, sizeof pid_file, "%s.pid", getenv("WEFT_TEST_TAG_FILE"));
    if (weft_comm_rank(c) == 1) {
        FILE *f = fopen(pid_file, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        void *p;
        weft_comm_alloc(c, 1 << 20, &p, &d);
        for (;;)
            pause(); /* killed before or after: never exits by itself */
    }
    int64_t give_up = weft__now_ns() + 240000000000LL; /* a hang guard, as the harness's */
    while (names_of_job(tag) == 0 && weft__now_ns() < give_up)
        usleep(1000);
    FILE *f = fopen(getenv("WEFT_TEST_TAG_FILE"), "w");
    if (f) {
        fprintf(f, "%llx\n", tag);
        fclose(f);
    }
    int pid = 0;
    f = fopen(pid_file, "r");
    if (f && fscanf(f, "%d", &pid) == 1 && pid > 0)
        kill(pid, SIGKILL);
    if (f)
        fclose(f);
    for (;;)
        pause();
}

/* A job stopped while a rank had a segment name that no peer mapped yet
 * leaves nothing in /dev/shm: weft launch removes it. */
static void test_leftovers(void)
{
    char file[] = "/tmp/weft-launch-tag-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    setenv("WEFT_TEST_TAG_FILE", file, 1);
    char *argv[] = {"/proc/self/exe", "leak", NULL};
    weft_launch_opts o = {.ranks = 2, .argv = argv, .grace_ms = 500};
    weft_launch_result res;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 128 + SIGKILL);
    CHECK_INT(res.failed_rank, 1);
    unsigned long long tag = 0;
    FILE *f = fopen(file, "r");
    CHECK(f && fscanf(f, "%llx", &tag) == 1 && tag != 0);
    if (f)
        fclose(f);
    CHECK_INT(names_of_job(tag), 0);
    unlink(file);
    char pid_file[600];
    snprintf(pid_file, sizeof pid_file, "%s.pid", file);
    unlink(pid_file);
    unsetenv("WEFT_TEST_TAG_FILE");
}

/* The pid rule: a transport segment of a listed process goes, one of a
 * process whose pid merely starts with the same digits stays. */
static void test_leftover_names(void)
{
    const char *mine = "/weft-424242-00000000deadbeef", *other = "/weft-4242420-00000000deadbeef";
    for (int i = 0; i < 2; i++) {
        int fd = shm_open(i ? other : mine, O_CREAT | O_RDWR, 0600);
        CHECK(fd >= 0);
        if (fd >= 0)
            close(fd);
    }
    pid_t pids[2] = {0, 424242};
    CHECK_INT(weft__shm_remove_leftovers(0x1234, pids, 2), 1);
    CHECK(shm_unlink(mine) != 0);
    CHECK(shm_unlink(other) == 0);
}

static void test_job(void)
{
    char *argv[] = {"/proc/self/exe", "rank", NULL};
    weft_launch_opts o = {.ranks = 4, .argv = argv};
    weft_launch_result res;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 0);
    CHECK_INT(res.failed_rank, -1);
    CHECK_STR(res.message, "");
}

static void test_failure(void)
{
    /* Rank 2 fails at once; the others would sleep longer than CTest's
     * TIMEOUT, so returning at all shows that they were stopped (no clock
     * decides it). */
    char *argv[] = {"sh", "-c", "test \"$WEFT_RANK\" = 2 && exit 3; sleep 3600", NULL};
    weft_launch_opts o = {.ranks = 4, .argv = argv, .grace_ms = 500};
    weft_launch_result res;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 3);
    CHECK_INT(res.failed_rank, 2);
    CHECK_CONTAINS(res.message, "rank 2 (pid ");
    CHECK_CONTAINS(res.message, ") exited with status 3");

    /* A rank killed by a signal. */
    char *argv2[] = {"sh", "-c", "test \"$WEFT_RANK\" = 1 && kill -9 $$; sleep 3600", NULL};
    o.argv = argv2;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 128 + SIGKILL);
    CHECK_INT(res.failed_rank, 1);
    CHECK_CONTAINS(res.message, "was killed by signal 9 (Killed)");

    /* Ranks that ignore SIGTERM are killed after the grace period. Rank 0
     * fails only once the others have set up their trap (marker files). */
    char dir[] = "/tmp/weft-launch-test-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char script[512];
    snprintf(script, sizeof script,
             "if test \"$WEFT_RANK\" = 0; then "
             "while test $(ls %s | wc -l) -lt 3; do sleep 0.02; done; exit 1; fi; "
             "trap '' TERM; touch %s/$WEFT_RANK; sleep 3600 & wait; sleep 3600",
             dir, dir);
    char *argv3[] = {"sh", "-c", script, NULL};
    o.argv = argv3;
    /* The grace period passes before the SIGKILL (a lower bound, which
     * load cannot break); returning at all shows the SIGKILL came. */
    int64_t t0 = weft__now_ns();
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    int64_t ms = (weft__now_ns() - t0) / 1000000;
    CHECK(ms >= 500);
    CHECK_INT(res.status, 1);
    CHECK_INT(res.failed_rank, 0);
    for (int r = 1; r < 4; r++) {
        char f[600];
        snprintf(f, sizeof f, "%s/%d", dir, r);
        unlink(f);
    }
    rmdir(dir);

    char *argv4[] = {"/nonexistent/weft-rank", NULL};
    o.argv = argv4;
    o.ranks = 2;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 127);
}

/* Waits until file holds a pid; 0 after 240 s (a hang guard, as the
 * harness's for forked ranks: the ranks write it as they start). */
static int read_pid(const char *file)
{
    int64_t give_up = weft__now_ns() + 240000000000LL;
    for (;;) {
        int pid = 0;
        FILE *f = fopen(file, "r");
        if (f) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0 || weft__now_ns() > give_up)
            return pid;
        usleep(2000);
    }
}

/* A rank that is stopped (SIGSTOP) makes its peers fail: the launcher
 * names it, not only the peer that exited first. Rank 0 exits 1 once /proc
 * shows rank 2 stopped (a state, not a delay). */
static void test_stopped(void)
{
    char dir[] = "/tmp/weft-launch-stop-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char script[1024];
    snprintf(script, sizeof script,
             "case $WEFT_RANK in "
             "2) echo $$ > %s/p.tmp; mv %s/p.tmp %s/p; kill -STOP $$; sleep 30;; "
             "0) while :; do p=$(cat %s/p 2>/dev/null) && "
             "test \"$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)\" = T && break; sleep 0.01; "
             "done; exit 1;; "
             "*) sleep 30;; esac",
             dir, dir, dir, dir);
    char *argv[] = {"sh", "-c", script, NULL};
    weft_launch_opts o = {.ranks = 3, .argv = argv, .grace_ms = 500};
    weft_launch_result res;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 1);
    CHECK_INT(res.failed_rank, 0);
    char pfile[600], want[256];
    snprintf(pfile, sizeof pfile, "%s/p", dir);
    int p2 = read_pid(pfile);
    snprintf(want, sizeof want,
             "rank 2 (pid %d) was stopped by signal %d (%s), and then rank 0 (pid ", p2, SIGSTOP,
             strsignal(SIGSTOP));
    CHECK(strncmp(res.message, want, strlen(want)) == 0);
    CHECK_CONTAINS(res.message, ") exited with status 1");
    /* SIGCONT came with SIGTERM: the stopped rank is gone, not left stopped. */
    CHECK(p2 > 0 && !weft__pid_alive(p2));
    unlink(pfile);
    rmdir(dir);
}

/* SIGKILL of the launcher (which cannot be caught) takes the ranks with it:
 * each has the parent-death signal. The launcher runs in a child of the
 * test; the ranks write their pids, then sleep far longer than the test. */
static void test_launcher_killed(void)
{
    char dir[] = "/tmp/weft-launch-orphan-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char script[512];
    snprintf(script, sizeof script,
             "echo $$ > %s/$WEFT_RANK.tmp && mv %s/$WEFT_RANK.tmp %s/$WEFT_RANK && exec sleep 120",
             dir, dir, dir);
    pid_t launcher = fork();
    if (launcher == 0) {
        char *argv[] = {"sh", "-c", script, NULL};
        weft_launch_opts o = {.ranks = 3, .argv = argv};
        weft_launch_result res;
        weft_launch(&o, &res, NULL);
        _exit(0);
    }
    CHECK(launcher > 0);
    int pids[3];
    char file[600];
    for (int r = 0; r < 3; r++) {
        snprintf(file, sizeof file, "%s/%d", dir, r);
        pids[r] = read_pid(file);
        CHECK(pids[r] > 0);
    }
    kill(launcher, SIGKILL);
    int st;
    CHECK(waitpid(launcher, &st, 0) == launcher && WIFSIGNALED(st));
    /* A hang guard (the kernel sends the signal as the launcher exits). */
    int64_t give_up = weft__now_ns() + 240000000000LL;
    for (int r = 0; r < 3; r++) {
        while (pids[r] > 0 && weft__pid_alive(pids[r]) && weft__now_ns() < give_up)
            usleep(2000);
        CHECK(pids[r] > 0 && !weft__pid_alive(pids[r]));
        if (pids[r] > 0)
            kill(pids[r], SIGKILL); /* the old code left them running */
        snprintf(file, sizeof file, "%s/%d", dir, r);
        unlink(file);
    }
    rmdir(dir);
}

static void test_env(void)
{
    char *argv[] = {"sh", "-c",
                    "test \"$WEFT_SIZE\" = 3 && test -n \"$WEFT_ADDR\" && "
                    "test ${#WEFT_SECRET} = 64 && "
                    "{ test \"$WEFT_RANK\" != 0 || test -n \"$WEFT_LISTEN_FD\"; }",
                    NULL};
    weft_launch_opts o = {.ranks = 3, .argv = argv};
    weft_launch_result res;
    CHECK_ERR(weft_launch(&o, &res, NULL), WEFT_OK);
    CHECK_INT(res.status, 0);

    weft_diag d;
    o.ranks = 0;
    CHECK_ERR(weft_launch(&o, &res, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "launch: 0 ranks is not in 1 .. 4096");
    o.ranks = 1;
    o.argv = NULL;
    CHECK_ERR(weft_launch(&o, &res, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "launch: no command given");
}

static void test_config_from_env(void)
{
    weft_comm_config c;
    weft_diag d;
    unsetenv("WEFT_RANK");
    setenv("WEFT_SIZE", "4", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_RANK: expected 0 .. 3, got '(unset)'");
    setenv("WEFT_RANK", "4", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_RANK: expected 0 .. 3, got '4'");
    setenv("WEFT_RANK", "3", 1);
    setenv("WEFT_ADDR", "10.0.0.1:5000", 1);
    setenv("WEFT_TIMEOUT", "2.5", 1);
    setenv("WEFT_TRANSPORT", "tcp", 1);
    setenv("WEFT_TCP_CONNS", "4", 1);
    setenv("WEFT_SOCKET_IFNAME", "eth0,eth1", 1);
    setenv("WEFT_SECRET", "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_OK);
    CHECK_INT(c.rank, 3);
    CHECK_INT(c.size, 4);
    CHECK_STR(c.addr, "10.0.0.1:5000");
    CHECK_INT(c.timeout_ms, 2500);
    CHECK_INT(c.transport, WEFT_TRANSPORT_TCP);
    CHECK_INT(c.tcp_conns, 4);
    CHECK_STR(c.ifname, "eth0,eth1");
    CHECK(c.has_secret && c.secret[1] == 0x11 && c.secret[31] == 0xff);
    CHECK_INT(c.listen_fd, -1);
    setenv("WEFT_TIMEOUT", "-1", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_TIMEOUT: expected seconds in (0, 4000000], got '-1'");
    unsetenv("WEFT_TIMEOUT");
    setenv("WEFT_TRANSPORT", "ib", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_TRANSPORT: expected auto, shm or tcp, got 'ib'");
    unsetenv("WEFT_TRANSPORT");
    setenv("WEFT_SECRET", "xyz", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_SECRET: expected 64 hex digits");
    unsetenv("WEFT_SECRET");
    setenv("WEFT_TCP_CONNS", "0", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_TCP_CONNS: expected 1 .. 16, got '0'");
    unsetenv("WEFT_TCP_CONNS");
    /* WEFT_CPUS: the CPUs the host gives its ranks (host_cpus.h). */
    unsetenv("WEFT_CPUS");
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_OK);
    CHECK_INT(c.cpus, 0);
    setenv("WEFT_CPUS", "16", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_OK);
    CHECK_INT(c.cpus, 16);
    const char *bad_cpus[] = {"0", "-2", "16x", "65537", ""};
    for (size_t i = 0; i < sizeof bad_cpus / sizeof *bad_cpus; i++) {
        setenv("WEFT_CPUS", bad_cpus[i], 1);
        CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
        char want[80];
        snprintf(want, sizeof want, "WEFT_CPUS: expected 1 .. 65536, got '%s'", bad_cpus[i]);
        CHECK_STR(d.msg, want);
    }
    unsetenv("WEFT_CPUS");
    /* WEFT_HOST and WEFT_RELAY (docs/netns.md, "Relaying through host-mates"). */
    setenv("WEFT_HOST", "h1", 1);
    const char *relay[][2] = {{"off", "0"},      {"0", "0"},     {"on", "1048576"},   {"1", "1"},
                              {"4M", "4194304"}, {"3K", "3072"}, {"2G", "2147483648"}};
    for (size_t i = 0; i < sizeof relay / sizeof *relay; i++) {
        setenv("WEFT_RELAY", relay[i][0], 1);
        CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_OK);
        char got[32];
        snprintf(got, sizeof got, "%llu", (unsigned long long)c.relay_min);
        CHECK_STR(got, relay[i][1]);
        CHECK_STR(c.host, "h1");
    }
    const char *bad[] = {"yes", "-1", "4T", "M", "99999999999999999999", "1.5M", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("WEFT_RELAY", bad[i], 1);
        CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_EINVAL);
        char want[160];
        snprintf(want, sizeof want,
                 "WEFT_RELAY: expected off, on or a size in bytes (K, M, G allowed), got '%s'",
                 bad[i]);
        CHECK_STR(d.msg, want);
    }
    unsetenv("WEFT_RELAY");
    setenv("WEFT_HOST", "", 1);
    CHECK_ERR(weft_comm_config_from_env(&c, &d), WEFT_OK);
    CHECK(c.host == NULL);
    unsetenv("WEFT_HOST");
    const char *vars[] = {"WEFT_RANK", "WEFT_SIZE", "WEFT_ADDR", "WEFT_TCP_CONNS",
                          "WEFT_SOCKET_IFNAME"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "rank") == 0)
        return rank_main();
    if (argc == 2 && strcmp(argv[1], "leak") == 0)
        return rank_leak();
    test_job();
    test_leftovers();
    test_leftover_names();
    test_failure();
    test_stopped();
    test_launcher_killed();
    test_env();
    test_config_from_env();
    return weft_test_done();
}
