/* The names of weft's shared-memory segments in /dev/shm, defined once:
 * made by the transport (shm.c) and the shared buffers (region.c), and
 * recognised by the removal of a stopped job's leftovers (leftovers.c).
 *
 *   /weft-<pid>-<16 hex digits>       a transport segment: its creator's
 *                                     pid (decimal) and a random number
 *   /weft-<16 hex digits>-<rank>-<id> a shared buffer's segment or control
 *                                     page: the job tag (leftovers.h), the
 *                                     owning rank and the buffer's id
 *
 * The two never read alike: a pid has at most 7 digits (2^22 on Linux),
 * a job tag always 16. Every name fits WEFT__SEG_NAME_MAX bytes. */
#ifndef WEFT_RUN_SEGNAME_H
#define WEFT_RUN_SEGNAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WEFT__SEG_NAME_MAX 48

/* A transport segment's name, for shm_open. */
void weft__seg_name_xport(char *buf, size_t len, pid_t pid, uint64_t rnd);

/* A shared buffer's segment (or control page) name, for shm_open. */
void weft__seg_name_region(char *buf, size_t len, uint64_t tag, uint32_t rank, uint32_t id);

typedef enum weft__seg_kind {
    WEFT__SEG_OTHER = 0, /* not a name of this format */
    WEFT__SEG_XPORT,     /* *id is the creator's pid */
    WEFT__SEG_REGION,    /* *id is the job tag */
} weft__seg_kind;

/* What a /dev/shm entry name (without the leading '/', as readdir gives
 * it) is, and its pid or job tag in *id (set only for the two kinds).
 * Only the part up to the second '-' is read. */
weft__seg_kind weft__seg_name_parse(const char *name, uint64_t *id);

#endif
