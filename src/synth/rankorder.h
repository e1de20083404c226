/* Where the classic algorithms put ranks: hosts and ring orders.
 *
 * Hosts come from the fabric's host= attributes. A fabric where some rank
 * has no host is treated as hostless: every rank is its own host.
 *
 * The ring order visits hosts in order and, inside each host, its ranks in
 * rank order rotated so that every crossing between hosts joins ranks of
 * the same local index: host h starts at the local index where host h-1
 * ended. On rail-optimised fabrics (NIC i of every host on rail i) the
 * crossing then stays on one rail, as NCCL's rings do. When hosts differ in
 * size the rotation is skipped.
 */
#ifndef WEFT_SYNTH_RANKORDER_H
#define WEFT_SYNTH_RANKORDER_H

#include "weft/topo.h"

typedef struct synth_hosts {
    uint32_t nhosts;
    uint32_t per_host; /* ranks per host when all hosts are equal, else 0 */
    uint32_t *start;   /* nhosts + 1 offsets into ranks */
    uint32_t *ranks;   /* ranks grouped by host, rank order inside a host */
    uint32_t *host_of; /* per rank: its host */
    uint32_t *local;   /* per rank: its index inside its host */
} synth_hosts;

weft_err synth_hosts_init(synth_hosts *h, const weft_topo *t);
void synth_hosts_fini(synth_hosts *h);

/* The ring order of all ranks (N entries), rotated per host by `shift`
 * more local positions (rings:K uses different shifts for different
 * rings). */
void synth_ring_order(const synth_hosts *h, uint32_t shift, uint32_t *order);

#endif
