/* libFuzzer target: the cost file reader (weft/cost.h). Any input must
 * parse or fail with a message and leave the table as it was; a parsed
 * table has only non-negative figures. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "weft/cost.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_cost_table t, before;
    weft_cost_table_defaults(&t);
    before = t;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_cost_table_parse(&t, (const char *)data, size, "fuzz.cost", &d) != WEFT_OK) {
        if (!d.msg[0] || memcmp(&t, &before, sizeof t) != 0)
            abort();
        return 0;
    }
    for (int p = 0; p < WEFT_COST_PARTS; p++)
        for (int r = 0; r < WEFT_COST_RATES; r++)
            if ((t.usd[p][r].known && weft_rat_sign(t.usd[p][r].v) < 0) ||
                (t.watt[p][r].known && weft_rat_sign(t.watt[p][r].v) < 0))
                abort();
    return 0;
}
