/* MSCCL export's options and profiles: the names of the executor and msccl
 * profiles, the steps per threadblock each allows, and the coll attribute's
 * spelling under each. See the MSCCL section of weft/plan.h. */
#include <string.h>

#include "plan/msccl_internal.h"

const char *weft_msccl_profile_name(weft_msccl_profile profile)
{
    return profile == WEFT_MSCCL_MSCCL ? "msccl" : "executor";
}

bool weft_msccl_profile_parse(const char *text, weft_msccl_profile *out)
{
    for (int i = 0; i < WEFT__MSCCL_PROFILE_COUNT; i++)
        if (strcmp(text, weft_msccl_profile_name((weft_msccl_profile)i)) == 0) {
            *out = (weft_msccl_profile)i;
            return true;
        }
    return false;
}

uint32_t weft_msccl_max_steps(weft_msccl_profile profile)
{
    return profile == WEFT_MSCCL_MSCCL ? 256 : 64;
}

uint32_t weft__msccl_max_tbs(weft_msccl_profile profile)
{
    return profile == WEFT_MSCCL_MSCCL ? 216 : 1024;
}

const char *weft__msccl_coll_name(weft_coll coll, weft_msccl_profile profile)
{
    if (coll == WEFT_COLL_REDUCESCATTER && profile == WEFT_MSCCL_MSCCL)
        return "reduce_scatter";
    return weft_coll_name(coll);
}

void weft_msccl_opts_init(weft_msccl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->profile = WEFT_MSCCL_EXECUTOR;
    o->proto = "Simple";
}
