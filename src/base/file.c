/* Reading a file a user named (see file.h). */
#include "base/file.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "base/alloc.h"

/* What a non-regular file (a pipe) is first read into; it doubles. */
#define FILE_FIRST_BYTES ((size_t)64 << 10)

/* Opens path and fstat()s the opened file. */
static weft_err open_stat(const char *path, FILE **out, struct stat *st, weft_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        return weft_diag_set(d, err == ENOENT ? WEFT_ENOENT : WEFT_EIO, "%s: cannot open: %s", path,
                             strerror(err));
    }
    weft_err e;
    if (fstat(fileno(f), st) != 0) {
        e = weft_diag_set(d, WEFT_EIO, "%s: cannot stat: %s", path, strerror(errno));
        goto close_file;
    }
    /* fopen accepts a directory on Linux; reading it then fails with
     * EISDIR, which would read "Is a directory" after "cannot read". */
    if (S_ISDIR(st->st_mode)) {
        e = weft_diag_set(d, WEFT_EIO, "%s: is a directory", path);
        goto close_file;
    }
    *out = f;
    return WEFT_OK;
close_file:
    fclose(f);
    return e;
}

weft_err weft__file_open(const char *path, FILE **out, weft_diag *d)
{
    struct stat st;
    return open_stat(path, out, &st, d);
}

weft_err weft__file_read_error(const char *path, int err, weft_diag *d)
{
    return weft_diag_set(d, WEFT_EIO, "%s: cannot read: %s", path, strerror(err));
}

static weft_err too_large(const char *path, size_t max, const char *what, weft_diag *d)
{
    if (max % ((size_t)1 << 20) == 0)
        return weft_diag_set(d, WEFT_ELIMIT, "%s: larger than %zu MiB, the limit for %s", path,
                             max >> 20, what);
    return weft_diag_set(d, WEFT_ELIMIT, "%s: larger than %zu bytes, the limit for %s", path, max,
                         what);
}

static weft_err no_memory(const char *path, size_t bytes, weft_diag *d)
{
    return weft_diag_set(d, WEFT_ENOMEM, "%s: out of memory reading %zu bytes", path, bytes);
}

weft_err weft__file_read(const char *path, size_t max, const char *what, char **out, size_t *len,
                         weft_diag *d)
{
    FILE *f = NULL;
    struct stat st;
    weft_err e = open_stat(path, &f, &st, d);
    if (e)
        return e;
    bool regular = S_ISREG(st.st_mode) && st.st_size >= 0;
    if (regular && (uintmax_t)st.st_size > max) {
        e = too_large(path, max, what, d);
        goto close_file;
    }
    /* A regular file's size is a hint (it may grow or shrink while it is
     * read): one byte more than it, so that the first read already meets
     * the end, and one for the NUL. */
    size_t cap =
        regular && (uintmax_t)st.st_size < SIZE_MAX - 2 ? (size_t)st.st_size + 2 : FILE_FIRST_BYTES;
    size_t n = 0;
    char *buf = weft__malloc(cap);
    if (!buf) {
        e = no_memory(path, cap, d);
        goto close_file;
    }
    /* The block never grows past max + 2 (max bytes, one over to see that
     * there are more, and the NUL), so an endless input costs at most that
     * before it is refused. n <= max at the top of the loop. */
    size_t ceiling = max < SIZE_MAX - 2 ? max + 2 : SIZE_MAX;
    for (;;) {
        if (cap - n < 2) {
            size_t ncap = cap <= ceiling / 2 ? cap * 2 : ceiling;
            char *nbuf = weft__realloc(buf, ncap);
            if (!nbuf) {
                e = no_memory(path, ncap, d);
                goto free_buf;
            }
            buf = nbuf;
            cap = ncap;
        }
        size_t want = cap - n - 1;
        size_t got = fread(buf + n, 1, want, f);
        int err = errno;
        n += got;
        if (n > max) {
            e = too_large(path, max, what, d);
            goto free_buf;
        }
        if (got == want)
            continue;
        if (ferror(f)) {
            e = weft__file_read_error(path, err, d);
            goto free_buf;
        }
        break;
    }
    buf[n] = '\0';
    fclose(f);
    *out = buf;
    *len = n;
    return WEFT_OK;
free_buf:
    weft__free(buf);
close_file:
    fclose(f);
    return e;
}
