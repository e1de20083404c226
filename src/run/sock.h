/* Socket helpers shared by the TCP bootstrap and the TCP transport.
 *
 * IPv4 only. Every socket made here is non-blocking and close-on-exec; the
 * blocking helpers wait with poll() until an absolute deadline (clock.h).
 * errno is converted to weft_err here, once, with the system message in d:
 * a peer that closed or reset the connection is WEFT_EPEER, a deadline that
 * passed WEFT_ETIMEDOUT, anything else WEFT_EIO.
 */
#ifndef WEFT_RUN_SOCK_H
#define WEFT_RUN_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/err.h"

/* Parses "host:port" (host an IPv4 address or a name resolved to IPv4;
 * port 0 .. 65535). `what` names the text in messages ("WEFT_ADDR"). */
weft_err weft__sock_parse_addr(const char *text, const char *what, struct sockaddr_in *out,
                               weft_diag *d);
/* "a.b.c.d:port" into buf (>= 32 bytes). */
void weft__sock_format(const struct sockaddr_in *a, char *buf, size_t size);
/* Binds and listens (SO_REUSEADDR, backlog SOMAXCONN); port 0 picks one.
 * Writes the fd and the bound address. */
weft_err weft__sock_listen(const struct sockaddr_in *at, int *fd, struct sockaddr_in *bound,
                           weft_diag *d);
/* Connects, retrying refused attempts every 20 ms (the listener may not be up
 * yet) until the deadline. Sets TCP_NODELAY. */
weft_err weft__sock_connect(const struct sockaddr_in *to, int64_t deadline, int *fd, weft_diag *d);
/* Accepts one connection before the deadline; sets TCP_NODELAY. */
weft_err weft__sock_accept(int lfd, int64_t deadline, int *fd, struct sockaddr_in *peer,
                           weft_diag *d);
/* Writes or reads exactly len bytes before the deadline. */
weft_err weft__sock_write_all(int fd, const void *buf, size_t len, int64_t deadline, weft_diag *d);
weft_err weft__sock_read_all(int fd, void *buf, size_t len, int64_t deadline, weft_diag *d);
/* Makes fd non-blocking and close-on-exec (for inherited listeners). */
weft_err weft__sock_prepare_fd(int fd, weft_diag *d);
/* The IPv4 address of a named interface (getifaddrs). */
weft_err weft__sock_ifaddr(const char *ifname, struct in_addr *out, weft_diag *d);
/* The first IPv4 address of an interface that is up and not loopback, or
 * 127.0.0.1 when there is none. */
struct in_addr weft__sock_default_ifaddr(void);

/* Network namespaces (for emulated multi-host fabrics, docs/netns.md).
 *
 * A socket belongs, for its whole life, to the network namespace its
 * creating thread was in when socket() ran. weft__sock_netns_enter switches
 * the *calling thread* (not the process) into the namespace named by path
 * (a file such as /var/run/netns/NAME or /proc/PID/ns/net) and stores in
 * *saved a descriptor of the thread's previous namespace; the caller creates
 * its sockets and then calls weft__sock_netns_leave(*saved) to return. Other
 * threads and every socket created outside the window stay where they were.
 * NULL or "" path: no switch, *saved = -1 (leave is then a no-op). Needs
 * CAP_SYS_ADMIN; errors name the path (`what` names its origin, e.g.
 * "WEFT_NETNS"). */
weft_err weft__sock_netns_enter(const char *path, const char *what, int *saved, weft_diag *d);
/* Returns to the namespace saved by enter and closes the descriptor. An
 * error here leaves the thread in the other namespace: callers fail. */
weft_err weft__sock_netns_leave(int saved, weft_diag *d);

#endif
