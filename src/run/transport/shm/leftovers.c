/* Removing a stopped job's segment names (see leftovers.h). */
#include "run/transport/shm/leftovers.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "run/liveness.h"
#include "run/transport/shm/segname.h"

uint64_t weft__shm_job_tag(const unsigned char *secret, size_t len)
{
    return weft__fnv64(WEFT__FNV_INIT, secret, len);
}

/* True when name (without the leading '/') is a segment of the job with
 * this tag or a transport segment of one of pids[0 .. n) (segname.h). */
static bool is_leftover(const char *name, uint64_t job_tag, const pid_t *pids, uint32_t n)
{
    uint64_t id = 0;
    switch (weft__seg_name_parse(name, &id)) {
    case WEFT__SEG_REGION:
        return id == job_tag;
    case WEFT__SEG_XPORT:
        for (uint32_t r = 0; r < n; r++)
            if (pids[r] > 0 && (uint64_t)pids[r] == id)
                return true;
        return false;
    default:
        return false;
    }
}

unsigned weft__shm_remove_leftovers(uint64_t job_tag, const pid_t *pids, uint32_t n)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return 0;
    unsigned removed = 0;
    struct dirent *ent;
    while ((ent = readdir(dir)) != NULL) {
        char path[300];
        if (is_leftover(ent->d_name, job_tag, pids, n) &&
            snprintf(path, sizeof path, "/%s", ent->d_name) < (int)sizeof path &&
            shm_unlink(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}
