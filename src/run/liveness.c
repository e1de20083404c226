/* Process liveness and host identity (see liveness.h). */
#include "run/liveness.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The state letter of /proc/PID/stat, or 0 when it cannot be read. */
static char pid_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ...": the state follows the last ')', as comm may
     * itself contain parentheses. */
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    return p[2];
}

bool weft__pid_alive(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return false;
    char s = pid_state(pid); /* 0: no procfs, trust kill() */
    return s != 'Z' && s != 'X';
}

bool weft__pid_stopped(pid_t pid)
{
    /* Not 't' (a tracing stop): a process stops for its tracer briefly
     * and routinely (LeakSanitizer's exit-time check stops its own
     * threads under ptrace), and the launcher would blame it for a
     * failure it did not cause. */
    return pid_state(pid) == 'T';
}

unsigned long long weft__fnv64(unsigned long long h, const void *data, unsigned long len)
{
    const unsigned char *p = data;
    for (unsigned long i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

unsigned long long weft__host_id(void)
{
    char name[256] = "";
    (void)gethostname(name, sizeof name - 1);
    unsigned long long h = weft__fnv64(WEFT__FNV_INIT, name, strlen(name));
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        size_t n = fread(boot, 1, sizeof boot - 1, f);
        boot[n] = '\0';
        fclose(f);
    }
    return weft__fnv64(h, boot, strlen(boot));
}
