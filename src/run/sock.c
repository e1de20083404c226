/* Socket helpers (see sock.h). */
#include "run/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "run/clock.h"

void weft__sock_format(const struct sockaddr_in *a, char *buf, size_t size)
{
    char ip[INET_ADDRSTRLEN];
    if (!inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip))
        snprintf(ip, sizeof ip, "?");
    snprintf(buf, size, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

weft_err weft__sock_parse_addr(const char *text, const char *what, struct sockaddr_in *out,
                               weft_diag *d)
{
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || colon == text || colon[1] == '\0')
        return weft_diag_set(d, WEFT_EINVAL, "%s: expected host:port, got '%s'", what,
                             text ? text : "");
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || errno || port > 65535 || colon[1] == '-' || colon[1] == '+')
        return weft_diag_set(d, WEFT_EINVAL, "%s: bad port '%s' in '%s'", what, colon + 1, text);
    char host[256];
    size_t hlen = (size_t)(colon - text);
    if (hlen >= sizeof host)
        return weft_diag_set(d, WEFT_EINVAL, "%s: host name too long in '%s'", what, text);
    memcpy(host, text, hlen);
    host[hlen] = '\0';

    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_INET;
        hints.ai_socktype = SOCK_STREAM;
        int rc = getaddrinfo(host, NULL, &hints, &res);
        if (rc != 0 || !res)
            return weft_diag_set(d, WEFT_EINVAL, "%s: cannot resolve host '%s': %s", what, host,
                                 gai_strerror(rc));
        a.sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    *out = a;
    return WEFT_OK;
}

static weft_err sys_err(weft_diag *d, int e, const char *what, const struct sockaddr_in *a)
{
    char buf[64] = "";
    if (a)
        weft__sock_format(a, buf, sizeof buf);
    weft_err code = (e == ECONNRESET || e == EPIPE || e == ECONNABORTED) ? WEFT_EPEER : WEFT_EIO;
    return weft_diag_set(d, code, "%s%s%s: %s", what, a ? " " : "", buf, strerror(e));
}

weft_err weft__sock_prepare_fd(int fd, weft_diag *d)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        return sys_err(d, errno, "fcntl", NULL);
    return WEFT_OK;
}

static void set_nodelay(int fd)
{
    int one = 1;
    /* Best effort: a socket without it is slower, not wrong. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

weft_err weft__sock_listen(const struct sockaddr_in *at, int *fd, struct sockaddr_in *bound,
                           weft_diag *d)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sys_err(d, errno, "socket", NULL);
    int one = 1;
    weft_err e;
    (void)setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (const struct sockaddr *)at, sizeof *at) < 0) {
        e = sys_err(d, errno, "bind", at);
        goto close_socket;
    }
    if (listen(s, SOMAXCONN) < 0) {
        e = sys_err(d, errno, "listen", at);
        goto close_socket;
    }
    socklen_t len = sizeof *bound;
    if (getsockname(s, (struct sockaddr *)bound, &len) < 0) {
        e = sys_err(d, errno, "getsockname", at);
        goto close_socket;
    }
    *fd = s;
    return WEFT_OK;
close_socket:
    close(s);
    return e;
}

/* Waits for events on fd until the deadline: WEFT_OK when ready. */
static weft_err wait_fd(int fd, short events, int64_t deadline, const char *what, weft_diag *d)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int ms = weft__ms_until(deadline, 1000);
        int rc = poll(&p, 1, ms);
        if (rc > 0)
            return WEFT_OK;
        if (rc < 0 && errno != EINTR)
            return sys_err(d, errno, "poll", NULL);
        if (rc == 0 && weft__now_ns() >= deadline)
            return weft_diag_set(d, WEFT_ETIMEDOUT, "%s: timed out", what);
    }
}

weft_err weft__sock_connect(const struct sockaddr_in *to, int64_t deadline, int *fd, weft_diag *d)
{
    char name[64];
    weft__sock_format(to, name, sizeof name);
    for (;;) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (s < 0)
            return sys_err(d, errno, "socket", NULL);
        int err = 0;
        if (connect(s, (const struct sockaddr *)to, sizeof *to) < 0) {
            err = errno;
            if (err == EINPROGRESS) {
                weft_err e = wait_fd(s, POLLOUT, deadline, "connect", NULL);
                if (e) {
                    close(s);
                    return weft_diag_set(d, e, "connecting to %s: %s", name,
                                         e == WEFT_ETIMEDOUT ? "timed out" : "poll failed");
                }
                socklen_t len = sizeof err;
                if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                    err = errno;
            }
        }
        if (err == 0) {
            set_nodelay(s);
            *fd = s;
            return WEFT_OK;
        }
        close(s);
        if (err != ECONNREFUSED && err != ECONNRESET && err != ETIMEDOUT)
            return weft_diag_set(d, WEFT_EIO, "connecting to %s: %s", name, strerror(err));
        if (weft__now_ns() + 20000000 >= deadline)
            return weft_diag_set(d, WEFT_ETIMEDOUT, "connecting to %s: %s until the deadline", name,
                                 strerror(err));
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
}

