/* libFuzzer target: the embedding lookup trace reader (weft/embedding.h).
 * Any input must be read or refused with a "fuzz.trace:LINE:COL: " message;
 * a read trace's row-wise matrix has every entry a multiple of the vector
 * bytes and no bag counted more than once per block (each column at most
 * the lookups' share times the vector). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "weft/embedding.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_emb_table tb[3] = {
        {.rows = 7, .dim = 3, .pooling = 1, .dtype_bytes = 4, .sharding = WEFT_EMB_RW},
        {.rows = 100, .dim = 1, .pooling = 1, .dtype_bytes = 2, .sharding = WEFT_EMB_RW},
        {.rows = 5, .dim = 2, .pooling = 1, .dtype_bytes = 1, .sharding = WEFT_EMB_TW},
    };
    weft_emb_workload w = {.gpus = 3, .batch = 4, .ntables = 3, .tables = tb};
    weft_emb_acc *a;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_emb_acc_new(&w, &a, &d) != WEFT_OK)
        abort();
    weft_err e = weft_emb_trace_parse((const char *)data, size, "fuzz.trace", a, &d);
    if (e != WEFT_OK) {
        if (strncmp(d.msg, "fuzz.trace:", 11) != 0)
            abort();
        weft_emb_acc_free(a);
        return 0;
    }
    weft_emb_result r;
    if (weft_emb_acc_finish(a, &r, &d) != WEFT_OK)
        abort();
    weft_emb_acc_free(a);
    /* Table-wise: 4*2 bytes from GPU 0 to each GPU; the rest is row-wise,
     * at most 3 blocks for each of a GPU's 4 samples and 2 tables. */
    for (uint32_t j = 0; j < 3; j++) {
        uint64_t col = 0;
        for (uint32_t i = 0; i < 3; i++)
            col += weft_traffic_at(&r.forward, i, j) - (i == 0 ? 8 : 0);
        if (col > 4 * 3 * (12 + 2))
            abort();
    }
    weft_emb_result_free(&r);
    return 0;
}
