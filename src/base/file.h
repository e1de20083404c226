/* Reading a file a user named: a topology, a plan, a tuning table, an
 * import.
 *
 * Every failure names the path and the reason, so "WEFT_PLAN=/tmp" says
 * "/tmp: is a directory" rather than a bare read error:
 *   "PATH: cannot open: REASON"  WEFT_ENOENT when it does not exist, else
 *                                WEFT_EIO (REASON is strerror(errno))
 *   "PATH: is a directory"       WEFT_EIO (checked on the opened file, so
 *                                no other file can take its place)
 *   "PATH: cannot stat: REASON", "PATH: cannot read: REASON"  WEFT_EIO
 *   "PATH: larger than N MiB, the limit for WHAT"
 *                                WEFT_ELIMIT (weft__file_read's max and what)
 *   "PATH: out of memory reading N bytes"
 *                                WEFT_ENOMEM
 * A pipe or a character device is read like a file, up to its end.
 */
#ifndef WEFT_BASE_FILE_H
#define WEFT_BASE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"

/* No limit for weft__file_read (only for tests: every file a user names has
 * a cap, so that /dev/zero or an endless pipe stops with a message instead of
 * growing to the memory limit). */
#define WEFT__FILE_ANY_SIZE SIZE_MAX

/* Opens path for reading in binary mode and refuses a directory. *out
 * (close with fclose) is written only on success. A read error later is
 * the caller's to report, with weft__file_read_error. */
weft_err weft__file_open(const char *path, FILE **out, weft_diag *d);

/* Reads the whole file at path into a NUL-terminated block from
 * weft__malloc (the caller frees it with weft__free) and its length in
 * *len (without the NUL); more than max bytes is WEFT_ELIMIT, found before
 * more than max + 64 KiB is held (a regular file's size is checked before
 * reading). what names the kind of file in that message ("a .plan file").
 * *out and *len are written only on success. */
weft_err weft__file_read(const char *path, size_t max, const char *what, char **out, size_t *len,
                         weft_diag *d);

/* Records "PATH: cannot read: strerror(err)" as WEFT_EIO and returns
 * WEFT_EIO; err is the errno a failed read left. */
weft_err weft__file_read_error(const char *path, int err, weft_diag *d);

#endif
