/* Removing a stopped job's segment names (see leftovers.h). */
#include "run/transport/shm/leftovers.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "run/liveness.h"

uint64_t weft__shm_job_tag(const unsigned char *secret, size_t len)
{
    return weft__fnv64(WEFT__FNV_INIT, secret, len);
}

/* True when name (without the leading '/') is the job's ("weft-<tag>-...")
 * or a transport segment of one of pids[0 .. n) ("weft-<pid>-..."). Each
 * name is parsed once; a 16-digit tag never reads as a pid, which is at
 * most 2^22 on Linux. */
static bool is_leftover(const char *name, const char *tag, const pid_t *pids, uint32_t n)
{
    if (strncmp(name, "weft-", 5) != 0) return false;
    const char *p = name + 5;
    if (strncmp(p, tag, 16) == 0 && p[16] == '-') return true;
    long pid = 0;
    size_t digits = 0;
    while (p[digits] >= '0' && p[digits] <= '9' && digits < 10)
        pid = pid * 10 + (p[digits++] - '0');
    if (digits == 0 || p[digits] != '-' || (digits > 1 && p[0] == '0')) return false;
    for (uint32_t r = 0; r < n; r++)
        if (pids[r] > 0 && pids[r] == pid) return true;
    return false;
}

unsigned weft__shm_remove_leftovers(uint64_t job_tag, const pid_t *pids, uint32_t n)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir) return 0;
    char tag[17];
    snprintf(tag, sizeof tag, "%016llx", (unsigned long long)job_tag);
    unsigned removed = 0;
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        char path[300];
        if (is_leftover(ent->d_name, tag, pids, n) &&
            snprintf(path, sizeof path, "/%s", ent->d_name) < (int)sizeof path &&
            shm_unlink(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}
