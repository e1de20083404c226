/* Reading an import's input file. See import_internal.h. */
#include "base/file.h"
#include "topo/import_internal.h"

weft_err weft__read_whole_file(const char *path, char **out, size_t *len, weft_diag *d)
{
    return weft__file_read(path, WEFT__IMPORT_MAX_BYTES, "an imported fabric (NCCL XML, ASTRA-sim)",
                           out, len, d);
}
