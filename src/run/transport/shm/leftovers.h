/* What a stopped job leaves in /dev/shm.
 *
 * Every segment name is unlinked as soon as every peer has mapped it, so a
 * job that ends, or fails, after its setup leaves nothing behind. A rank
 * killed in between (while a peer it waits for is being stopped: `weft
 * launch` stops every rank when one fails) leaves the names it created:
 * the transport's segments, /weft-<pid>-<random> (shm.c), and the shared
 * buffers' segments and control pages, /weft-<job tag>-<rank>-<id>
 * (region.c); segname.h defines both. weft__shm_remove_leftovers removes
 * both kinds for one job. */
#ifndef WEFT_RUN_LEFTOVERS_H
#define WEFT_RUN_LEFTOVERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The job tag of the communicators a job secret makes (comm.c), which
 * names its shared-buffer segments. */
uint64_t weft__shm_job_tag(const unsigned char *secret, size_t len);

/* Unlinks every /dev/shm name of the job with this tag, and every
 * transport segment of the processes pids[0 .. n) (0 entries are
 * skipped). Call only once all of them have exited: a live rank may still
 * need a name. Returns how many names were removed. */
unsigned weft__shm_remove_leftovers(uint64_t job_tag, const pid_t *pids, uint32_t n);

#endif
