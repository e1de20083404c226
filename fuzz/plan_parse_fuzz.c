/* libFuzzer target: the .plan parser, and the verifier and executor on
 * whatever parses. Any input must parse or fail with a message; a parsed
 * plan must survive a write/parse round trip unchanged, and verification
 * must end with a verdict. Plans the verifier accepts are executed and must
 * match the reference (a wrong result is a verifier bug). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    if (weft_plan_parse((const char *)data, size, "fuzz.plan", &p, &d) != WEFT_OK) {
        if (!d.msg[0] || p)
            abort();
        return 0;
    }
    /* Keep the work per input small. */
    const weft_plan_info *info = weft_plan_get_info(p);
    if (info->nranks > 64 || weft_plan_size_chunks(p) > 4096 || info->scratch > 4096 ||
        weft_plan_num_ops(p) > 10000) {
        weft_plan_free(p);
        return 0;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f || weft_plan_write(p, f) != WEFT_OK)
        abort();
    fclose(f);
    weft_plan *q = NULL;
    if (weft_plan_parse(buf, len, "rt.plan", &q, &d) != WEFT_OK || !weft_plan_equal(p, q))
        abort();
    free(buf);
    weft_plan_free(q);
    weft_err e = weft_plan_verify(p, NULL, &d);
    if (e == WEFT_OK) {
        weft_exec_result *got = NULL, *want = NULL;
        if (weft_plan_exec(p, NULL, &got, &d) != WEFT_OK ||
            weft_exec_reference(p, 4, &want) != WEFT_OK || !weft_exec_compare(got, want, &d))
            abort();
        weft_exec_result_free(got);
        weft_exec_result_free(want);
        /* An alltoallv plan's op sizes exist for every verified plan. */
        if (weft_plan_traffic(p)) {
            uint64_t *b = malloc(((size_t)weft_plan_num_ops(p) + 1) * sizeof *b);
            if (!b || weft_plan_op_bytes(p, b, &d) != WEFT_OK)
                abort();
            free(b);
        }
    } else if (e != WEFT_EVERIFY || !d.msg[0]) {
        abort();
    }
    weft_plan_free(p);
    return 0;
}
