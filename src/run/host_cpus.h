/* How many CPUs this host gives its ranks (see weft_comm_config.cpus).
 *
 * The shared-memory paths change with it: with more ranks on a host than
 * CPUs, a polling rank holds the core a peer it waits for needs, so waits
 * yield and sleep, eager limits grow and only as many ranks as CPUs copy
 * (docs/run.md, "Waits"). */
#ifndef WEFT_RUN_HOST_CPUS_H
#define WEFT_RUN_HOST_CPUS_H

#include <stdint.h>

/* The online CPUs, capped by this process's cgroup (v2 cpu.max, or v1
 * cpu.cfs_quota_us / cpu.cfs_period_us) CPU quota rounded up: a container
 * limited to 2 CPUs of a 64-CPU machine has 2. Not this process's
 * affinity: launchers bind ranks to a core or a socket (Open MPI: a core
 * each for up to 2 ranks, the socket beyond), and ranks on distinct cores
 * are not oversubscribed even though each may use only one. At least 1. */
uint32_t weft__host_cpus_detect(void);

/* CPUs from a cgroup v2 cpu.max line ("max 100000", "200000 100000"):
 * the quota over the period rounded up, or 0 when unlimited or
 * unreadable. Exposed for the test. */
uint32_t weft__cpus_from_cpu_max(const char *line);

#endif
