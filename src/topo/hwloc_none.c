/* Host fabrics without hwloc: built when CMake does not find libhwloc, in
 * place of hwloc.c. Every request says so; nothing is guessed. */
#include <string.h>

#include "topo/host_internal.h"

bool weft_host_available(void)
{
    return false;
}

weft_err weft__host_read(const char *xml, weft_host_unit unit, weft__host_desc *out, weft_diag *d)
{
    (void)xml;
    (void)unit;
    memset(out, 0, sizeof *out);
    return weft_diag_set(d, WEFT_EUNSUPPORTED,
                         "host: weft was built without hwloc (install libhwloc-dev, e.g. with "
                         "tools/install-deps.sh, and rebuild)");
}
