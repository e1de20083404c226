/* Reading an import's input file. See import_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"
#include "topo/import_internal.h"

weft_err weft__read_whole_file(const char *path, char **out, size_t *len, weft_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return weft_diag_set(d, WEFT_ENOENT, "%s: no such file", path);
        return weft_diag_set(d, WEFT_EIO, "%s: cannot open: %s", path, strerror(errno));
    }
    weft_err e = WEFT_OK;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        e = weft_diag_set(d, WEFT_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto close_file;
    }
    if (S_ISDIR(st.st_mode)) {
        e = weft_diag_set(d, WEFT_EIO, "%s: is a directory", path);
        goto close_file;
    }
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > WEFT__IMPORT_MAX_BYTES) {
        e = weft_diag_set(d, WEFT_ELIMIT, "%s: larger than %zu MiB", path,
                          WEFT__IMPORT_MAX_BYTES >> 20);
        goto close_file;
    }
    /* The size is a hint (0 for a pipe); the loop reads whatever is there up
     * to the limit. */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
    char *buf = weft__malloc(cap);
    if (!buf) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        goto close_file;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > WEFT__IMPORT_MAX_BYTES) {
                e = weft_diag_set(d, WEFT_ELIMIT, "%s: larger than %zu MiB", path,
                                  WEFT__IMPORT_MAX_BYTES >> 20);
                goto free_buf;
            }
            char *nb = weft__realloc(buf, cap * 2);
            if (!nb) {
                e = weft_diag_code(d, WEFT_ENOMEM);
                goto free_buf;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        e = weft_diag_set(d, WEFT_EIO, "%s: read error", path);
        goto free_buf;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    fclose(f);
    return WEFT_OK;
free_buf:
    weft__free(buf);
close_file:
    fclose(f);
    return e;
}
