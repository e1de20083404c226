/* Is a process on this host still alive?
 *
 * kill(pid, 0) alone is not enough: a killed process stays a zombie until
 * its parent reaps it, and kill() still succeeds on a zombie. So a process
 * counts as dead when kill() says ESRCH or /proc/PID/stat shows state Z (zombie)
 * or X (dead). Linux only, like the shared-memory transport that uses it.
 * Pid reuse within one check interval is not handled (docs/run.md).
 */
#ifndef WEFT_RUN_LIVENESS_H
#define WEFT_RUN_LIVENESS_H

#include <stdbool.h>
#include <sys/types.h>

bool weft__pid_alive(pid_t pid);
/* True when /proc shows the process stopped by a signal (state T); false
 * when it runs, is in a tracing stop (t), is gone, or there is no
 * procfs. */
bool weft__pid_stopped(pid_t pid);

/* A 64-bit identity of this host: a hash of the host name and the kernel
 * boot id, so two containers or two boots never look like one host. */
unsigned long long weft__host_id(void);

/* FNV-1a, 64-bit, continued from h (start with WEFT__FNV_INIT). */
#define WEFT__FNV_INIT 14695981039346656037ULL
unsigned long long weft__fnv64(unsigned long long h, const void *data, unsigned long len);

#endif