weft_err weft__sock_accept(int lfd, int64_t deadline, int *fd, struct sockaddr_in *peer,
                           weft_diag *d)
{
    for (;;) {
        socklen_t len = sizeof *peer;
        int s = accept4(lfd, (struct sockaddr *)peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (s >= 0) {
            set_nodelay(s);
            *fd = s;
            return WEFT_OK;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return sys_err(d, errno, "accept", NULL);
        weft_err e = wait_fd(lfd, POLLIN, deadline, "accept", d);
        if (e)
            return e;
    }
}

weft_err weft__sock_write_all(int fd, const void *buf, size_t len, int64_t deadline, weft_diag *d)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return sys_err(d, errno, "send", NULL);
        weft_err e = wait_fd(fd, POLLOUT, deadline, "send", d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

weft_err weft__sock_read_all(int fd, void *buf, size_t len, int64_t deadline, weft_diag *d)
{
    unsigned char *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return weft_diag_set(d, WEFT_EPEER, "connection closed by the peer");
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return sys_err(d, errno, "recv", NULL);
        weft_err e = wait_fd(fd, POLLIN, deadline, "recv", d);
        if (e)
            return e;
    }
    return WEFT_OK;
}

weft_err weft__sock_ifaddr(const char *ifname, struct in_addr *out, weft_diag *d)
{
    struct ifaddrs *list;
    if (getifaddrs(&list) < 0)
        return sys_err(d, errno, "getifaddrs", NULL);
    bool found = false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, ifname) == 0) {
            *out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            found = true;
        }
    }
    freeifaddrs(list);
    if (!found)
        return weft_diag_set(d, WEFT_ENOENT, "WEFT_SOCKET_IFNAME: no IPv4 interface named '%s'",
                             ifname);
    return WEFT_OK;
}

struct in_addr weft__sock_default_ifaddr(void)
{
    struct in_addr a;
    a.s_addr = htonl(INADDR_LOOPBACK);
    struct ifaddrs *list;
    if (getifaddrs(&list) < 0)
        return a;
    for (struct ifaddrs *i = list; i; i = i->ifa_next) {
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            break;
        }
    }
    freeifaddrs(list);
    return a;
}

weft_err weft__sock_netns_enter(const char *path, const char *what, int *saved, weft_diag *d)
{
    *saved = -1;
    if (!path || !*path)
        return WEFT_OK;
    int target = open(path, O_RDONLY | O_CLOEXEC);
    if (target < 0)
        return weft_diag_set(d, errno == ENOENT ? WEFT_ENOENT : WEFT_EIO,
                             "%s: cannot open '%s': %s", what, path, strerror(errno));
    weft_err e;
    /* The thread's own namespace, not the process's: another thread of the
     * caller may be switched elsewhere. */
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self < 0) {
        e = weft_diag_set(d, WEFT_EIO, "%s: cannot open /proc/thread-self/ns/net: %s", what,
                          strerror(errno));
        goto close_target;
    }
    if (setns(target, CLONE_NEWNET) < 0) {
        int err = errno;
        if (err == EINVAL)
            e = weft_diag_set(d, WEFT_EINVAL, "%s: '%s' is not a network namespace", what, path);
        else if (err == EPERM)
            e = weft_diag_set(d, WEFT_EIO,
                              "%s: cannot enter '%s': %s (entering a network namespace needs "
                              "CAP_SYS_ADMIN)",
                              what, path, strerror(err));
        else
            e = weft_diag_set(d, WEFT_EIO, "%s: cannot enter '%s': %s", what, path, strerror(err));
        close(self);
        goto close_target;
    }
    close(target);
    *saved = self;
    return WEFT_OK;
close_target:
    close(target);
    return e;
}

weft_err weft__sock_netns_leave(int saved, weft_diag *d)
{
    if (saved < 0)
        return WEFT_OK;
    int rc = setns(saved, CLONE_NEWNET);
    int err = errno;
    close(saved);
    if (rc < 0)
        return weft_diag_set(d, WEFT_EIO, "cannot return to the original network namespace: %s",
                             strerror(err));
    return WEFT_OK;
}
