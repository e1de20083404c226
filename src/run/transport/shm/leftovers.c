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

/* True when name (without the leading '/') starts with "weft-<prefix>-". */
static bool has_prefix(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, "weft-", 5) == 0 && strncmp(name + 5, prefix, n) == 0 &&
           name[5 + n] == '-';
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
        bool ours = has_prefix(ent->d_name, tag);
        for (uint32_t r = 0; r < n && !ours; r++) {
            char pid[16];
            snprintf(pid, sizeof pid, "%d", (int)pids[r]);
            ours = pids[r] > 0 && has_prefix(ent->d_name, pid);
        }
        char path[300];
        if (ours && snprintf(path, sizeof path, "/%s", ent->d_name) < (int)sizeof path &&
            shm_unlink(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}
