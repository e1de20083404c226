/* WEFT_NETNS: the TCP transport's data sockets live in another network
 * namespace while the bootstrap stays in the caller's.
 *
 * Without root only the error paths and the environment parsing run. As
 * root, a child process holds a fresh namespace (only loopback, brought
 * up), and the test checks that entering it switches the calling thread
 * and leaving it switches back, that interfaces are resolved inside it, and
 * that two ranks whose bootstrap runs in the root namespace connect their
 * data sockets inside it: rank 0 counts the established TCP sockets of that
 * namespace (/proc/PID/net/tcp), which must be exactly the transport's
 * 2 ranks x 2 connections, both ends. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/sock.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

static ino_t ns_inode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void test_errors(void)
{
    weft_diag d;
    int saved = 7;
    CHECK_ERR(weft__sock_netns_enter(NULL, "WEFT_NETNS", &saved, &d), WEFT_OK);
    CHECK_INT(saved, -1);
    CHECK_ERR(weft__sock_netns_enter("", "WEFT_NETNS", &saved, &d), WEFT_OK);
    CHECK_INT(saved, -1);
    CHECK_ERR(weft__sock_netns_leave(-1, &d), WEFT_OK);
    CHECK_ERR(weft__sock_netns_enter("/nonexistent-weft/ns", "WEFT_NETNS", &saved, &d),
              WEFT_ENOENT);
    CHECK_STR(d.msg, "WEFT_NETNS: cannot open '/nonexistent-weft/ns': No such file or directory");
    /* A namespace of another kind is refused by type, before privileges. */
    CHECK_ERR(weft__sock_netns_enter("/proc/self/ns/uts", "WEFT_NETNS", &saved, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_NETNS: '/proc/self/ns/uts' is not a network namespace");
    CHECK_INT(saved, -1);

    /* weft_comm_init names the variable too, even for one rank. */
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.addr = "127.0.0.1:0";
    cfg.netns = "/nonexistent-weft/ns";
    weft_comm *c = NULL;
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
    CHECK_STR(d.msg, "WEFT_NETNS: cannot open '/nonexistent-weft/ns': No such file or directory");
    CHECK(c == NULL);
}

static void test_env(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    weft_diag d;
    unsetenv("WEFT_NETNS");
    CHECK_ERR(weft_comm_config_from_env_options(&cfg, &d), WEFT_OK);
    CHECK(cfg.netns == NULL);
    setenv("WEFT_NETNS", "/var/run/netns/h1", 1);
    CHECK_ERR(weft_comm_config_from_env_options(&cfg, &d), WEFT_OK);
    CHECK_STR(cfg.netns, "/var/run/netns/h1");
    setenv("WEFT_NETNS", "h1", 1);
    weft_comm_config_init(&cfg);
    CHECK_ERR(weft_comm_config_from_env_options(&cfg, &d), WEFT_EINVAL);
    CHECK_STR(d.msg, "WEFT_NETNS: expected an absolute path to a network namespace "
                     "(/var/run/netns/NAME), got 'h1'");
    CHECK(cfg.netns == NULL);
    unsetenv("WEFT_NETNS");
}

/* Child: a fresh network namespace with loopback up; says so on `ready` and
 * waits to be killed. */
static void hold_namespace(int ready)
{
    char ok = 0;
    if (unshare(CLONE_NEWNET) == 0) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
        if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
            ifr.ifr_flags |= IFF_UP;
            ok = ioctl(s, SIOCSIFFLAGS, &ifr) == 0;
        }
    }
    if (write(ready, &ok, 1) != 1)
        _exit(1);
    for (;;)
        pause();
}

/* Established IPv4 TCP sockets in the namespace of process pid. */
static int established(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/net/tcp", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned st;
        if (sscanf(line, " %*s %*s %*s %x", &st) == 1 && st == 1)
            n++;
    }
    fclose(f);
    return n;
}

/* The name of an IPv4 interface other than loopback in the calling
 * thread's namespace; false when there is none. */
static bool outside_ifname(char name[IF_NAMESIZE])
{
    struct ifaddrs *list;
    if (getifaddrs(&list) < 0)
        return false;
    bool found = false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !(i->ifa_flags & IFF_LOOPBACK) &&
            strlen(i->ifa_name) < IF_NAMESIZE) {
            snprintf(name, IF_NAMESIZE, "%s", i->ifa_name);
            found = true;
        }
    }
    freeifaddrs(list);
    return found;
}

