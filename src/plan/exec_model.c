/* The executor's slicing (weft/exec_model.h). */
#include "weft/exec_model.h"

uint32_t weft_exec_slices(uint64_t chunk_bytes)
{
    uint64_t s = chunk_bytes / WEFT_EXEC_SLICE_BYTES;
    return s < 1 ? 1 : s > WEFT_EXEC_MAX_SLICES ? WEFT_EXEC_MAX_SLICES : (uint32_t)s;
}
