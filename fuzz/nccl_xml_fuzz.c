/* libFuzzer target: NCCL topology XML import. Any input must either import
 * or fail with a message and return nothing. The options come from the
 * input's length, so that the NVLink, multi-host and network paths are
 * exercised while any NCCL dump stays a valid seed as it is. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    o.hosts = 1 + (uint32_t)(size & 3);
    o.network = size & 4 ? "switch" : "rail";
    if (size & 8)
        o.nvlink_bw_gbps = weft_rat_int(300);
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_parse_nccl_xml((const char *)data, size, "fuzz.xml", &o, &t, &d);
    if (e == WEFT_OK)
        weft_topo_free(t);
    else if (!d.msg[0] || t)
        abort();
    return 0;
}
