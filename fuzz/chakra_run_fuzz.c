/* libFuzzer target: Chakra traces (weft_chakra_parse, weft_chakra_run).
 * The input is the trace of both ranks of switch:2. It must load or fail
 * with a message and nothing kept; a loaded trace must run to its end or
 * fail with a message (a deadlock, a mismatch), in the fluid model, and a
 * run's times are finite and its total the latest rank's end. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "weft/topo.h"
#include "weft/work.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static weft_topo *t;
    weft_diag d;
    weft_diag_clear(&d);
    if (!t && weft_topo_from_spec("switch:2", NULL, &t, &d) != WEFT_OK)
        abort();
    const uint8_t *bufs[2] = {data, data};
    size_t lens[2] = {size, size};
    const char *names[2] = {"fuzz.0.et", "fuzz.1.et"};
    weft_chakra *w = NULL;
    if (weft_chakra_parse(bufs, lens, names, 2, &w, &d) != WEFT_OK) {
        if (!d.msg[0] || w)
            abort();
        return 0;
    }
    weft_sim_opts o;
    weft_sim_opts_init(&o);
    weft_work_ctx *c = NULL;
    if (weft_work_ctx_new(t, NULL, &o, &c) != WEFT_OK)
        abort();
    weft_chakra_result r;
    weft_diag_clear(&d);
    if (weft_chakra_run(c, w, NULL, &r, &d) != WEFT_OK) {
        if (!d.msg[0])
            abort();
    } else {
        double end = 0;
        for (uint32_t i = 0; i < r.ranks; i++)
            end = fmax(end, r.rank[i].end_s);
        if (!isfinite(r.total_s) || r.total_s != end)
            abort();
        weft_chakra_result_fini(&r);
    }
    weft_work_ctx_free(c);
    weft_chakra_free(w);
    return 0;
}
