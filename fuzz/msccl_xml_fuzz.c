/* libFuzzer target: MSCCL XML import, and export and import again of what
 * verifies. Any input must import or fail with a message naming where, and
 * return nothing. A plan that imports and that the verifier accepts must
 * compute its collective (the executor against the reference); exported
 * again under the msccl profile it must either be refused with a message
 * (a limit, a dependency MSCCL cannot express) or be an MSCCL program that
 * imports, verifies and computes the same. Anything else aborts, which
 * libFuzzer reports as a crash. See docs/fuzzing.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The plan verifies and computes what its collective should. */
static bool correct(const weft_plan *p)
{
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_plan_verify(p, NULL, &d);
    if (e != WEFT_OK) {
        if (e != WEFT_EVERIFY || !d.msg[0])
            abort(); /* a verdict, with its reason, is the only other answer */
        return false;
    }
    if (weft_plan_exec_check(p, NULL, &d) != WEFT_OK)
        abort(); /* accepted by the verifier, wrong when run */
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    weft_plan *p = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_plan_msccl_parse((const char *)data, size, "fuzz.xml", &p, &d);
    if (e != WEFT_OK) {
        if (p || d.err != e || !d.msg[0])
            abort();
        return 0;
    }
    /* Keep the work per input small. */
    const weft_plan_info *info = weft_plan_get_info(p);
    if (info->nranks > 64 || weft_plan_num_chunk_ids(p) > 4096 || info->scratch > 4096 ||
        weft_plan_num_ops(p) > 10000) {
        weft_plan_free(p);
        return 0;
    }
    if (!correct(p)) {
        weft_plan_free(p);
        return 0;
    }
    weft_msccl_opts o;
    weft_msccl_opts_init(&o);
    o.profile = WEFT_MSCCL_MSCCL; /* 256 steps: more programs can be written */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        abort();
    weft_diag_clear(&d);
    e = weft_plan_write_msccl(p, &o, f, &d);
    fclose(f);
    if (e != WEFT_OK) {
        /* Only a plan MSCCL cannot express or a runtime limit, named. */
        if ((e != WEFT_EINVAL && e != WEFT_ELIMIT) || !d.msg[0])
            abort();
    } else {
        weft_plan *q = NULL;
        if (weft_plan_msccl_parse(buf, len, "export.xml", &q, &d) != WEFT_OK || !correct(q))
            abort(); /* weft wrote a program it cannot read back, or a wrong one */
        const weft_plan_info *qi = weft_plan_get_info(q);
        if (qi->coll != info->coll || qi->nranks != info->nranks || qi->root.v != info->root.v)
            abort();
        weft_plan_free(q);
    }
    free(buf);
    weft_plan_free(p);
    return 0;
}
