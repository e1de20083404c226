/* CPUs of this host for the shared-memory paths (see host_cpus.h). */
#include "run/host_cpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t weft__cpus_from_cpu_max(const char *line)
{
    if (!line || strncmp(line, "max", 3) == 0)
        return 0;
    char *end;
    unsigned long long quota = strtoull(line, &end, 10);
    if (end == line || *end != ' ')
        return 0;
    const char *p = end + 1;
    unsigned long long period = strtoull(p, &end, 10);
    if (end == p || period == 0 || quota == 0)
        return 0;
    unsigned long long cpus = (quota + period - 1) / period;
    return cpus > UINT32_MAX ? UINT32_MAX : (uint32_t)cpus;
}

/* The first line of path into buf; false when it cannot be read. */
static int read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok;
}

/* The quota of this process's cgroup, 0 when none is found. Only the
 * cgroup this process is in (its own cpu.max under the unified
 * hierarchy's mount as seen from inside a container, which is where
 * container runtimes put the limit); a limit set on an ancestor only is
 * not seen. */
static uint32_t cgroup_cpus(void)
{
    char line[128];
    if (read_line("/sys/fs/cgroup/cpu.max", line, sizeof line))
        return weft__cpus_from_cpu_max(line);
    char q[64], p[64];
    if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", q, sizeof q) &&
        read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", p, sizeof p)) {
        long long quota = strtoll(q, NULL, 10), period = strtoll(p, NULL, 10);
        if (quota > 0 && period > 0)
            return (uint32_t)((quota + period - 1) / period);
    }
    return 0;
}

uint32_t weft__host_cpus_detect(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t cpus = n > 0 ? (uint32_t)n : 1;
    uint32_t quota = cgroup_cpus();
    if (quota && quota < cpus)
        cpus = quota;
    return cpus;
}
