/* libFuzzer target: NCCL topology XML import. Any input must either import
 * or fail with a message; the first input byte picks the options so that
 * the NVLink, multi-host and network paths are exercised too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_nccl_import_opts o;
    weft_nccl_import_opts_init(&o);
    if (size > 0) {
        o.hosts = 1 + (data[0] & 3);
        o.network = data[0] & 4 ? "switch" : "rail";
        if (data[0] & 8) o.nvlink_bw_gbps = weft_rat_int(300);
        data++;
        size--;
    }
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
