/* libFuzzer target: ASTRA-sim network config import. Any input must either
 * import or fail with a message naming where. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_topo *t = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_topo_parse_astra_yml((const char *)data, size, "fuzz.yml", &t, &d);
    if (e == WEFT_OK)
        weft_topo_free(t);
    else if (!d.msg[0] || t)
        abort();
    return 0;
}