typedef struct job {
    pid_t holder;
} job;

static int in_namespace(weft_comm *c, void *arg)
{
    job *j = arg;
    int fails = 0;
    /* Both ranks are connected once init returned; rank 0 looks before any
     * rank can leave. */
    if (weft_comm_rank(c) == 0 && established(j->holder) != 2 * (int)WEFT_DEFAULT_TCP_CONNS) {
        fprintf(stderr, "rank 0: %d established sockets in the namespace, expected %u\n",
                established(j->holder), 2 * WEFT_DEFAULT_TCP_CONNS);
        fails++;
    }
    enum { N = 300000 };
    int32_t *v = malloc(N * sizeof *v);
    if (!v)
        return 90;
    for (int i = 0; i < N; i++)
        v[i] = i + (int32_t)weft_comm_rank(c);
    weft_diag d;
    weft_err e = weft_allreduce(c, v, v, N, WEFT_INT32, WEFT_SUM, &d);
    if (e) {
        fprintf(stderr, "allreduce: %s\n", d.msg);
        fails++;
    }
    for (int i = 0; !e && i < N; i++) {
        if (v[i] != 2 * i + 1) {
            fprintf(stderr, "element %d is %d, expected %d\n", i, v[i], 2 * i + 1);
            fails++;
            break;
        }
    }
    free(v);
    return fails;
}

static void test_namespace(void)
{
    if (geteuid() != 0) {
        printf("netns_test: not root, skipping the namespace part\n");
        return;
    }
    int p[2];
    if (pipe(p) < 0) {
        CHECK(!"pipe");
        return;
    }
    pid_t holder = fork();
    if (holder == 0) {
        close(p[0]);
        hold_namespace(p[1]);
    }
    close(p[1]);
    char ok = 0;
    if (holder < 0 || read(p[0], &ok, 1) != 1 || !ok) {
        close(p[0]);
        if (holder > 0) {
            kill(holder, SIGKILL);
            waitpid(holder, NULL, 0);
        }
        printf("netns_test: cannot create a network namespace here, skipping that part\n");
        return;
    }
    close(p[0]);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)holder);

    ino_t home = ns_inode("/proc/thread-self/ns/net"), there = ns_inode(path);
    CHECK(home != 0 && there != 0 && home != there);
    int saved;
    weft_diag d;
    CHECK_ERR(weft__sock_netns_enter(path, "WEFT_NETNS", &saved, &d), WEFT_OK);
    CHECK(saved >= 0);
    CHECK(ns_inode("/proc/thread-self/ns/net") == there);
    /* Only loopback exists there: the default address falls back to it. */
    struct in_addr a = weft__sock_default_ifaddr();
    CHECK_INT(ntohl(a.s_addr), INADDR_LOOPBACK);
    CHECK_ERR(weft__sock_netns_leave(saved, &d), WEFT_OK);
    CHECK(ns_inode("/proc/thread-self/ns/net") == home);

    job j = {holder};
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_TCP;
    cfg.timeout_ms = 8000;
    cfg.netns = path;
    int codes[2];
    CHECK_INT(weft__test_comm_ranks(2, &cfg, in_namespace, &j, 20000, codes, NULL), 0);
    CHECK_INT(codes[0], 0);
    CHECK_INT(codes[1], 0);
    /* Not there when the job is over. */
    CHECK_INT(established(holder), 0);
    /* An interface of the root namespace is unknown inside: names are
     * resolved where the data sockets live. */
    char name[IF_NAMESIZE];
    if (outside_ifname(name)) {
        struct in_addr at;
        CHECK_ERR(weft__sock_ifaddr(name, &at, &d), WEFT_OK);
        weft_comm_config_init(&cfg);
        cfg.addr = "127.0.0.1:0";
        cfg.netns = path;
        cfg.ifname = name;
        weft_comm *c = NULL;
        CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ENOENT);
        char want[128];
        snprintf(want, sizeof want, "WEFT_SOCKET_IFNAME: no IPv4 interface named '%s'", name);
        CHECK_STR(d.msg, want);
        CHECK(ns_inode("/proc/thread-self/ns/net") == home);
    }
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
}

int main(void)
{
    test_errors();
    test_env();
    test_namespace();
    return weft_test_done();
}
