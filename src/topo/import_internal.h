/* Helpers shared by the importers (import_nccl.c, import_astra.c) and the
 * spec resolver (spec.c). Nothing outside src/topo includes this header. */
#ifndef WEFT_TOPO_IMPORT_INTERNAL_H
#define WEFT_TOPO_IMPORT_INTERNAL_H

#include <stddef.h>

#include "weft/err.h"

/* Inputs larger than this are refused with WEFT_ELIMIT: no real NCCL dump or
 * ASTRA-sim config comes near it, and it bounds what a bad path can cost. */
#define WEFT__IMPORT_MAX_BYTES ((size_t)64 << 20)

/* Reads the whole file at path (a regular file or a pipe) into a
 * NUL-terminated buffer from weft__malloc (the caller frees it with
 * weft__free): weft__file_read (base/file.h) with the limit
 * WEFT__IMPORT_MAX_BYTES. WEFT_ENOENT when it does not exist, WEFT_EIO when
 * it cannot be read or is a directory, WEFT_ELIMIT, WEFT_ENOMEM; d says
 * which file and why. *out and *len are written only on success. */
weft_err weft__read_whole_file(const char *path, char **out, size_t *len, weft_diag *d);

#endif
